/**
 * Responses reply -> NeutralReply. `replyFromOutput` is the one conversion: a non-stream body's
 * `output` goes through it, and so do the items the stream decoder assembled.
 *
 * - Text: every `output_text` (and `refusal`) part of the message items, in order.
 * - Thinking: the summary parts of every reasoning item, joined by a blank line ("a summary of
 *   several parts goes back joined as one": docs/decisions.md, Responses keep_reasoning); empty parts
 *   are left out.
 * - Blocks: when the route keeps reasoning, each reasoning item that carries `encrypted_content`,
 *   kept as given, with `before_call` = the calls before it. Without encrypted content an item can
 *   not be given back under `store: false`, so none is kept.
 * - Calls: `function_call` items; the call's id is its `call_id` (what the output item names).
 */
import { ProxyError } from '../../core/errors.js';
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, OpaqueBlock, ToolCall, Usage } from '../../core/types.js';
import type { UpstreamError } from '../types.js';
import { isContextOverflow, toProxyError, upstreamErrorFromObject } from '../upstream-error.js';
import { asArray, asNonEmptyString, asNumber, asObject, asString, type JsonObject } from '../wire-read.js';

export const THINKING_JOIN = '\n\n';

export function usageFrom(raw: unknown): Usage | undefined {
  const u = asObject(raw);
  if (u === undefined) return undefined;
  const input = asObject(u.input_tokens_details);
  const output = asObject(u.output_tokens_details);
  const out: Usage = {};
  const set = (key: keyof Usage, value: number | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('prompt_tokens', asNumber(u.input_tokens));
  set('cached_tokens', asNumber(input?.cached_tokens));
  set('cache_write_tokens', asNumber(input?.cache_write_tokens));
  set('completion_tokens', asNumber(u.output_tokens));
  set('reasoning_tokens', asNumber(output?.reasoning_tokens));
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `completed` ends as its calls say; `incomplete` names why; `failed` is an error; else unknown. */
export function finishFrom(status: string | undefined, incompleteReason: string | undefined, hasCalls: boolean): FinishReason | null {
  switch (status) {
    case 'completed':
      return hasCalls ? 'tool_calls' : 'stop';
    case 'incomplete':
      if (incompleteReason === 'max_output_tokens') return 'length';
      if (incompleteReason === 'content_filter') return 'content_filter';
      return hasCalls ? 'tool_calls' : 'stop';
    case 'failed':
      return 'error';
    default:
      return null;
  }
}

/** The non-empty summary texts of a reasoning item, in order. */
export function summaryTexts(item: JsonObject): string[] {
  const out: string[] = [];
  for (const raw of asArray(item.summary) ?? []) {
    const text = asString(asObject(raw)?.text);
    if (text !== undefined && text.length > 0) out.push(text);
  }
  return out;
}

/** The text of a message item: its output_text parts' text and its refusals. */
export function messageText(item: JsonObject): string {
  let out = '';
  for (const raw of asArray(item.content) ?? []) {
    const part = asObject(raw);
    out += asString(part?.text) ?? asString(part?.refusal) ?? '';
  }
  return out;
}

export interface OutputParts {
  output: unknown[];
  status: string | undefined;
  incompleteReason: string | undefined;
  usage: Usage | undefined;
  model: string | undefined;
}

/**
 * A finished reasoning item as the block a request that keeps reasoning keeps (see the file
 * comment): one with encrypted content, which the upstream gives only when the request asked, on a
 * route that does not turn keeping off.
 */
export function reasoningBlock(item: JsonObject, route: DialectRoute, callsBefore: number): OpaqueBlock | undefined {
  if (route.keepReasoning === false || asString(item.encrypted_content) === undefined) return undefined;
  return { kind: 'responses.reasoning', origin: { provider: route.provider, model: route.model }, data: item, before_call: callsBefore };
}

export function replyFromOutput(parts: OutputParts, route: DialectRoute): NeutralReply {
  let content = '';
  const thinking: string[] = [];
  const calls: ToolCall[] = [];
  const blocks: OpaqueBlock[] = [];
  for (const raw of parts.output) {
    const item = asObject(raw);
    if (item === undefined) continue;
    if (item.type === 'message') content += messageText(item);
    else if (item.type === 'function_call') {
      calls.push({ id: asString(item.call_id) ?? asString(item.id) ?? `call_${calls.length}`, name: asString(item.name) ?? '', arguments: asString(item.arguments) ?? '' });
    } else if (item.type === 'reasoning') {
      thinking.push(...summaryTexts(item));
      const block = reasoningBlock(item, route, calls.length);
      if (block !== undefined) blocks.push(block);
    }
  }
  const reply: NeutralReply = { content: content.length > 0 ? content : null, finish_reason: finishFrom(parts.status, parts.incompleteReason, calls.length > 0) };
  if (thinking.length > 0) reply.thinking = thinking.join(THINKING_JOIN);
  if (blocks.length > 0) reply.blocks = blocks;
  if (calls.length > 0) reply.tool_calls = calls;
  if (parts.usage !== undefined) reply.usage = parts.usage;
  if (parts.model !== undefined) reply.model = parts.model;
  return reply;
}

/** The parts of a `response` object (the body, or the one inside a terminal event). */
export function partsOfResponse(resp: JsonObject): OutputParts {
  return {
    output: asArray(resp.output) ?? [],
    status: asString(resp.status),
    incompleteReason: asString(asObject(resp.incomplete_details)?.reason),
    usage: usageFrom(resp.usage),
    model: asNonEmptyString(resp.model),
  };
}

/** A failed response's `error` ({code, message}), or the `error` event's own fields. */
export function errorOf(err: JsonObject, fallback: string): UpstreamError {
  const nested = asObject(err.error);
  if (nested !== undefined) return upstreamErrorFromObject(nested, fallback);
  const message = asString(err.message) ?? fallback;
  const code = asString(err.code);
  const out: UpstreamError = { message, contextOverflow: isContextOverflow(message, code) };
  if (code !== undefined) out.code = code;
  return out;
}

export function decodeReply(status: number, body: unknown, route: DialectRoute): NeutralReply {
  const top = asObject(body);
  if (top === undefined) throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the body is not a JSON object' });
  const error = asObject(top.error);
  if (error !== undefined && (top.status === 'failed' || top.output === undefined)) {
    throw toProxyError(status, errorOf({ error }, `HTTP ${status}`));
  }
  if (asArray(top.output) === undefined) throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the reply has no output' });
  return replyFromOutput(partsOfResponse(top), route);
}
