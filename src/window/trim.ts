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
 * Under window-v2 a reply elided next to a run of elided replies joins the run's one placeholder,
 * so it costs only the run's longer name, and a run it reaches joins too (walk.ts): the running
 * estimate follows the runs as the walk will render them.
 *
 * Under window-v3 a folded result is not elided in place: its stand-in is already one line.
 *
 * Under window-v4 the results the client cleared itself go first, all of them, whatever the
 * running estimate: the client already dropped them, and this trim breaks the prefix anyway.
 * The oldest-first order then goes on from the oldest result if the window is still above low water.
 *
 * The running estimate counts what each elision saves in place. It does not count the opaque
 * blocks that later replies lose because their prefix changed (they are left out by the walk that
 * renders the trimmed request, so the request as sent is smaller still, never larger).
 */
import type { Recipe } from '../core/events.js';
import { elidedRunEst, type WindowStats } from './entry.js';
import { rulesOf } from './recipe.js';
import type { Item } from './walk.js';

/** Seqs to elide newly, ascending; empty when nothing is eligible. */
export function selectTrim(
  items: readonly Item[],
  recipe: Recipe,
  estimate: number,
  isElided: (seq: number) => boolean,
  stats: WindowStats,
  isFolded: (seq: number) => boolean = () => false,
  isCleared: (seq: number) => boolean = () => false,
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
  const elideResult = (k: number): void => {
    const it = items[k]!;
    const e = it.entry;
    // A folded result is already its one-line stand-in (folds.ts).
    if (e === undefined || e.role !== 'tool' || elided(e.seq) || isFolded(e.seq)) return;
    // A result shorter than its placeholder stays: eliding it would grow the request.
    const saves = it.r.est - e.elided(stats).est;
    if (saves <= 0) return;
    est -= saves;
    fresh.add(e.seq);
  };

  if (rulesOf(recipe.version).clientClears) {
    for (let k = first; k < protectFrom; k++) if (items[k]!.entry !== undefined && isCleared(items[k]!.entry!.seq)) elideResult(k);
  }
  for (let k = first; k < protectFrom && est > low; k++) elideResult(k);

  const merge = rulesOf(recipe.version).mergeElided;
  // window-v2: the run placeholder the last message shown so far is, if it is one.
  let run: { first: number; last: number; est: number } | undefined;
  for (let k = first; k < protectFrom && est > low; k++) {
    const it = items[k]!;
    const e = it.entry;
    if (merge && it.kind === 'elided') {
      if (run === undefined) run = { first: e!.seq, last: it.last, est: it.r.est };
      else {
        const joined = elidedRunEst(run.first, it.last);
        est += joined - run.est - it.r.est;
        run = { first: run.first, last: it.last, est: joined };
      }
      continue;
    }
    // A result of a batch elided just now leaves with it: it does not end a run.
    if (merge && it.batch >= 0 && fresh.has(items[it.batch]!.entry!.seq)) continue;
    if (e === undefined || e.role !== 'assistant' || elided(e.seq) || it.open || protectedBatches.has(k)) {
      run = undefined;
      continue;
    }
    const placeholder = run === undefined ? e.elided(stats).est : elidedRunEst(run.first, e.seq) - run.est;
    let saves = it.r.est - placeholder;
    for (const idx of it.results ?? []) {
      const res = items[idx]!;
      saves += fresh.has(res.entry!.seq) ? res.entry!.elided(stats).est : res.r.est;
    }
    if (saves <= 0) {
      run = undefined;
      continue;
    }
    est -= saves;
    for (const idx of it.results ?? []) fresh.add(items[idx]!.entry!.seq);
    fresh.add(e.seq);
    if (merge) run = { first: run?.first ?? e.seq, last: e.seq, est: (run?.est ?? 0) + placeholder };
  }

  return [...fresh].filter((seq) => !isElided(seq)).sort((a, b) => a - b);
}
