/**
 * Anthropic's prompt cache as the simulator plays it: nothing is cached or read without a
 * `cache_control` marker. The rules, kept simple:
 *
 * - A breakpoint is a block with `cache_control`, or, for the request's own `cache_control`, the
 *   last cacheable block (not thinking). Its prefix is every segment up to and including that block
 *   (render.ts), keyed by SHA-256 over the model and that text.
 * - Read: the longest cached, unexpired prefix ending at a block boundary no more than 20 blocks
 *   before some breakpoint (the API's documented lookback); reading refreshes its lifetime.
 * - Write: each breakpoint's prefix of at least 1024 tokens that goes past what was read is written,
 *   with its own lifetime: five minutes (the sim's TTL), or one hour for `ttl: "1h"`. The tokens
 *   between the read (or the previous written breakpoint) and it are that lifetime's creation tokens.
 * - input_tokens is what is left: the whole prompt less read and written tokens.
 * The cache is one per simulator (Anthropic's is per organisation, not per replica), LRU-bounded.
 */
import { createHash } from 'node:crypto';
import { TOKEN_BYTES } from '../tokens.js';
import type { Segment } from './render.js';

/** The API's minimum for most models (Sonnet); shorter prefixes are neither written nor read. */
export const MIN_CACHEABLE_TOKENS = 1024;
export const LOOKBACK_BLOCKS = 20;
export const ONE_HOUR_MS = 3_600_000;

export interface CacheUsage {
  /** The whole prompt. */
  total: number;
  input: number;
  read: number;
  written5m: number;
  written1h: number;
}

interface Boundary {
  /** Segment index. */
  segment: number;
  tokens: number;
  key: string;
}

interface Breakpoint {
  boundary: number;
  ttlMs: number;
}

export class AnthropicPromptCache {
  readonly #expiry = new Map<string, { expires: number; ttlMs: number }>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.#expiry.size;
  }

  clear(): void {
    this.#expiry.clear();
  }

  /**
   * Reads and writes the cache for one request; `topLevel` is its own `cache_control`, if any;
   * `messageKey` what message blocks are keyed on besides their text (request.ts), so a change of
   * it leaves the tools and system cached and misses from the first message on.
   */
  apply(model: string, segments: readonly Segment[], topLevel: Record<string, unknown> | null, now: number, ttl5mMs: number, messageKey = ''): CacheUsage {
    const boundaries: Boundary[] = [];
    const hash = createHash('sha256').update(`${model}\n`);
    let bytes = 0;
    let keyed = false;
    segments.forEach((segment, i) => {
      if (!keyed && segment.message !== undefined) {
        hash.update(`\u0000${messageKey}\u0000`);
        keyed = true;
      }
      hash.update(segment.text);
      bytes += Buffer.byteLength(segment.text, 'utf8');
      if (segment.boundary) boundaries.push({ segment: i, tokens: Math.ceil(bytes / TOKEN_BYTES), key: hash.copy().digest('base64') });
    });
    const total = Math.ceil(bytes / TOKEN_BYTES);
    const ttlOf = (cc: Record<string, unknown>): number => (cc.ttl === '1h' ? ONE_HOUR_MS : ttl5mMs);

    const points: Breakpoint[] = [];
    boundaries.forEach((b, n) => {
      const cc = segments[b.segment]?.cacheControl;
      if (cc !== null && cc !== undefined) points.push({ boundary: n, ttlMs: ttlOf(cc) });
    });
    if (topLevel !== null) {
      let last = boundaries.length - 1;
      while (last >= 0 && segments[boundaries[last]!.segment]!.opaque) last--;
      if (last >= 0) points.push({ boundary: last, ttlMs: ttlOf(topLevel) });
    }
    const usage: CacheUsage = { total, input: total, read: 0, written5m: 0, written1h: 0 };
    if (points.length === 0) return usage;
    points.sort((a, b) => a.boundary - b.boundary || b.ttlMs - a.ttlMs);

    let hit: Boundary | undefined;
    for (const point of points) {
      for (let n = point.boundary; n >= 0 && n > point.boundary - LOOKBACK_BLOCKS; n--) {
        const b = boundaries[n]!;
        if (b.tokens < MIN_CACHEABLE_TOKENS || (hit !== undefined && b.tokens <= hit.tokens)) continue;
        if (this.#fresh(b.key, now)) hit = b;
      }
    }
    if (hit !== undefined) {
      usage.read = hit.tokens;
      const entry = this.#expiry.get(hit.key)!;
      this.#touch(hit.key, now, entry.ttlMs);
    }

    let end = usage.read;
    for (const point of points) {
      const b = boundaries[point.boundary]!;
      if (b.tokens < MIN_CACHEABLE_TOKENS || b.tokens <= end) continue;
      this.#touch(b.key, now, point.ttlMs);
      if (point.ttlMs === ONE_HOUR_MS) usage.written1h += b.tokens - end;
      else usage.written5m += b.tokens - end;
      end = b.tokens;
    }
    usage.input = total - usage.read - usage.written5m - usage.written1h;
    this.#evict();
    return usage;
  }

  #fresh(key: string, now: number): boolean {
    const entry = this.#expiry.get(key);
    if (entry === undefined) return false;
    if (entry.expires > now) return true;
    this.#expiry.delete(key);
    return false;
  }

  #touch(key: string, now: number, ttlMs: number): void {
    this.#expiry.delete(key);
    this.#expiry.set(key, { expires: now + ttlMs, ttlMs });
  }

  #evict(): void {
    for (const oldest of this.#expiry.keys()) {
      if (this.#expiry.size <= this.maxEntries) break;
      this.#expiry.delete(oldest);
    }
  }
}
