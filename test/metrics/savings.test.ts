/** The cost-saved series: cached tokens x (input - cache_read) at the route's prices, nothing without them. */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/registry.js';
import { recordCacheSaving } from '../../src/metrics/savings.js';
import { cacheSavingOf } from '../../src/pricing/cost.js';

const PRICE = { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 };
const labels = { provider: 'p', model: 'm' };

async function saved(metrics: ReturnType<typeof createMetrics>): Promise<{ value: number; labels: object }[]> {
  const json = await metrics.registry.getMetricsAsJSON();
  const metric = json.find((m) => m.name === 'proxy_cost_saved_usd_total');
  expect(metric?.type).toBe('counter');
  return metric!.values.map((v) => ({ value: v.value, labels: v.labels }));
}

describe('cache saving', () => {
  it('is cached tokens at the input price less the cache-read price, per million', () => {
    expect(cacheSavingOf(PRICE, { prompt_tokens: 5000, cached_tokens: 2_000_000 })).toBeCloseTo(2 * 2.7, 12);
    expect(cacheSavingOf(PRICE, { prompt_tokens: 5000, cached_tokens: 0 })).toBe(0);
  });

  it('is unknown without prices or without a reported cache read', () => {
    expect(cacheSavingOf(undefined, { cached_tokens: 100 })).toBeUndefined();
    expect(cacheSavingOf(PRICE, { prompt_tokens: 100 })).toBeUndefined();
    expect(cacheSavingOf(PRICE, undefined)).toBeUndefined();
  });

  it('a cache read priced above input saves nothing rather than a negative amount', () => {
    expect(cacheSavingOf({ ...PRICE, cache_read: 5 }, { cached_tokens: 1000 })).toBe(0);
  });

  it('adds to proxy_cost_saved_usd_total by provider and model; a priced zero read still makes the series', async () => {
    const metrics = createMetrics({ defaults: false });
    recordCacheSaving(metrics, labels, { price: PRICE }, { prompt_tokens: 3000, cached_tokens: 0 });
    expect(await saved(metrics)).toEqual([{ value: 0, labels }]);
    recordCacheSaving(metrics, labels, { price: PRICE }, { prompt_tokens: 3000, cached_tokens: 1_000_000 });
    recordCacheSaving(metrics, labels, {}, { prompt_tokens: 3000, cached_tokens: 1_000_000 });
    const [only] = await saved(metrics);
    expect(only!.value).toBeCloseTo(2.7, 12);
  });
});
