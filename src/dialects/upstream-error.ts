/**
 * Reading an upstream's error, whatever its envelope, and recognising the one error the proxy
 * treats apart: the prompt did not fit the model's context. Dialects share this so that an
 * OpenAI-style error relayed by OpenRouter, or Anthropic text inside an OpenAI envelope, is
 * recognised wherever it arrives.
 */
import { ProxyError } from '../core/errors.js';
import type { UpstreamError } from './types.js';
import { asObject, asString, parseJson, type JsonObject } from './wire-read.js';

/**
 * Context-length messages as providers word them (each line names who says it):
 * - OpenAI, DeepSeek, vLLM, Groq, Mistral: "This model's maximum context length is 128000 tokens..."
 * - OpenRouter: "This endpoint's maximum context length is 200000 tokens..."
 * - Anthropic: "prompt is too long: 210000 tokens > 200000 maximum", and
 *   "input length and `max_tokens` exceed context limit: ..."
 * - OpenAI (newer), Responses: "Your input exceeds the context window of this model."
 * - vLLM (older): "... is longer than the maximum model length of 32768"
 * - Gemini: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
 * - llama.cpp: "the request exceeds the available context size"
 */
const OVERFLOW_TEXT = [
  /maximum context length/i,
  /prompt is too long/i,
  /exceeds? (?:the )?context (?:limit|window|length)/i,
  /exceeds? the available context size/i,
  /longer than the maximum (?:model|context) length/i,
  /input token count .*exceeds the maximum number of tokens/i,
  /context[ _]length[ _]exceeded/i,
];

const OVERFLOW_CODES = new Set(['context_length_exceeded', 'exceed_context_size_error']);

export function isContextOverflow(message: string, code?: string, extraText?: string): boolean {
  if (code !== undefined && OVERFLOW_CODES.has(code)) return true;
  for (const re of OVERFLOW_TEXT) {
    if (re.test(message)) return true;
    if (extraText !== undefined && re.test(extraText)) return true;
  }
  return false;
}

const MAX_MESSAGE = 2000;

/**
 * Reads an error object: `{message, type, code, param}` as OpenAI, DeepSeek and vLLM nest it under
 * `error`, as Cerebras and SGLang send it flat, or Anthropic's `{type:"error", error:{type, message}}`.
 * OpenRouter's numeric `code` becomes text; its `metadata.raw` (the provider's own error) is searched
 * for context-length wording too.
 */
export function upstreamErrorFromObject(err: JsonObject, fallback: string): UpstreamError {
  const message = asString(err.message) ?? fallback;
  const type = asString(err.type);
  const rawCode = err.code;
  const code = typeof rawCode === 'string' ? rawCode : typeof rawCode === 'number' ? String(rawCode) : undefined;
  const metadata = asObject(err.metadata);
  const raw = metadata === undefined ? undefined : metadata.raw;
  const extra = raw === undefined ? undefined : typeof raw === 'string' ? raw : JSON.stringify(raw);
  const out: UpstreamError = { message, contextOverflow: isContextOverflow(message, code, extra) };
  if (type !== undefined) out.type = type;
  if (code !== undefined) out.code = code;
  return out;
}

/** An error from a parsed JSON value: `{error:{...}}`, `{error:"text"}`, or a flat error object. */
export function upstreamErrorFromJson(value: unknown, fallback: string): UpstreamError {
  const top = asObject(value);
  if (top === undefined) return { message: fallback, contextOverflow: isContextOverflow(fallback) };
  const nested = asObject(top.error);
  if (nested !== undefined) return upstreamErrorFromObject(nested, fallback);
  const text = asString(top.error);
  if (text !== undefined) return { message: text, contextOverflow: isContextOverflow(text) };
  return upstreamErrorFromObject(top, fallback);
}

/** An HTTP error body, JSON or not (a gateway's HTML page is kept as text, cut to 2000 chars). */
export function upstreamErrorFromBody(status: number, bodyText: string): UpstreamError {
  const trimmed = bodyText.trim();
  const fallback = trimmed.length > 0 ? trimmed.slice(0, MAX_MESSAGE) : `HTTP ${status}`;
  const parsed = parseJson(trimmed);
  if (parsed === undefined) return { message: fallback, contextOverflow: isContextOverflow(fallback) };
  return upstreamErrorFromJson(parsed.value, fallback);
}

/**
 * The error the proxy raises for an upstream's error: `context_length_exceeded` (400) when the
 * prompt did not fit, else `upstream_error` (502) naming the upstream's status and message.
 */
export function toProxyError(status: number, err: UpstreamError): ProxyError {
  if (err.contextOverflow) return new ProxyError('context_length_exceeded', { detail: err.message });
  return new ProxyError('upstream_error', { status, detail: err.message });
}
