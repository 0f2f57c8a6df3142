/**
 * The messages' wire serialisations (UTF-8 bytes) kept between requests, bounded in bytes
 * (`[sessions] wire_cache_mb`): a busy session's messages are serialised once, and a thousand idle
 * ones do not hold a second copy of their conversations (docs/decisions.md, Memory follows live
 * sessions). Held weakly by message: a session that leaves memory takes its entries with it.
 *
 * The bytes live in one ring of the bound's size, allocated once: each serialisation is copied in
 * at the ring's cursor, and one the cursor has since passed over is gone (made again when needed).
 * A buffer per serialisation lived until the bound pushed it out, long enough for V8 to promote it,
 * so the memo's churn became old garbage holding its bytes until a full collection (tens of MiB
 * over the peers bench's 1,000 sessions); the ring's memory is its size, whatever passes through.
 *
 * What `get` returns is a view of the ring: valid until the next `set`. The encoder copies what it
 * got into the body before it keeps anything new.
 *
 * A conversation's first request reads the memo but keeps nothing (`readOnly`): most first
 * requests are the only one (a side call, a title, a one-shot call through a gateway), and keeping
 * their messages cost a copy into the ring and an entry each, ~1.5% of such a request's CPU
 * (docs/decisions/0017-what-a-first-request-no-longer-keeps.md). A second request serialises the
 * first one's messages again, once, and keeps them.
 */
import type { SerialisationMemo } from '../dialects/types.js';

interface Kept {
  variant: string;
  /** Where the bytes start, counted in bytes written since the ring began (not wrapped). */
  at: number;
  length: number;
}

export class WireMemo implements SerialisationMemo {
  readonly #ring: Buffer;
  readonly #kept = new WeakMap<object, Kept>();
  /** Bytes written since the ring began, gaps left at its end included. */
  #written = 0;
  /** The memo as a conversation's first request uses it: what is kept is read, nothing new kept. */
  readonly readOnly: SerialisationMemo = { get: (msg, variant) => this.get(msg, variant), set: () => undefined };

  constructor(maxBytes: number) {
    this.#ring = Buffer.allocUnsafeSlow(Math.max(0, Math.floor(maxBytes)));
  }

  get(msg: object, variant: string): Buffer | undefined {
    const kept = this.#kept.get(msg);
    if (kept === undefined || kept.variant !== variant) return undefined;
    // Overwritten once the cursor has come round past its start.
    if (this.#written - kept.at > this.#ring.length) {
      this.#kept.delete(msg);
      return undefined;
    }
    const start = kept.at % this.#ring.length;
    return this.#ring.subarray(start, start + kept.length);
  }

  set(msg: object, variant: string, bytes: Buffer): void {
    const size = this.#ring.length;
    if (bytes.length > size || bytes.length === 0) return;
    // An entry never wraps: what is left at the ring's end is skipped.
    const offset = this.#written % size;
    if (offset + bytes.length > size) this.#written += size - offset;
    const at = this.#written;
    bytes.copy(this.#ring, at % size);
    this.#written += bytes.length;
    this.#kept.set(msg, { variant, at, length: bytes.length });
  }
}
