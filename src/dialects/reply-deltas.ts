/**
 * A reply the log holds, as the stream deltas it came as: how an answer from the log is streamed to
 * any wire. Responses' reasoning blocks come back where they stood among the calls, each after its
 * own summary, as a Responses upstream streamed them (thinking text between items joined by a blank
 * line, as its decoder joins it: decode-stream.ts).
 */
import type { NeutralReply, OpaqueBlock } from '../core/types.js';
import type { StreamDelta } from './types.js';

const JOIN = '\n\n';

export function replyDeltas(reply: NeutralReply): StreamDelta[] {
  const out: StreamDelta[] = [];
  const thinking = reply.thinking ?? '';
  const blocks = (reply.blocks ?? []).filter((b) => b.kind === 'responses.reasoning');
  const texts = blocks.map(summaryOf);
  // Each block's summary before it, when the summaries are the thinking; else the thinking first.
  const perBlock = blocks.length > 0 && texts.filter((t) => t !== '').join(JOIN) === thinking;
  let shown = false;
  if (!perBlock && thinking !== '') {
    out.push({ type: 'thinking', text: thinking });
    shown = true;
  }
  const calls = reply.tool_calls ?? [];
  const blocksAt = (i: number, last = false): void => {
    blocks.forEach((block, j) => {
      const at = Math.min(block.before_call ?? 0, calls.length);
      if (at !== i && !(last && at >= i)) return;
      if (perBlock && texts[j] !== '') {
        out.push({ type: 'thinking', text: (shown ? JOIN : '') + texts[j] });
        shown = true;
      }
      out.push({ type: 'block', block });
    });
  };
  blocksAt(0, calls.length === 0);
  if (reply.content !== null && reply.content !== '') out.push({ type: 'content', text: reply.content });
  calls.forEach((c, index) => {
    if (index > 0) blocksAt(index);
    out.push({ type: 'tool_call_start', index, id: c.id, name: c.name });
    out.push({ type: 'tool_call_args', index, text: c.arguments });
  });
  if (calls.length > 0) blocksAt(calls.length, true);
  if (reply.finish_reason !== null) out.push({ type: 'finish', reason: reply.finish_reason });
  return out;
}

/** A Responses reasoning item's summary texts, joined as its decoder joins them. */
function summaryOf(block: OpaqueBlock): string {
  const summary = (block.data as { summary?: unknown } | null)?.summary;
  if (!Array.isArray(summary)) return '';
  return summary.map((p) => (typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : '')).filter((t) => t !== '').join(JOIN);
}
