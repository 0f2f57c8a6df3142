/**
 * Revocable summaries (docs/decisions.md, Revocable summaries). A `summary.add {from, to, text}`
 * replaces the live entries with seq in [from, to] by one assistant message holding the text,
 * placed where the first of them was; `summary.revoke {summary}` brings them back.
 *
 * Choices, fixed here so replay is exact:
 * - The latest two user turns stay out of any summary. The span is clipped when the summary is
 *   added, to end before the second-to-last live user message (before the last one when there is
 *   only one), and keeps that clipped span for good: later turns never move it, so a summary
 *   changes the prefix once, when it is added or revoked. A span left with no live entry is
 *   ignored (it never shows, and revoking it changes nothing).
 * - A newer summary overlapping an older one supersedes it while both stand; revoking the newer
 *   brings the older back.
 * - A summary message is never elided, and counts as one entry for protection.
 */
import type { WindowStats } from './entry.js';
import { render, type Entry, type Rendered } from './entry.js';

export interface Summary {
  /** Seq of the summary.add event; what summary.revoke names. */
  readonly seq: number;
  readonly from: number;
  /** `to` after clipping. */
  readonly to: number;
  readonly text: string;
  readonly ignored: boolean;
  revoked: boolean;
  rendered?: Rendered;
}

export class Summaries {
  /** Made at the first summary: most sessions have none. */
  #all: Map<number, Summary> | undefined;
  /** Standing, non-overlapping, sorted by `from`. */
  #effective: Summary[] = [];

  get effective(): readonly Summary[] {
    return this.#effective;
  }

  /** Returns the lowest seq whose view changed, or undefined when nothing changed. */
  add(seq: number, from: number, to: number, text: string, entries: readonly Entry[]): number | undefined {
    const clippedTo = Math.min(to, userTurnFloor(entries) - 1);
    const covers = entries.some((e) => e.seq >= from && e.seq <= clippedTo);
    (this.#all ??= new Map()).set(seq, { seq, from, to: clippedTo, text, ignored: !covers, revoked: false });
    return covers ? this.#recompute() : undefined;
  }

  revoke(summarySeq: number): number | undefined {
    const s = this.#all?.get(summarySeq);
    if (s === undefined || s.revoked) return undefined;
    s.revoked = true;
    return s.ignored ? undefined : this.#recompute();
  }

  /** The summary message, rendered once. */
  message(s: Summary, stats: WindowStats): Rendered {
    s.rendered ??= render({ role: 'assistant', content: s.text }, stats);
    return s.rendered;
  }

  /** Index of the first effective summary whose span ends at or after `seq`. */
  firstFrom(seq: number): number {
    let lo = 0;
    let hi = this.#effective.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#effective[mid]!.to < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #recompute(): number | undefined {
    const before = this.#effective;
    const taken: Summary[] = [];
    const standing = [...(this.#all?.values() ?? [])].filter((s) => !s.revoked && !s.ignored).sort((a, b) => b.seq - a.seq);
    for (const s of standing) {
      if (!taken.some((t) => t.from <= s.to && s.from <= t.to)) taken.push(s);
    }
    this.#effective = taken.sort((a, b) => a.from - b.from);
    let changed: number | undefined;
    for (const s of before) if (!this.#effective.includes(s)) changed = Math.min(changed ?? s.from, s.from);
    for (const s of this.#effective) if (!before.includes(s)) changed = Math.min(changed ?? s.from, s.from);
    return changed;
  }
}

/** Seq of the earliest user message of the latest two user turns (Infinity without users). */
function userTurnFloor(entries: readonly Entry[]): number {
  let found = 0;
  let floor = Infinity;
  for (let i = entries.length - 1; i >= 0 && found < 2; i--) {
    const e = entries[i]!;
    if (e.role === 'user') {
      floor = e.seq;
      found++;
    }
  }
  return floor;
}
