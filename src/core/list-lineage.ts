/**
 * Which earlier list a client body's list repeats. The body parser assembles the list of a body
 * that repeats an earlier one (src/proxy/body-memo.ts) from that body's parsed elements, the same
 * objects, and says so here; what a request made of each element (a check, a conversion) is then
 * kept by list and reused for the elements the next list shares, so a resent history costs its
 * new messages (docs/decisions.md, Bodies parsed once). Held weakly: nothing outlives its list.
 */
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
