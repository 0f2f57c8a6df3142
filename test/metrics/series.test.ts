/** A route's series made once: the same child each time, and every count lands on its own series. */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/registry.js';
import { counterOf, histogramOf, routeLabels } from '../../src/metrics/series.js';

async function values(metrics: ReturnType<typeof createMetrics>, name: string): Promise<{ value: number; labels: object }[]> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).map((v) => ({ value: v.value, labels: v.labels }));
}

describe('a route\'s series', () => {
  const route = { provider: 'up', label: 'fast' };

  it('a route has one labels object, frozen, naming its provider and label', () => {
    const labels = routeLabels(route);
    expect(routeLabels(route)).toBe(labels);
    expect(labels).toEqual({ provider: 'up', model: 'fast' });
    expect(Object.isFrozen(labels)).toBe(true);
    // Another route with the same names is another object: what keeps the children apart is the route.
    expect(routeLabels({ ...route })).not.toBe(labels);
  });

  it('a child is made once per metric, route and added label value', () => {
    const metrics = createMetrics({ defaults: false });
    const labels = routeLabels(route);
    const ok = counterOf(metrics.requests, labels, 'status', '200');
    expect(counterOf(metrics.requests, labels, 'status', '200')).toBe(ok);
    expect(counterOf(metrics.requests, labels, 'status', '500')).not.toBe(ok);
    expect(counterOf(metrics.upstreamErrors, labels, 'status', '200')).not.toBe(ok);
    expect(counterOf(metrics.requests, routeLabels({ provider: 'up', label: 'slow' }), 'status', '200')).not.toBe(ok);
  });

  it('counts land on the series their labels name, as prom-client\'s own calls would', async () => {
    const metrics = createMetrics({ defaults: false });
    const fast = routeLabels(route);
    const slow = routeLabels({ provider: 'up', label: 'slow' });
    counterOf(metrics.requests, fast, 'status', '200').inc();
    counterOf(metrics.requests, fast, 'status', '200').inc();
    counterOf(metrics.requests, fast, 'status', '502').inc();
    counterOf(metrics.requests, slow, 'status', '200').inc();
    counterOf(metrics.promptTokens, fast).inc(120);
    metrics.promptTokens.inc({ provider: 'up', model: 'fast' }, 30);
    histogramOf(metrics.duration, fast, 'phase', 'total').observe(0.004);

    expect(await values(metrics, 'proxy_requests_total')).toEqual(expect.arrayContaining([
      { value: 2, labels: { provider: 'up', model: 'fast', status: '200' } },
      { value: 1, labels: { provider: 'up', model: 'fast', status: '502' } },
      { value: 1, labels: { provider: 'up', model: 'slow', status: '200' } },
    ]));
    expect(await values(metrics, 'proxy_requests_total')).toHaveLength(3);
    // The kept child and a call with a labels object add to one series.
    expect(await values(metrics, 'proxy_prompt_tokens_total')).toEqual([{ value: 150, labels: { provider: 'up', model: 'fast' } }]);
    const counts = (await values(metrics, 'proxy_request_duration_seconds')).filter((v) => (v.labels as { le?: string | number }).le === '+Inf');
    expect(counts).toEqual([{ value: 1, labels: { provider: 'up', model: 'fast', phase: 'total', le: '+Inf' } }]);
  });

  it('a reset registry still counts on the children kept before it', async () => {
    const metrics = createMetrics({ defaults: false });
    const labels = routeLabels(route);
    counterOf(metrics.requests, labels, 'status', '200').inc();
    metrics.registry.resetMetrics();
    counterOf(metrics.requests, labels, 'status', '200').inc();
    expect(await values(metrics, 'proxy_requests_total')).toEqual([{ value: 1, labels: { provider: 'up', model: 'fast', status: '200' } }]);
  });
});
