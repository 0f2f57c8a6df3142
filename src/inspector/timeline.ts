/**
 * What the window did to a session, in log order: elisions and folds (as each `llm.req` recorded
 * them), tool results cut at their cap (by the cap the recipe gives that tool, as the window cuts),
 * summaries, client rewrites, and the side requests and forks taken from it.
 */
import { ownFrom, type EventOf, type LogEvent, type Recipe } from '../core/events.js';
import type { ToolCall } from '../core/types.js';
import { cutOf } from '../window/cap.js';
import { ResultCaps } from '../window/tool-caps.js';
import { shapeOf } from '../window/tool-calls.js';

export type TimelineKind = 'elide' | 'fold' | 'cap' | 'summary' | 'rewrite' | 'side' | 'fork';

export interface TimelineEntry {
  seq: number;
  kind: TimelineKind;
  /** One line for a person. */
  detail: string;
  /** Added: the seqs the entry names (elided or folded entries, a summary's span, a child's id). */
  seqs?: number[];
  session?: string;
}

export interface Child {
  id: string;
  kind: 'fork' | 'side';
  seq: number;
}

export function timelineOf(events: readonly LogEvent[], children: readonly Child[]): TimelineEntry[] {
  const start = events[0]?.type === 'session.start' ? (events[0] as EventOf<'session.start'>) : undefined;
  const inherited = ownFrom(start);
  const out: TimelineEntry[] = [];
  let caps: ResultCaps | undefined;
  let recipe: Recipe | undefined;
  const calls = new Map<string, ToolCall>();
  for (const e of events) {
    if (e.type === 'session.start' || e.type === 'session.resume') {
      recipe = e.recipe;
      caps = new ResultCaps(e.recipe);
    }
    if (e.type === 'llm.resp') for (const call of e.reply.tool_calls ?? []) calls.set(call.id, call);
    if (e.type === 'client.msg' && e.msg.role === 'assistant') for (const call of e.msg.tool_calls ?? []) calls.set(call.id, call);
    if (e.seq < inherited) continue;
    switch (e.type) {
      case 'llm.req':
        if (e.elided.length > 0) out.push({ seq: e.seq, kind: 'elide', detail: `elided ${e.elided.length} entr${e.elided.length === 1 ? 'y' : 'ies'} (seq ${span(e.elided)})`, seqs: e.elided });
        if ((e.folded?.length ?? 0) > 0) {
          const seqs = e.folded!.map((f) => f.seq);
          out.push({ seq: e.seq, kind: 'fold', detail: `folded ${seqs.length} superseded tool result${seqs.length === 1 ? '' : 's'} (seq ${span(seqs)})`, seqs });
        }
        break;
      case 'client.msg': {
        if (e.msg.role !== 'tool' || caps === undefined || recipe === undefined) break;
        const call = calls.get(e.msg.tool_call_id);
        const cap = caps.capOf({ call: call === undefined ? undefined : shapeOf(call) });
        if (cutOf(e.msg.content, cap) !== undefined) out.push({ seq: e.seq, kind: 'cap', detail: `tool result${call === undefined ? '' : ` of ${call.name}`} shown head and tail (cap ${cap} tokens)` });
        break;
      }
      case 'summary.add':
        out.push({ seq: e.seq, kind: 'summary', detail: `summary of seq ${e.from}-${e.to}`, seqs: [e.from, e.to] });
        break;
      case 'summary.revoke':
        out.push({ seq: e.seq, kind: 'summary', detail: `summary seq ${e.summary} revoked`, seqs: [e.summary] });
        break;
      case 'client.rewrite':
        out.push({ seq: e.seq, kind: 'rewrite', detail: `the client's history diverged at seq ${e.from_seq}${e.reason === undefined ? '' : ` (${e.reason})`}`, seqs: [e.from_seq] });
        break;
      default:
        break;
    }
  }
  for (const c of children) out.push({ seq: c.seq, kind: c.kind, detail: `${c.kind === 'side' ? 'side request' : 'fork'} ${c.id} from seq ${c.seq}`, session: c.id });
  return out.sort((a, b) => a.seq - b.seq);
}

/** `3-5, 9` from [3, 4, 5, 9]. */
function span(seqs: readonly number[]): string {
  const sorted = [...seqs].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}
