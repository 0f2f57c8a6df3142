/**
 * Which earlier list a client body's list repeats. The body parser assembles the list of a body
 * that repeats an earlier one (src/proxy/body-memo.ts) from that body's parsed elements, the same
 * objects, and says so here; what a request made of each element (a check, a conversion) is then
 * kept by list and reused for the elements the next list shares, so a resent history costs its
 * new messages (docs/decisions.md, Bodies parsed once). Held weakly: nothing outlives its list.
 * A member the memo hands over unchanged whole (a tools list) is the same frozen value: what was
 * made of it is kept by that value (`FrozenResults`).
 */
import { deepFreeze } from './deep-freeze.js';

interface Lineage {
  parent: readonly unknown[];
  /** The leading elements of the list that are the parent's, the same objects. */
  shared: number;
}

const LINEAGE = new WeakMap<readonly unknown[], Lineage>();

/** `list` starts with the first `shared` elements of `parent`, as the same (frozen) objects. */
export function recordShared(list: readonly unknown[], parent: readonly unknown[], shared: number): void {
  if (shared > 0) LINEAGE.set(list, { parent, shared });
}

const NONE: readonly never[] = [];

/**
 * What was made of each element of a list, kept by list: `reused` gives the results an earlier
 * list's request kept for the elements this one shares with it. Only what `keep` was given is
 * reused, so a request that failed (and kept nothing) leaves its list to be made again whole.
 */
export class ListResults<R> {
  readonly #byList = new WeakMap<readonly unknown[], readonly R[]>();

  reused(list: readonly unknown[]): readonly R[] {
    const lineage = LINEAGE.get(list);
    if (lineage === undefined) return NONE;
    const before = this.#byList.get(lineage.parent);
    if (before === undefined) return NONE;
    return before.length <= lineage.shared ? before : before.slice(0, lineage.shared);
  }

  /**
   * `results[i]` is what was made of `list[i]`; fewer than the list's length is a prefix. Only a
   * frozen list is kept for: the body memo freezes what it may hand over again, and a list it
   * never will (a small body's) costs nothing here.
   */
  keep(list: readonly unknown[], results: readonly R[]): void {
    if (Object.isFrozen(list)) this.#byList.set(list, results);
  }
}

/**
 * `make` of each of `elements` (what a request parsed of `list`'s elements) from `from` on, taken
 * from an earlier list's results where this list shares the element with it. A result is kept,
 * frozen, for a later list only where `keepable(element)`: one whose making has an effect each
 * request needs (an image handed to that request's sink) is made every time.
 */
export function eachOnce<T, R extends object>(
  results: ListResults<R | undefined>,
  list: readonly unknown[],
  elements: readonly T[],
  from: number,
  make: (element: T, index: number) => R,
  keepable: (element: T) => boolean,
): R[] {
  const before = results.reused(list);
  const frozen = Object.isFrozen(list);
  const kept: (R | undefined)[] = new Array<R | undefined>(from).fill(undefined);
  const out: R[] = [];
  for (let i = from; i < elements.length; i++) {
    const element = elements[i]!;
    const keep = frozen && keepable(element);
    const made = before[i] ?? (keep ? deepFreeze(make(element, i)) : make(element, i));
    kept.push(keep ? made : undefined);
    out.push(made);
  }
  results.keep(list, kept);
  return out;
}

/**
 * What was made of a value the body memo may hand over again as the same frozen object (a tools
 * list resent unchanged): made once, kept by identity. A value that is not frozen is one request's
 * own and is made each time; a make that throws keeps nothing.
 */
export class FrozenResults<R> {
  readonly #byValue = new WeakMap<object, R>();

  /** `make(kept)`: `kept` says its result will serve later requests too (freeze it then). */
  of(value: unknown, make: (kept: boolean) => R): R {
    if (value === null || typeof value !== 'object' || !Object.isFrozen(value)) return make(false);
    if (this.#byValue.has(value)) return this.#byValue.get(value)!;
    const made = make(true);
    this.#byValue.set(value, made);
    return made;
  }
}
