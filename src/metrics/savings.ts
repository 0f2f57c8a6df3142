/**
 * What the provider's cache saved on a reply, into proxy_cost_saved_usd_total (pricing/cost.ts
 * computes it). Prometheus knows no prices, so the dashboards' "cost without caching" is
 * proxy_cost_usd_total + this counter. Without prices or usage nothing is recorded.
 */
import type { Usage } from '../core/types.js';
import { cacheSavingOf } from '../pricing/cost.js';
import type { Price } from '../pricing/price.js';
import type { Metrics } from './registry.js';
import { counterOf, type RouteLabels } from './series.js';

export function recordCacheSaving(
  metrics: Pick<Metrics, 'costSaved'>,
  labels: RouteLabels,
  route: { price?: Price },
  usage: Usage | undefined,
): void {
  const saved = cacheSavingOf(route.price, usage);
  // inc(0) still creates the series: a priced route shows "saved nothing" rather than no data.
  if (saved !== undefined) counterOf(metrics.costSaved, labels).inc(saved);
}
