/**
 * The messages' wire serialisations (UTF-8 bytes) kept between requests, bounded in bytes
 * (`[sessions] wire_cache_mb`): a busy session's messages are serialised once, and a thousand idle
 * ones do not hold a second copy of their conversations (docs/decisions.md, Memory follows live
 * sessions). Held weakly by message: a session that leaves memory takes its serialisations with
 * it. Past the bound, the oldest serialisations go first; one still needed is made again.
 */
import type { SerialisationMemo } from '../dialects/types.js';

interface Kept {
  variant: string;
  bytes: Buffer;
}

export class WireMemo implements SerialisationMemo {
  readonly #max: number;
  readonly #kept = new WeakMap<object, Kept>();
  /** Oldest first; an entry whose message is gone still counts until it is dropped. */
  #order: { msg: WeakRef<object>; size: number }[] = [];
  #head = 0;
  #size = 0;

  constructor(maxBytes: number) {
    this.#max = Math.max(0, maxBytes);
  }

  get(msg: object, variant: string): Buffer | undefined {
    const kept = this.#kept.get(msg);
    return kept?.variant === variant ? kept.bytes : undefined;
  }

  set(msg: object, variant: string, bytes: Buffer): void {
    if (bytes.length > this.#max) return;
    this.#kept.set(msg, { variant, bytes });
    this.#order.push({ msg: new WeakRef(msg), size: bytes.length });
    this.#size += bytes.length;
    while (this.#size > this.#max) {
      const old = this.#order[this.#head++]!;
      this.#size -= old.size;
      const m = old.msg.deref();
      if (m !== undefined) this.#kept.delete(m);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Bytes counted against the bound. */
  get size(): number {
    return this.#size;
  }
}
