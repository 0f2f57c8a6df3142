/**
 * What the proxy answers a client of Anthropic's wire (Claude Code, the official SDK): a
 * NeutralReply as a `message` object, StreamDeltas as Messages SSE events, errors as
 * `{"type":"error","error":{type,message}}` (anthropic-sdk-typescript `messages.ts`,
 * `RawMessageStreamEvent`; `shared.ts` `ErrorType`). The simulator answers in the same shapes.
 *
 * Thinking: a signed block (`anthropic.thinking`, `anthropic.redacted_thinking`) goes to the client
 * as the upstream gave it. Reasoning of any other origin (a chat model's text, OpenRouter's details,
 * Responses' encrypted items) goes as a thinking block with an empty signature: it is shown, never
 * passed off as Anthropic's, and the client's echo of it is ignored anyway.
 */
import type { ProxyError } from '../../core/errors.js';
import type { FinishReason, NeutralReply, Usage } from '../../core/types.js';
import { sseJson } from '../sse-writer.js';
import type { ReplyMeta } from '../types.js';
import { ANTHROPIC_KINDS, assistantBlocks } from './conversation.js';
import type { WireContentBlock, WireStopReason, WireUsage } from './wire-types.js';

/** The error type an Anthropic client reads for an HTTP status (`shared.ts` `ErrorType`). */
export function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** The error object of an error body and of a stream's `error` event. */
export function wireError(status: number, message: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type: errorTypeFor(status), message } };
}

export function renderError(err: ProxyError): WireEvent {
  return wireError(err.status, err.message);
}

/** A stream event's data: its `type` and its fields. */
export type WireEvent = { type: string } & Record<string, unknown>;

/** One SSE event, its `event:` line naming its data's `type`, as the API writes them. */
export function messageEvent(data: WireEvent): string {
  return sseJson(data, data.type);
}

export function stopReasonFor(reason: FinishReason | null, hasCalls: boolean): WireStopReason {
  if (reason === 'length') return 'max_tokens';
  if (reason === 'content_filter') return 'refusal';
  if (reason === 'tool_calls') return 'tool_use';
  if (reason === 'stop') return 'end_turn';
  return hasCalls ? 'tool_use' : 'end_turn';
}

/**
 * Neutral usage as the API reports it: `input_tokens` is the prompt after the cache, the three
 * together the whole prompt (usage.ts reads it back). A cache figure the upstream did not report
 * is null (the SDK's type allows it); the counts the SDK requires are 0 when unknown.
 */
export function renderUsage(usage: Usage | undefined): WireUsage {
  const read = usage?.cached_tokens;
  const written = usage?.cache_write_tokens;
  const input = Math.max(0, (usage?.prompt_tokens ?? 0) - (read ?? 0) - (written ?? 0));
  const out: WireUsage = { input_tokens: input, cache_creation_input_tokens: written ?? null, cache_read_input_tokens: read ?? null };
  const oneHour = usage?.cache_write_1h_tokens;
  if (written !== undefined && oneHour !== undefined) out.cache_creation = { ephemeral_5m_input_tokens: written - oneHour, ephemeral_1h_input_tokens: oneHour };
  out.output_tokens = usage?.completion_tokens ?? 0;
  if (usage?.reasoning_tokens !== undefined) out.output_tokens_details = { thinking_tokens: usage.reasoning_tokens };
  return out;
}

/** The reply's content blocks: signed blocks where they stood, else its thinking text unsigned first; text; tool_use. */
export function replyContent(reply: NeutralReply): WireContentBlock[] {
  const signed = (reply.blocks ?? []).filter((b) => ANTHROPIC_KINDS.has(b.kind));
  const content = assistantBlocks({ role: 'assistant', content: reply.content, blocks: signed, tool_calls: reply.tool_calls ?? [] });
  const thinking = reply.thinking ?? '';
  if (signed.length === 0 && thinking !== '') content.unshift({ type: 'thinking', thinking, signature: '' });
  return content;
}

export function messageId(meta: ReplyMeta): string {
  return `msg_${meta.id}`;
}

export function renderMessage(reply: NeutralReply, meta: ReplyMeta): Record<string, unknown> {
  return {
    id: messageId(meta),
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: replyContent(reply),
    stop_reason: stopReasonFor(reply.finish_reason, (reply.tool_calls ?? []).length > 0),
    stop_sequence: null,
    usage: renderUsage(reply.usage),
  };
}
