/**
 * Hysteresis (docs/decisions.md, Byte-stable window and hysteresis): a request whose estimate,
 * after the sticky elisions, is above high water elides oldest first until it is at or below low
 * water or nothing more is eligible; a request at or below high water elides nothing new. So a trim
 * happens once per crossing, and between crossings every request extends the one before it.
 *
 * Order: first tool results, in place; then assistant entries, each batch with its results (the
 * results leave the request and their seqs join the sticky set). Never user or system messages,
 * never a summary. The most recent `protected_entries` messages are protected, and so is the
 * calling batch of a protected tool result; a trailing batch still waiting for results is not
 * elided.
 *
 * The running estimate counts what each elision saves in place. It does not count the opaque
 * blocks that later replies lose because their prefix changed (they are left out by the walk that
 * renders the trimmed request, so the request as sent is smaller still, never larger).
 */
import type { Recipe } from '../core/events.js';
import type { WindowStats } from './entry.js';
import type { Item } from './walk.js';

/** Seqs to elide newly, ascending; empty when nothing is eligible. */
export function selectTrim(
  items: readonly Item[],
  recipe: Recipe,
  estimate: number,
  isElided: (seq: number) => boolean,
  stats: WindowStats,
): number[] {
  const low = recipe.low_water;
  const first = items[0]?.kind === 'system' ? 1 : 0;
  const protectFrom = Math.max(first, items.length - Math.max(0, recipe.protected_entries));
  const protectedBatches = new Set<number>();
  for (let k = protectFrom; k < items.length; k++) {
    const b = items[k]!.batch;
    if (b >= 0) protectedBatches.add(b);
  }

  const fresh = new Set<number>();
  const elided = (seq: number): boolean => fresh.has(seq) || isElided(seq);
  let est = estimate;

  for (let k = first; k < protectFrom && est > low; k++) {
    const it = items[k]!;
    const e = it.entry;
    if (e === undefined || e.role !== 'tool' || elided(e.seq)) continue;
    // A result shorter than its placeholder stays: eliding it would grow the request.
    const saves = it.r.est - e.elided(stats).est;
    if (saves <= 0) continue;
    est -= saves;
    fresh.add(e.seq);
  }

  for (let k = first; k < protectFrom && est > low; k++) {
    const it = items[k]!;
    const e = it.entry;
    if (e === undefined || e.role !== 'assistant' || elided(e.seq) || it.open || protectedBatches.has(k)) continue;
    let saves = it.r.est - e.elided(stats).est;
    for (const idx of it.results ?? []) {
      const res = items[idx]!;
      saves += fresh.has(res.entry!.seq) ? res.entry!.elided(stats).est : res.r.est;
    }
    if (saves <= 0) continue;
    est -= saves;
    for (const idx of it.results ?? []) fresh.add(items[idx]!.entry!.seq);
    fresh.add(e.seq);
  }

  return [...fresh].filter((seq) => !isElided(seq)).sort((a, b) => a - b);
}
