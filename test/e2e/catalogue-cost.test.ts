/**
 * Cost out of the box: a route the config gives no prices (a provider/model name the config does
 * not list) is costed at the catalogue's, labelled by the catalogue's model id, and its prices show
 * with their source, as the Grafana cost-per-model panels read them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorld, tag, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => world.close());

const series = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
};

it('costs a provider/model route at the catalogue\'s prices, labelled by the catalogue id', async () => {
  const r = await world.client.chat.completions.create({ model: 'ds/deepseek-v4-pro', messages: [{ role: 'user', content: tag('price me') }] });
  const u = r.usage!;
  const cached = (u as { prompt_cache_hit_tokens?: number }).prompt_cache_hit_tokens ?? u.prompt_tokens_details?.cached_tokens ?? 0;
  const text = await (await fetch(`${world.proxy.url}/metrics`)).text();
  const labels = { provider: 'ds', model: 'ds/deepseek-v4-pro' };
  // deepseek-v4-pro in the pinned catalogue: input 0.66, cache read 0.022, output 1.98 USD per million.
  const input = series(text, 'proxy_cost_usd_total', { ...labels, kind: 'input' });
  const output = series(text, 'proxy_cost_usd_total', { ...labels, kind: 'output' });
  expect(input).toBeCloseTo(((u.prompt_tokens - cached) * 0.66) / 1e6, 12);
  expect(output).toBeCloseTo((u.completion_tokens * 1.98) / 1e6, 12);
  expect(series(text, 'proxy_model_price_usd_per_million', { ...labels, kind: 'input', source: 'catalogue' })).toBe(0.66);
  expect(series(text, 'proxy_model_price_usd_per_million', { ...labels, kind: 'output', source: 'catalogue' })).toBe(1.98);
});

it('records no cost and no price for a route neither config nor catalogue prices', async () => {
  await world.client.chat.completions.create({ model: 'oa', messages: [{ role: 'user', content: tag('unpriced') }] });
  const text = await (await fetch(`${world.proxy.url}/metrics`)).text();
  expect(series(text, 'proxy_requests_total', { model: 'oa', status: '200' })).toBe(1);
  expect(series(text, 'proxy_cost_usd_total', { model: 'oa' })).toBeUndefined();
  expect(series(text, 'proxy_model_price_usd_per_million', { model: 'oa' })).toBeUndefined();
});
