/**
 * Each client key over every session (`proxy sessions`): requests, tokens and cost summed, the
 * token cache rate sum over sum across sessions (not a mean of the sessions' rates), unknown kept
 * unknown, the dearest key first; and the table a person reads.
 */
import { describe, expect, it } from 'vitest';
import type { Price } from '../../src/config/types.js';
import { keyTotals } from '../../src/stats/key-totals.js';
import type { PriceBook } from '../../src/stats/prices.js';
import { renderSessions } from '../../src/stats/render.js';
import { sessionStats } from '../../src/stats/session-totals.js';
import { LogBuilder } from './events.js';

const PRICE: Price = { input: 2, cache_read: 0.2, cache_write: 2.5, output: 10 };
const priced: PriceBook = (route) => (route === 'priced' ? PRICE : undefined);

describe('keyTotals', () => {
  // alice: a session that reads its cache well and one that does not; bob: one session, half of it
  // on an unpriced route; one request with no key at all.
  const s1 = sessionStats('s1', new LogBuilder()
    .turn({ prompt_tokens: 100_000, cached_tokens: 90_000, completion_tokens: 100 }, { key: 'alice' })
    .turn({ prompt_tokens: 100_000, cached_tokens: 99_000, completion_tokens: 100 }, { key: 'alice' })
    .turn({ prompt_tokens: 50 }).events, priced).session;
  const s2 = sessionStats('s2', new LogBuilder()
    .turn({ prompt_tokens: 800_000, cached_tokens: 0, completion_tokens: 100 }, { key: 'alice' }).events, priced).session;
  const s3 = sessionStats('s3', new LogBuilder()
    .turn({ prompt_tokens: 1000, cached_tokens: 500, completion_tokens: 10 }, { key: 'bob' })
    .turn({ prompt_tokens: 1000 }, { key: 'bob', route: 'free' }).events, priced).session;
  const totals = keyTotals([s1, s2, s3]);

  it('sums each key over its sessions, its cache rate over its replies whichever session, dearest first', () => {
    expect(totals.map((t) => t.name)).toEqual(['alice', 'bob']);
    const [alice, bob] = totals as [typeof totals[0], typeof totals[0]];
    expect(alice).toMatchObject({ sessions: 2, requests: 3, prompt_tokens: 1_000_000, cached_tokens: 189_000, completion_tokens: 300, cost_unknown: 0 });
    // 189k of 1M, not the mean of the sessions' 94.5% and 0%.
    expect(alice.token_cache_rate).toBeCloseTo(0.189, 12);
    expect(alice.cost_usd).toBeCloseTo(s1.keys[0]!.cost_usd! + s2.keys[0]!.cost_usd!, 12);
    // bob's second reply reported no cache read: out of the rate; its route has no price: unknown.
    expect(bob).toMatchObject({ sessions: 1, requests: 2, prompt_tokens: 2000, cached_tokens: 500, token_cache_rate: 0.5, cost_unknown: 1 });
    // The request without a key is in no entry.
    expect(totals.reduce((n, t) => n + t.requests, 0)).toBe(5);
  });

  it('no key anywhere: none', () => {
    expect(keyTotals([sessionStats('s', new LogBuilder().turn({ prompt_tokens: 1 }).events, priced).session])).toEqual([]);
  });

  it('the sessions table ends with one line per key', () => {
    const text = renderSessions({ sessions: [s1, s2, s3], keys: totals, unreadable: [] });
    const lines = text.split('\n');
    const at = lines.indexOf('per client key, over every session:');
    expect(at).toBeGreaterThan(3);
    expect(lines[at + 1]).toMatch(/^key\s+sessions\s+requests\s+prompt tokens\s+cached tokens\s+token cache rate\s+cost$/);
    expect(lines[at + 2]).toMatch(/^alice\s+2\s+3\s+1,000,000\s+189,000\s+18\.9%\s+\$\d+\.\d{4}$/);
    expect(lines[at + 3]).toMatch(/^bob\s+1\s+2\s+2,000\s+500\s+50\.0%\s+\$\d+\.\d{4}\+$/);
  });
});
