/**
 * The window's elision placeholder as it stands in a request: `[elided seq=N]`, or `[elided seq=A-B]`
 * for a merged run (window-v2). Read by the break-cause diff and by the OpenAI breakpoint plan,
 * which marks the last trim point.
 */
import type { NeutralMessage } from './types.js';

const ELIDED = /^\[elided seq=(\d+)(?:-(\d+))?\]$/;

/** The seqs a placeholder names (first = last for `[elided seq=N]`); undefined for any other message. */
export function placeholderSpan(m: NeutralMessage): { first: number; last: number } | undefined {
  if ((m.role !== 'assistant' && m.role !== 'tool') || typeof m.content !== 'string') return undefined;
  const match = ELIDED.exec(m.content);
  if (match === null) return undefined;
  const first = Number(match[1]);
  return { first, last: match[2] === undefined ? first : Number(match[2]) };
}
