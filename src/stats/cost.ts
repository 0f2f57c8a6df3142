/**
 * A reply's cost by kind at a route's prices (USD per million tokens): the one place cost is
 * computed, for the metrics, `proxy stats` and `proxy sessions` alike. Pure.
 */
import type { Route } from '../config/routes.js';
import type { Usage } from '../core/types.js';

export interface CostSplit {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
}

/** USD by kind at the route's prices; undefined without prices or without usage. */
export function costOf(route: Pick<Route, 'price'>, usage: Usage | undefined): CostSplit | undefined {
  const price = route.price;
  if (price === undefined || usage?.prompt_tokens === undefined) return undefined;
  const cached = usage.cached_tokens ?? 0;
  const written = usage.cache_write_tokens ?? 0;
  const written1h = Math.min(usage.cache_write_1h_tokens ?? 0, written);
  const uncached = Math.max(0, usage.prompt_tokens - cached - written);
  const perM = 1e-6;
  return {
    input: uncached * price.input * perM,
    cache_read: cached * price.cache_read * perM,
    cache_write: ((written - written1h) * price.cache_write + written1h * (price.cache_write_1h ?? price.cache_write)) * perM,
    output: (usage.completion_tokens ?? 0) * price.output * perM,
  };
}

