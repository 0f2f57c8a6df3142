/**
 * Client-side clearing (docs/decisions/0005-client-clearing.md): agents that run long replace old
 * tool results in place with a marker of their own, and keep sending every other message as before.
 * Such a result is the same entry to the session, cleared: not a divergence of the history. Pure.
 */
import type { Cleared } from '../core/events.js';
import type { NeutralMessage } from '../core/types.js';

/** The texts agents put in place of a tool result they cleared, and who sends each. */
export const CLEARING_MARKERS: readonly { text: string; clients: string }[] = [
  { text: '[Old tool result content cleared]', clients: 'qwen-code (microcompaction), Claude Code (microcompact), opencode (prune)' },
];

const MARKERS = new Set(CLEARING_MARKERS.map((m) => m.text));

/**
 * The marker `sent` carries in place of the logged tool result `logged`, when `sent` is that result
 * cleared by the client: a tool result answering the same call, its whole text a known marker.
 */
export function clearedAs(logged: NeutralMessage, sent: NeutralMessage | undefined): string | undefined {
  if (sent?.role !== 'tool' || logged.role !== 'tool' || sent.tool_call_id !== logged.tool_call_id) return undefined;
  const text = sent.content.trim();
  return MARKERS.has(text) && logged.content !== sent.content ? sent.content : undefined;
}

/** The cleared entries of a request, grouped by the marker that replaced them, seqs ascending. */
export function clearedGroups(cleared: readonly { seq: number; text: string }[]): Cleared[] {
  const byText = new Map<string, number[]>();
  for (const c of cleared) byText.set(c.text, [...(byText.get(c.text) ?? []), c.seq]);
  return [...byText].map(([text, seqs]) => ({ text, seqs: seqs.sort((a, b) => a - b) }));
}
