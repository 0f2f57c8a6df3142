/**
 * Client messages to neutral ones. The leading system and developer messages are the session's
 * system prompt; assistant messages keep only what every client keeps (content and tool calls):
 * reasoning the client echoes is ignored, the log's copy is what goes upstream.
 */
import type { AssistantMessage, ContentPart, NeutralMessage, RequestParams, ToolSpec } from '../../core/types.js';
import { KNOWN_FIELDS, type ChatMessage, type ChatRequest, type ChatTool } from './inbound-parse.js';
import type { ImageSink } from '../types.js';
import { extraFields } from '../extra-fields.js';
import { eachOnce, ListResults } from '../../core/list-lineage.js';

export interface Conversation {
  system: string | undefined;
  messages: NeutralMessage[];
}

/** `list` is the body's own list the messages were checked from: what the conversions are kept by. */
export function toConversation(messages: readonly ChatMessage[], images: ImageSink, list: readonly unknown[]): Conversation {
  let i = 0;
  const head: string[] = [];
  while (i < messages.length && (messages[i]!.role === 'system' || messages[i]!.role === 'developer')) {
    head.push(joinText((messages[i] as { content: unknown }).content));
    i++;
  }
  // An image is handed to this request's sink, every time: such a message is not kept.
  const out = eachOnce(CONVERTED, list, messages, i, (msg, index) => toNeutral(msg, index, images), (msg) => !hasImage(msg));
  return { system: head.length === 0 ? undefined : head.join('\n\n'), messages: out };
}

/**
 * The neutral message made of each message of a list: a request that resends a history converts
 * its new messages only (src/core/list-lineage.ts), and the session's view, holding the message it
 * matched, compares a resent one by identity. Frozen: one object serves every request that resends
 * the message.
 */
const CONVERTED = new ListResults<NeutralMessage | undefined>();

function hasImage(msg: ChatMessage): boolean {
  return msg.role === 'user' && typeof msg.content !== 'string' && msg.content.some((p) => p.type !== 'text');
}

function toNeutral(msg: ChatMessage, index: number, images: ImageSink): NeutralMessage {
  switch (msg.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: joinText(msg.content) };
    case 'tool':
      return { role: 'tool', tool_call_id: msg.tool_call_id, content: joinText(msg.content) };
    case 'assistant': {
      const content = msg.content === undefined || msg.content === null ? null : joinText(msg.content);
      const out: AssistantMessage = { role: 'assistant', content: content === '' && (msg.tool_calls?.length ?? 0) > 0 ? null : content };
      if (msg.tool_calls !== undefined && msg.tool_calls.length > 0) {
        out.tool_calls = msg.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      }
      return out;
    }
    case 'user': {
      if (typeof msg.content === 'string') return { role: 'user', content: msg.content };
      const parts: ContentPart[] = msg.content.map((p, j) =>
        p.type === 'text'
          ? { type: 'text', text: p.text }
          : images(p.image_url.url, p.image_url.detail, `messages[${index}].content[${j}].image_url.url`),
      );
      return { role: 'user', content: parts };
    }
  }
}

function joinText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? '').join('');
  return '';
}

/** The checked list itself: the same array for a client that resends its tools unchanged. */
export function toTools(tools: readonly ChatTool[]): ToolSpec[] {
  return tools as unknown as ToolSpec[];
}

/** The per-request parameters the window passes through (and the log records). */
export function toParams(body: ChatRequest): RequestParams {
  const p: RequestParams = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) p.max_tokens = maxTokens;
  if (body.temperature !== undefined && body.temperature !== null) p.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) p.top_p = body.top_p;
  if (body.stop !== undefined && body.stop !== null) p.stop = body.stop;
  if (body.seed !== undefined && body.seed !== null) p.seed = body.seed;
  if (body.tool_choice !== undefined && body.tool_choice !== null) p.tool_choice = body.tool_choice;
  if (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null) p.parallel_tool_calls = body.parallel_tool_calls;
  if (body.response_format !== undefined && body.response_format !== null) p.response_format = body.response_format;
  if (body.reasoning_effort !== undefined && body.reasoning_effort !== null) p.reasoning_effort = body.reasoning_effort;
  if (body.presence_penalty !== undefined && body.presence_penalty !== null) p.presence_penalty = body.presence_penalty;
  if (body.frequency_penalty !== undefined && body.frequency_penalty !== null) p.frequency_penalty = body.frequency_penalty;
  const extra = extraFields(body, KNOWN_FIELDS, 'openai-chat');
  if (extra !== undefined) p.extra = extra;
  return p;
}
