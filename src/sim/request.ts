/**
 * Reads a Chat Completions request body on its own terms (not through src/dialects): JSON,
 * the fields the simulator uses, and the shape checks every OpenAI-compatible server makes.
 * Throws SimError (400) naming the field at fault.
 */
import { invalidRequest, parseJsonObject } from './errors.js';

/** A message as it came in; only `role` is checked here, the rest is read where it is used. */
export interface WireMessage {
  role: string;
  [field: string]: unknown;
}

export interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatRequest {
  model: string;
  messages: WireMessage[];
  tools: unknown[];
  stream: boolean;
  includeUsage: boolean;
  /** Body `prompt_cache_key`, when a non-empty string. */
  promptCacheKey: string | null;
  /** The whole body, for the fields only one mode reads (top-level `cache_control`, Google's `extra_body`). */
  body: Record<string, unknown>;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

export function parseChatRequest(text: string): ChatRequest {
  const body = parseJsonObject(text);
  const { model, messages, tools, stream, stream_options: streamOptions, prompt_cache_key: key } = body;
  if (typeof model !== 'string' || model === '') throw invalidRequest('You must provide a model parameter.', 'model');
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidRequest("'messages' must be a non-empty array.", 'messages');
  }
  messages.forEach((msg: unknown, i) => {
    if (!isObject(msg)) throw invalidRequest(`messages[${i}] must be an object.`, `messages.[${i}]`);
    if (typeof msg.role !== 'string' || !ROLES.has(msg.role)) {
      throw invalidRequest(`messages[${i}].role ${JSON.stringify(msg.role)} is not one of system, developer, user, assistant, tool.`, `messages.[${i}].role`);
    }
  });
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) throw invalidRequest("'tools' must be an array.", 'tools');
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw invalidRequest("'stream' must be a boolean.", 'stream');
  return {
    model,
    messages: messages as WireMessage[],
    tools: (tools as unknown[] | null | undefined) ?? [],
    stream: stream === true,
    includeUsage: isObject(streamOptions) && streamOptions.include_usage === true,
    promptCacheKey: typeof key === 'string' && key !== '' ? key : null,
    body,
  };
}

/**
 * The tool calls of an assistant message, checked for shape; `index` names the message in errors.
 */
export function toolCallsOf(msg: WireMessage, index: number): WireToolCall[] {
  const calls = msg.tool_calls;
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw invalidRequest(`messages[${index}].tool_calls must be an array.`, `messages.[${index}].tool_calls`);
  return calls.map((call: unknown, j) => {
    const param = `messages.[${index}].tool_calls.[${j}]`;
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function)) {
      throw invalidRequest(`${param} must have a string id and a function object.`, param);
    }
    const { name, arguments: args } = call.function;
    if (typeof name !== 'string' || typeof args !== 'string') {
      throw invalidRequest(`${param}.function must have a string name and string arguments.`, `${param}.function`);
    }
    return { id: call.id, name, arguments: args };
  });
}

/** The text of a content value: a string, or the text parts of an array (images as markers). */
export function contentText(content: unknown, imageMarker: (url: string) => string = () => ''): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content as unknown[]) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string') out += part.text;
    else if (isObject(part.image_url) && typeof part.image_url.url === 'string') out += imageMarker(part.image_url.url);
  }
  return out;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
