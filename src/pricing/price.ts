/**
 * A route's prices and where each figure came from. Input and output make a price; a cache kind
 * without its own price is billed as plain input (docs/decisions.md, A maintained model catalogue).
 */

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
  /** Writes with a one-hour TTL; absent: `cache_write`. */
  cache_write_1h?: number;
  /**
   * USD per million token-hours an explicit context cache is stored (Gemini's `cachedContents`).
   * Not a per-token kind: billed for as long as the entry lives, not per reply. Config only (the
   * catalogue has no storage prices); absent: unknown.
   */
  cache_storage?: number;
}

export const PRICE_KINDS = ['input', 'cache_read', 'cache_write', 'cache_write_1h', 'output'] as const;
export type PriceKind = (typeof PRICE_KINDS)[number];

/** Where a route's figure came from: its `[models]` entry, `[window]`, the catalogue, or the built-in default. */
export type FigureSource = 'config' | 'window' | 'catalogue' | 'default';

export interface Figure {
  value: number;
  from: FigureSource;
}
