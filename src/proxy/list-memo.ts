/**
 * The last upstream body built for each conversation, kept so the next request copies the
 * serialised messages it shares with it in one piece and serialises only what follows
 * (docs/decisions.md, Memory follows live sessions). A conversation is known by its first message
 * object: the window hands the same frozen object for an unchanged entry, so a request that only
 * appends finds its predecessor here. Bounded in bytes (half of `[sessions] wire_cache_mb`, the
 * per-message memo has the other half), least recently used out first: a thousand idle sessions
 * hold no copy.
 */
import { LRUCache } from 'lru-cache';
import type { KeptList, ListMemo } from '../dialects/types.js';

/** What an entry costs beyond its body: its arrays of items, forms and ends. */
const PER_ITEM_BYTES = 24;

export class BodyListMemo implements ListMemo {
  readonly #kept: LRUCache<object, KeptList> | undefined;

  constructor(maxBytes: number) {
    const max = Math.floor(maxBytes);
    this.#kept = max < 1 ? undefined : new LRUCache<object, KeptList>({ maxSize: max, sizeCalculation: sizeOf });
  }

  get(first: object): KeptList | undefined {
    return this.#kept?.get(first);
  }

  set(first: object, kept: KeptList): void {
    // Larger than the bound: lru-cache refuses it (and drops what was kept under that key).
    this.#kept?.set(first, kept);
  }

  /** Bytes counted against the bound. */
  get size(): number {
    return this.#kept?.calculatedSize ?? 0;
  }
}

function sizeOf(kept: KeptList): number {
  return Math.max(1, kept.bytes.length + kept.items.length * PER_ITEM_BYTES);
}
