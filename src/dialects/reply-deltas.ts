/** A reply the log holds, as the stream deltas it came as: how an answer from the log is streamed to any wire. */
import type { NeutralReply } from '../core/types.js';
import type { StreamDelta } from './types.js';

/**
 * Thinking text first, then each opaque block where it stood among the calls (`before_call`: the
 * ones before any call go before the text), the text, and the calls.
 */
export function replyDeltas(reply: NeutralReply): StreamDelta[] {
  const out: StreamDelta[] = [];
  const calls = reply.tool_calls ?? [];
  const blocksAt = (k: number): StreamDelta[] =>
    (reply.blocks ?? []).filter((b) => Math.min(b.before_call ?? 0, calls.length) === k).map((block) => ({ type: 'block', block }));
  if (reply.thinking !== undefined && reply.thinking !== '') out.push({ type: 'thinking', text: reply.thinking });
  out.push(...blocksAt(0));
  if (reply.content !== null && reply.content !== '') out.push({ type: 'content', text: reply.content });
  calls.forEach((c, index) => {
    if (index > 0) out.push(...blocksAt(index));
    out.push({ type: 'tool_call_start', index, id: c.id, name: c.name });
    out.push({ type: 'tool_call_args', index, text: c.arguments });
  });
  if (calls.length > 0) out.push(...blocksAt(calls.length));
  if (reply.finish_reason !== null) out.push({ type: 'finish', reason: reply.finish_reason });
  return out;
}
