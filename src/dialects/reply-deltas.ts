/**
 * A reply the log holds, as the stream deltas it came as: how an answer from the log is streamed to
 * any wire. Thinking text first, then each opaque block where it stood among the calls
 * (`before_call`: the ones before any call go before the text), the text, and the calls. Responses'
 * reasoning items go each after its own summary, as a Responses upstream streamed them (the text
 * between two items joined by a blank line, as its decoder joins it: decode-stream.ts), so a
 * Responses client gets each item with its own summary.
 */
import type { NeutralReply, OpaqueBlock } from '../core/types.js';
import type { StreamDelta } from './types.js';

const JOIN = '\n\n';

export function replyDeltas(reply: NeutralReply): StreamDelta[] {
  const out: StreamDelta[] = [];
  const thinking = reply.thinking ?? '';
  const blocks = reply.blocks ?? [];
  const texts = blocks.map(summaryOf);
  const perBlock = blocks.length > 0 && blocks.every((b) => b.kind === 'responses.reasoning') && texts.filter((t) => t !== '').join(JOIN) === thinking;
  let shown = false;
  if (!perBlock && thinking !== '') {
    out.push({ type: 'thinking', text: thinking });
    shown = true;
  }
  const calls = reply.tool_calls ?? [];
  const blocksAt = (k: number): void => {
    blocks.forEach((block, j) => {
      if (Math.min(block.before_call ?? 0, calls.length) !== k) return;
      if (perBlock && texts[j] !== '') {
        out.push({ type: 'thinking', text: (shown ? JOIN : '') + texts[j] });
        shown = true;
      }
      out.push({ type: 'block', block });
    });
  };
  blocksAt(0);
  if (reply.content !== null && reply.content !== '') out.push({ type: 'content', text: reply.content });
  calls.forEach((c, index) => {
    if (index > 0) blocksAt(index);
    out.push({ type: 'tool_call_start', index, id: c.id, name: c.name });
    out.push({ type: 'tool_call_args', index, text: c.arguments });
  });
  if (calls.length > 0) blocksAt(calls.length);
  if (reply.finish_reason !== null) out.push({ type: 'finish', reason: reply.finish_reason });
  return out;
}

/** A Responses reasoning item's summary texts, joined as its decoder joins them; '' for any other block. */
function summaryOf(block: OpaqueBlock): string {
  if (block.kind !== 'responses.reasoning') return '';
  const summary = (block.data as { summary?: unknown } | null)?.summary;
  if (!Array.isArray(summary)) return '';
  return summary.map((p) => (typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : '')).filter((t) => t !== '').join(JOIN);
}
