/**
 * The window's placeholders as they stand in a request: `[elided seq=N]`, or `[elided seq=A-B]`
 * for a merged run (window-v2), and a folded result's stand-in `[folded seq=N: ...]` (window-v3,
 * made only where a trim breaks the prefix anyway). Read by the break-cause diff and by the OpenAI
 * breakpoint plan, which marks the last trim point.
 */
import type { NeutralMessage } from './types.js';

const ELIDED = /^\[elided seq=(\d+)(?:-(\d+))?\]$/;
const FOLDED = /^\[folded seq=(\d+): /;

/** The seqs a placeholder names (first = last for `[elided seq=N]` and a fold); undefined for any other message. */
export function placeholderSpan(m: NeutralMessage): { first: number; last: number } | undefined {
  if ((m.role !== 'assistant' && m.role !== 'tool') || typeof m.content !== 'string') return undefined;
  const match = ELIDED.exec(m.content) ?? (m.role === 'tool' ? FOLDED.exec(m.content) : null);
  if (match === null) return undefined;
  const first = Number(match[1]);
  return { first, last: match[2] === undefined ? first : Number(match[2]) };
}
