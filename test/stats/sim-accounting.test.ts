/**
 * The stats of a session served through the proxy equal the simulator's own accounting of the
 * same trace: prompt and cached tokens per request, and the totals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../bench/agent.js';
import { LogStore } from '../../src/log/store.js';
import { listSessionSummaries, readSessionStats } from '../../src/stats/collect.js';
import { pricesFromConfig } from '../../src/stats/prices.js';
import type { SessionStats } from '../../src/stats/session-totals.js';
import { SIM_PRICE, startStatsWorld, type StatsWorld } from './world.js';

let w: StatsWorld;
let stats: SessionStats;

beforeAll(async () => {
  w = await startStatsWorld();
  await runAgent(w.client, 'sim', { requests: 15, stream: true, seed: 3 });
  const store = new LogStore(w.dataDir);
  const ids = await store.listSessions();
  expect(ids).toHaveLength(1);
  stats = await readSessionStats(store, ids[0]!, pricesFromConfig(w.config));
});
afterAll(async () => {
  await w?.close();
});

describe('stats against the simulator', () => {
  it('prompt, cached and completion tokens per request are what the simulator counted', () => {
    const served = w.sim.requests.filter((r) => r.status === 200);
    expect(served).toHaveLength(15);
    expect(stats.requests.map((r) => r.status)).toEqual(Array(15).fill('ok'));
    expect(stats.requests.map((r) => r.prompt_tokens)).toEqual(served.map((r) => r.promptTokens));
    expect(stats.requests.map((r) => r.cached_tokens)).toEqual(served.map((r) => r.cachedTokens));
    expect(stats.requests.map((r) => r.completion_tokens)).toEqual(served.map((r) => r.completionTokens));
  });

  it('the totals are the simulator\'s totals, and the rate is their quotient', () => {
    const sim = w.sim.stats();
    const s = stats.session;
    expect(s.requests).toBe(15);
    expect(s.prompt_tokens).toBe(sim.promptTokens);
    expect(s.cached_tokens).toBe(sim.cachedTokens);
    expect(s.completion_tokens).toBe(sim.completionTokens);
    expect(sim.cachedTokens).toBeGreaterThan(0);
    expect(s.token_cache_rate).toBeCloseTo(sim.cachedTokens / sim.promptTokens, 12);
    // The simulator reports no cache writes: unknown, not 0.
    expect(s.cache_write_tokens).toBeNull();
  });

  it('reuse is each request\'s cached tokens over its predecessor\'s prompt, as the simulator saw them', () => {
    const served = w.sim.requests.filter((r) => r.status === 200);
    for (let i = 1; i < served.length; i++) {
      expect(stats.requests[i]!.reuse).toBeCloseTo(served[i]!.cachedTokens / served[i - 1]!.promptTokens, 12);
    }
    expect(stats.requests[0]!.reuse).toBeNull();
  });

  it('costs are at the configured prices, from the simulator\'s token counts', () => {
    const sim = w.sim.stats();
    const want = ((sim.promptTokens - sim.cachedTokens) * SIM_PRICE.input + sim.cachedTokens * SIM_PRICE.cache_read + sim.completionTokens * SIM_PRICE.output) / 1e6;
    expect(stats.session.cost_usd).toBeCloseTo(want, 12);
    expect(stats.session.cost_unknown).toBe(0);
    expect(stats.requests.every((r) => r.cost_source === 'prices')).toBe(true);
  });

  it('records the break causes the proxy logged: the first request, appends, and the window\'s trims', () => {
    const causes = stats.requests.map((r) => r.cause);
    expect(causes[0]).toBe('first');
    expect(causes).toContain('none');
    expect(causes).toContain('trim');
  });

  it('the session list carries the same totals', async () => {
    const report = await listSessionSummaries(new LogStore(w.dataDir), pricesFromConfig(w.config));
    expect(report.unreadable).toEqual([]);
    expect(report.sessions).toEqual([stats.session]);
  });
});
