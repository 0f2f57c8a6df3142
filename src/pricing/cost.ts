/**
 * The one place cost is computed, for the metrics, `proxy stats` and `proxy sessions` alike: a
 * reply's cost by kind at a route's prices (USD per million tokens), the provider's own figure as
 * the fallback, and what cache reads saved. Unknown prices or usage give undefined, never 0. Pure.
 */
import type { Usage } from '../core/types.js';
import type { Price } from './price.js';

export interface CostSplit {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
}

const PER_M = 1e-6;

/**
 * USD by kind; undefined without prices or without usage. A cache kind the prices do not name is
 * billed at the input price: those tokens are plain input to a provider that sets no price for them.
 */
export function costOf(price: Price | undefined, usage: Usage | undefined): CostSplit | undefined {
  if (price === undefined || usage?.prompt_tokens === undefined) return undefined;
  const cached = usage.cached_tokens ?? 0;
  const written = usage.cache_write_tokens ?? 0;
  const written1h = Math.min(usage.cache_write_1h_tokens ?? 0, written);
  const uncached = Math.max(0, usage.prompt_tokens - cached - written);
  const write = price.cache_write ?? price.input;
  return {
    input: uncached * price.input * PER_M,
    cache_read: cached * (price.cache_read ?? price.input) * PER_M,
    cache_write: ((written - written1h) * write + written1h * (price.cache_write_1h ?? write)) * PER_M,
    output: (usage.completion_tokens ?? 0) * price.output * PER_M,
  };
}

/**
 * USD for storing explicit context caches for `tokenHours` (tokens held times hours held); undefined
 * when the route has no storage price (unknown, never 0).
 */
export function storageCostOf(price: Price | undefined, tokenHours: number): number | undefined {
  if (price?.cache_storage === undefined) return undefined;
  return tokenHours * price.cache_storage * PER_M;
}

export type CostSource = 'prices' | 'provider';

/** A reply's total: at the route's prices when it has them, else as the provider reported it, else unknown. */
export function totalCost(price: Price | undefined, usage: Usage | undefined): { usd: number; source: CostSource } | undefined {
  const split = costOf(price, usage);
  if (split !== undefined) return { usd: split.input + split.cache_read + split.cache_write + split.output, source: 'prices' };
  if (usage?.cost_usd !== undefined) return { usd: usage.cost_usd, source: 'provider' };
  return undefined;
}

/**
 * USD the provider's cache saved on a reply: each cached token at the cache-read price instead of
 * the input price (the gross saving; a write premium shows in the cost). Undefined when the route
 * has no prices or the reply reported no cached tokens.
 */
export function cacheSavingOf(price: Price | undefined, usage: Usage | undefined): number | undefined {
  if (price === undefined || usage?.cached_tokens === undefined) return undefined;
  return (usage.cached_tokens * Math.max(0, price.input - (price.cache_read ?? price.input))) * PER_M;
}
