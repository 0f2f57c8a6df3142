/** A reply the log holds, as the stream deltas it came as: how an answer from the log is streamed to any wire. */
import type { NeutralReply } from '../core/types.js';
import type { StreamDelta } from './types.js';

export function replyDeltas(reply: NeutralReply): StreamDelta[] {
  const out: StreamDelta[] = [];
  if (reply.thinking !== undefined && reply.thinking !== '') out.push({ type: 'thinking', text: reply.thinking });
  if (reply.content !== null && reply.content !== '') out.push({ type: 'content', text: reply.content });
  (reply.tool_calls ?? []).forEach((c, index) => {
    out.push({ type: 'tool_call_start', index, id: c.id, name: c.name });
    out.push({ type: 'tool_call_args', index, text: c.arguments });
  });
  if (reply.finish_reason !== null) out.push({ type: 'finish', reason: reply.finish_reason });
  return out;
}

