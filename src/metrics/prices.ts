/**
 * proxy_model_price_usd_per_million: the prices a route is costed at and where each came from
 * (config or the catalogue), so a dashboard can show them beside the cost. Set once per route and
 * metrics registry, when the route first answers.
 */
import type { Figure, PriceKind } from '../pricing/price.js';
import type { Metrics } from './registry.js';

const shown = new WeakMap<Metrics['modelPrice'], Set<string>>();

export function recordPrices(
  metrics: Pick<Metrics, 'modelPrice'>,
  labels: { provider: string; model: string },
  prices: Partial<Record<PriceKind, Figure>>,
): void {
  let seen = shown.get(metrics.modelPrice);
  if (seen === undefined) shown.set(metrics.modelPrice, (seen = new Set()));
  const key = `${labels.provider}\n${labels.model}`;
  if (seen.has(key)) return;
  seen.add(key);
  for (const [kind, figure] of Object.entries(prices)) metrics.modelPrice.set({ ...labels, kind, source: figure.from }, figure.value);
}
