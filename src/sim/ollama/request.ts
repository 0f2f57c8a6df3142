/**
 * Reads an Ollama `/api/chat` body on its own terms (not through src/dialects, so a proxy bug is
 * not cancelled by shared code), with the checks Ollama's Go decoder makes: `content` is a string,
 * tool-call `arguments` an object, `images` base64 strings. Errors are Ollama's `{"error":"..."}`.
 */
import { isObject } from '../request.js';

/** An error as Ollama sends it: a status and `{"error": text}`. */
export class OllamaError extends Error {
  readonly status: number;
  /** What the simulator records as the error code. */
  readonly code: string;

  constructor(status: number, message: string, code = 'invalid_request') {
    super(message);
    this.name = 'OllamaError';
    this.status = status;
    this.code = code;
  }

  body(): { error: string } {
    return { error: this.message };
  }
}

export interface OllamaCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface OllamaWireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  thinking: string | null;
  images: string[];
  toolCalls: OllamaCall[];
  toolName: string | null;
}

export interface OllamaRequest {
  model: string;
  messages: OllamaWireMessage[];
  tools: unknown[];
  /** Ollama streams unless told `stream: false`. */
  stream: boolean;
  /** false turns thinking off; absent or anything else leaves the model its default. */
  think: unknown;
  numCtx: number | null;
  /** null: keep the model loaded; 0: unload it after the reply. */
  keepAliveMs: number | null;
  /** true (Ollama's default): a prompt over num_ctx loses its oldest messages instead of failing. */
  truncate: boolean;
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Ollama's default keep_alive. */
export const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000;

/** Go's json error wording for a field of the wrong type. */
function wrongType(found: string, field: string, want: string): OllamaError {
  return new OllamaError(400, `json: cannot unmarshal ${found} into Go struct field ${field} of type ${want}`);
}

function kind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'object' : typeof value;
}

export function parseOllamaChat(text: string): OllamaRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new OllamaError(400, `invalid character in request body: ${(err as Error).message}`);
  }
  if (!isObject(body)) throw wrongType(kind(body), 'ChatRequest', 'api.ChatRequest');
  if (typeof body.model !== 'string' || body.model === '') throw new OllamaError(400, 'model is required');
  if (!Array.isArray(body.messages)) throw wrongType(kind(body.messages), 'ChatRequest.messages', '[]api.Message');
  const options = isObject(body.options) ? body.options : {};
  const numCtx = options.num_ctx;
  if (numCtx !== undefined && (typeof numCtx !== 'number' || !Number.isInteger(numCtx) || numCtx <= 0)) {
    throw new OllamaError(400, 'option "num_ctx" must be of type integer');
  }
  return {
    model: body.model,
    messages: (body.messages as unknown[]).map(readMessage),
    tools: Array.isArray(body.tools) ? body.tools : [],
    stream: body.stream !== false,
    think: body.think,
    numCtx: numCtx ?? null,
    keepAliveMs: keepAlive(body.keep_alive),
    truncate: body.truncate !== false,
  };
}

function readMessage(raw: unknown, i: number): OllamaWireMessage {
  if (!isObject(raw)) throw wrongType(kind(raw), `ChatRequest.messages.${i}`, 'api.Message');
  if (typeof raw.role !== 'string' || !ROLES.has(raw.role)) throw new OllamaError(400, `invalid role "${String(raw.role)}" in messages[${i}]`);
  const content = raw.content ?? '';
  if (typeof content !== 'string') throw wrongType(kind(content), 'ChatRequest.messages.content', 'string');
  const images = raw.images ?? [];
  if (!Array.isArray(images) || images.some((img) => typeof img !== 'string' || !BASE64.test(img))) {
    throw new OllamaError(400, `illegal base64 data in messages[${i}].images`);
  }
  const calls = raw.tool_calls ?? [];
  if (!Array.isArray(calls)) throw wrongType(kind(calls), 'ChatRequest.messages.tool_calls', '[]api.ToolCall');
  return {
    role: raw.role as OllamaWireMessage['role'],
    content,
    thinking: typeof raw.thinking === 'string' ? raw.thinking : null,
    images: images as string[],
    toolCalls: calls.map((call: unknown) => {
      const fn = isObject(call) && isObject(call.function) ? call.function : {};
      if (!isObject(fn.arguments)) {
        throw wrongType(kind(fn.arguments), 'ChatRequest.messages.tool_calls.function.arguments', 'api.ToolCallFunctionArguments');
      }
      return { name: typeof fn.name === 'string' ? fn.name : '', arguments: fn.arguments };
    }),
    toolName: typeof raw.tool_name === 'string' ? raw.tool_name : null,
  };
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Ollama's Duration: a number is seconds, a string a Go duration ("30m", "1h30m"); negative keeps it loaded. */
export function keepAlive(raw: unknown): number | null {
  if (raw === undefined || raw === null) return DEFAULT_KEEP_ALIVE_MS;
  if (typeof raw === 'number') return raw < 0 ? null : raw * 1000;
  if (typeof raw !== 'string') throw wrongType(kind(raw), 'ChatRequest.keep_alive', 'api.Duration');
  const match = /^(-?)((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)$/.exec(raw);
  if (match === null) {
    if (raw === '0') return 0;
    throw new OllamaError(400, `time: invalid duration "${raw}"`);
  }
  let ms = 0;
  for (const part of (match[2] as string).matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(part[1]) * (UNIT_MS[part[2] as string] as number);
  return match[1] === '-' ? null : ms;
}
