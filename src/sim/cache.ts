/**
 * One replica's prompt cache: chained block keys with an expiry each, in a Map kept in LRU order
 * (a touch re-inserts the key at the end; eviction takes from the front).
 */
export class ReplicaCache {
  readonly #maxBlocks: number;
  readonly #expiry = new Map<string, number>();

  constructor(maxBlocks: number) {
    this.#maxBlocks = maxBlocks;
  }

  get size(): number {
    return this.#expiry.size;
  }

  /**
   * How many leading blocks are present and unexpired. Reading refreshes their TTL; the first
   * miss ends the run (a later block's key names its whole prefix, but it may not be read
   * without the blocks before it).
   */
  read(keys: readonly string[], now: number, ttlMs: number): number {
    let hits = 0;
    for (const key of keys) {
      const expires = this.#expiry.get(key);
      if (expires === undefined) break;
      if (expires <= now) {
        this.#expiry.delete(key);
        break;
      }
      this.#touch(key, now + ttlMs);
      hits++;
    }
    return hits;
  }

  write(keys: readonly string[], now: number, ttlMs: number): void {
    for (const key of keys) this.#touch(key, now + ttlMs);
    for (const oldest of this.#expiry.keys()) {
      if (this.#expiry.size <= this.#maxBlocks) break;
      this.#expiry.delete(oldest);
    }
  }

  clear(): void {
    this.#expiry.clear();
  }

  #touch(key: string, expires: number): void {
    this.#expiry.delete(key);
    this.#expiry.set(key, expires);
  }
}
