/**
 * Folds (window-v3; docs/decisions.md, Folds and per-tool caps): on a request that trims, a tool
 * result that a later result shown in the same request supersedes is shown as a one-line stand-in
 * naming the call and the newer result. Superseded means, for the same tool:
 * - the same call again (same arguments), and the newer one did not fail;
 * - a whole-file read of the same file, which did not fail, after any read of it;
 * - a failed call, and a later call with the same arguments or on the same file that did not fail.
 *
 * Folds come on top of the trim's elisions (what it elides is not folded, and a result it elides
 * supersedes nothing). Only results at or after `from` are folded: the caller passes the first entry
 * the trim elides, where the prefix breaks anyway, so a fold never moves the break earlier. Results
 * among the protected entries stay, and so does one whose stand-in would be no shorter.
 * A fold is sticky (recorded in `llm.req.folded` and applied from the log), so its stand-in never
 * changes afterwards, but under window-v4 it leaves with its successor: a trim that elides the
 * result a stand-in names elides the stand-in too (`standInsLeaving`), so none names what the
 * request no longer shows.
 */
import type { Fold, Recipe } from '../core/events.js';
import type { WindowStats } from './entry.js';
import type { Item } from './walk.js';

export function selectFolds(
  items: readonly Item[],
  recipe: Recipe,
  from: number,
  isHidden: (seq: number) => boolean,
  stats: WindowStats,
): Fold[] {
  const first = items[0]?.kind === 'system' ? 1 : 0;
  const protectFrom = Math.max(first, items.length - Math.max(0, recipe.protected_entries));
  // The newest result shown, by call identity and by tool + file; only results that did not fail.
  const sameCall = new Map<string, number>();
  const wholeRead = new Map<string, number>();
  const onFile = new Map<string, number>();
  const folds: Fold[] = [];
  for (let k = items.length - 1; k >= first; k--) {
    const it = items[k]!;
    const e = it.entry;
    if (it.kind !== 'entry' || e === undefined || e.role !== 'tool' || isHidden(e.seq)) continue;
    // Made on each read (entry.ts): read once.
    const c = e.call;
    if (c === undefined) continue;
    const file = c.target === undefined ? undefined : `${c.name}\u0000${c.target}`;
    const by = e.failed
      ? sameCall.get(c.identity) ?? (file === undefined ? undefined : onFile.get(file))
      : sameCall.get(c.identity) ?? (file === undefined ? undefined : wholeRead.get(file));
    if (by !== undefined && k < protectFrom && e.seq >= from && e.folded(by, stats).est < it.r.est) {
      folds.push({ seq: e.seq, by });
      continue;
    }
    if (e.failed) continue;
    if (!sameCall.has(c.identity)) sameCall.set(c.identity, e.seq);
    if (file !== undefined) {
      if (!onFile.has(file)) onFile.set(file, e.seq);
      if (c.wholeRead && !wholeRead.has(file)) wholeRead.set(file, e.seq);
    }
  }
  return folds.sort((a, b) => a.seq - b.seq);
}

/**
 * The stand-ins a trim elides with their successors (window-v4): every folded result, still shown,
 * whose successor the request does not show (elided now or before, or gone by a rewrite). Newest
 * first, so a stand-in naming a stand-in that leaves leaves too. Ascending.
 */
export function standInsLeaving(folded: ReadonlyMap<number, number>, hidden: (seq: number) => boolean, shown: ReadonlySet<number>): number[] {
  const out = new Set<number>();
  const gone = (seq: number): boolean => out.has(seq) || hidden(seq) || !shown.has(seq);
  for (const seq of [...folded.keys()].sort((a, b) => b - a)) {
    if (!gone(seq) && gone(folded.get(seq)!)) out.add(seq);
  }
  return [...out].sort((a, b) => a - b);
}
