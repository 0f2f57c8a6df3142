/**
 * Ollama `/api/chat` reply -> NeutralReply. `replyFromParts` is the one conversion: a non-stream
 * body goes through it, and so does what the stream decoder assembles from its NDJSON lines.
 *
 * Usage: `prompt_tokens` is `prompt_eval_count` (current runners count cached tokens in it),
 * `completion_tokens` is `eval_count`, and `prompt_eval_ms` comes from `prompt_eval_duration`
 * (ns), which covers only the tokens evaluated: it is the cache figure this wire gives
 * (docs/decisions.md, Ollama prompt-eval as the cache check).
 * Ollama reports no cached count, so `cached_tokens` stays absent (unknown, not 0).
 */
import { canonicalDigest } from '../../core/canonical.js';
import { ProxyError } from '../../core/errors.js';
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, ToolCall, Usage } from '../../core/types.js';
import type { DecodeContext, UpstreamError } from '../types.js';
import { isContextOverflow, toProxyError, upstreamErrorFromBody, upstreamErrorFromJson } from '../upstream-error.js';
import { asArray, asNonEmptyString, asNumber, asObject, asString, parseJson, type JsonObject } from '../wire-read.js';

/**
 * A call Ollama did not name gets `call_<position>_<12 hex of the digest of the request's id seed,
 * its name and arguments>`: the same for the stream and the whole reply, so the log and the client
 * agree. The position keeps two equal calls of one reply apart; the id seed (the request's digest,
 * `DecodeContext.idSeed`) keeps equal calls of different replies apart, which a client, or the
 * Anthropic wire the conversation may move to, needs: there two calls with one id are a 400. An
 * identical retry has the same seed, so it gets the same ids. Without a seed the digest covers the
 * name and arguments only.
 */
export function ollamaCallId(position: number, name: string, args: unknown, seed: string | undefined): string {
  const what = seed === undefined ? { name, arguments: args ?? null } : { seed, name, arguments: args ?? null };
  return `call_${position}_${canonicalDigest(what).slice(0, 12)}`;
}

/** Arguments as text: an object (Ollama's form) is serialised once, in its wire key order. */
function argumentsText(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (raw === undefined || raw === null) return '{}';
  return JSON.stringify(raw);
}

/** The calls of one message chunk; `first` is the position of the first of them in the reply. */
export function callsFrom(raw: unknown, first: number, seed: string | undefined): ToolCall[] {
  const out: ToolCall[] = [];
  for (const item of asArray(raw) ?? []) {
    const call = asObject(item);
    const fn = asObject(call?.function);
    if (call === undefined || fn === undefined) continue;
    const name = asString(fn.name) ?? '';
    const position = first + out.length;
    out.push({ id: asNonEmptyString(call.id) ?? ollamaCallId(position, name, fn.arguments, seed), name, arguments: argumentsText(fn.arguments) });
  }
  return out;
}

/** `done_reason` "length" is a cut reply; anything else ended it ("stop", "load", "unload"). */
export function finishReasonFrom(doneReason: unknown, hasCalls: boolean): FinishReason {
  if (asString(doneReason) === 'length') return 'length';
  return hasCalls ? 'tool_calls' : 'stop';
}

export function usageFrom(chunk: JsonObject): Usage | undefined {
  const out: Usage = {};
  const prompt = asNumber(chunk.prompt_eval_count);
  const completion = asNumber(chunk.eval_count);
  const evalNs = asNumber(chunk.prompt_eval_duration);
  if (prompt !== undefined) out.prompt_tokens = prompt;
  if (completion !== undefined) out.completion_tokens = completion;
  // To the microsecond: enough for a sub-second check, and stable in the log.
  if (evalNs !== undefined) out.prompt_eval_ms = Math.round(evalNs / 1000) / 1000;
  return Object.keys(out).length > 0 ? out : undefined;
}

export interface ReplyParts {
  content: string;
  thinking: string;
  calls: ToolCall[];
  /** The `done: true` object, or undefined when the reply never finished. */
  final: JsonObject | undefined;
  model: string | undefined;
}

export function replyFromParts(parts: ReplyParts): NeutralReply {
  const reply: NeutralReply = {
    content: parts.content.length > 0 ? parts.content : null,
    finish_reason: parts.final === undefined ? null : finishReasonFrom(parts.final.done_reason, parts.calls.length > 0),
  };
  if (parts.thinking.length > 0) reply.thinking = parts.thinking;
  if (parts.calls.length > 0) reply.tool_calls = parts.calls;
  const usage = parts.final === undefined ? undefined : usageFrom(parts.final);
  if (usage !== undefined) reply.usage = usage;
  if (parts.model !== undefined) reply.model = parts.model;
  return reply;
}

export function decodeReply(status: number, body: unknown, route: DialectRoute, ctx?: DecodeContext): NeutralReply {
  const top = asObject(body);
  if (top === undefined) throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the body is not a JSON object' });
  const error = asString(top.error);
  if (error !== undefined) throw toProxyError(status, errorFromText(error));
  const message = asObject(top.message);
  if (message === undefined) throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the reply has no message' });
  return replyFromParts({
    content: asString(message.content) ?? '',
    thinking: asString(message.thinking) ?? '',
    calls: callsFrom(message.tool_calls, 0, ctx?.idSeed),
    final: top.done === true ? top : undefined,
    model: asNonEmptyString(top.model),
  });
}

/** Ollama's own wording when `shift: false` meets a full context (no counts given). */
const OLLAMA_OVERFLOW = /longer than the context length/i;

/**
 * The text of Ollama's `{"error":"..."}`. With `truncate: false` an over-long prompt is a 400 whose
 * text is itself llama-server's JSON error (`{"error":{"code":400,"message":"request (8889 tokens)
 * exceeds the available context size (4096 tokens), ...","type":"exceed_context_size_error"}}`),
 * so that JSON is read when the text holds one.
 */
export function errorFromText(text: string): UpstreamError {
  const nested = parseJson(text.trim());
  if (nested !== undefined && asObject(nested.value) !== undefined) {
    const err = upstreamErrorFromJson(nested.value, text);
    return err.contextOverflow || !OLLAMA_OVERFLOW.test(err.message) ? err : { ...err, contextOverflow: true };
  }
  return { message: text, contextOverflow: isContextOverflow(text) || OLLAMA_OVERFLOW.test(text) };
}

/** An HTTP error body: Ollama's `{"error":"text"}`, or anything a proxy in front of it sent. */
export function decodeError(status: number, bodyText: string): UpstreamError {
  const parsed = parseJson(bodyText.trim());
  const text = parsed === undefined ? undefined : asString(asObject(parsed.value)?.error);
  return text === undefined ? upstreamErrorFromBody(status, bodyText) : errorFromText(text);
}
