/**
 * What the provider's cache saved on a reply, at the route's configured prices: each cached
 * token billed at the cache-read price instead of the input price. Prometheus knows no prices,
 * so the dashboards' "cost without caching" is proxy_cost_usd_total + this counter. It is the
 * gross saving: the premium some providers charge for cache writes shows in
 * proxy_cost_usd_total{kind="cache_write"}, not here. Without prices or usage nothing is recorded.
 */
import type { Price } from '../config/types.js';
import type { Usage } from '../core/types.js';
import type { Metrics } from './registry.js';

/** USD saved, or undefined when the route has no prices or the reply reported no cached tokens. */
export function cacheSavingOf(price: Price | undefined, usage: Usage | undefined): number | undefined {
  if (price === undefined || usage?.cached_tokens === undefined) return undefined;
  return (usage.cached_tokens * Math.max(0, price.input - price.cache_read)) / 1e6;
}

export function recordCacheSaving(
  metrics: Pick<Metrics, 'costSaved'>,
  labels: { provider: string; model: string },
  route: { price?: Price },
  usage: Usage | undefined,
): void {
  const saved = cacheSavingOf(route.price, usage);
  // inc(0) still creates the series: a priced route shows "saved nothing" rather than no data.
  if (saved !== undefined) metrics.costSaved.inc(labels, saved);
}
