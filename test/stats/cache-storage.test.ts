/**
 * Explicit context caches priced from the log alone (src/stats/cache-storage.ts): each entry held
 * from the request that made it until a request names another or none, else until its last
 * `kept_until`; the token-hours on the request that made it, priced at `price.cache_storage` into
 * its cost, unknown (not 0) without that price; older logs without `kept_until` price nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Price } from '../../src/config/types.js';
import type { HintsRecord } from '../../src/core/events.js';
import { storageByCreator } from '../../src/stats/cache-storage.js';
import type { PriceBook } from '../../src/stats/prices.js';
import { renderStats } from '../../src/stats/render.js';
import { sessionStats } from '../../src/stats/session-totals.js';
import { LogBuilder } from './events.js';

const MIN = 60_000;
const IDLE = 15 * MIN;
const PRICE: Price = { input: 0.3, cache_read: 0.03, output: 2.5, cache_storage: 1 };
const priced: PriceBook = (route) => (route === 'priced' ? PRICE : undefined);
const usage = { prompt_tokens: 2000, cached_tokens: 1500, completion_tokens: 10 };

/** A turn whose request reads `name` (made by it when `created`), kept until the idle time from its time. */
function reads(log: LogBuilder, name: string | undefined, tokens = 1500, created = false, keptUntil = true): LogBuilder {
  // The request is the turn's second event (after its user message).
  const at = log.nextTs + MIN;
  const hints: HintsRecord | undefined = name === undefined ? undefined : {
    gemini_cache: { name, messages: 3, tokens, ...(created ? { created: true as const } : {}), ...(keptUntil ? { kept_until: new Date(at + IDLE).toISOString() } : {}) },
  };
  return log.turn(usage, hints === undefined ? {} : { hints });
}

describe('storage of explicit context caches, from the log', () => {
  it('holds an entry from the request that made it to the idle time after its last use', () => {
    const log = new LogBuilder();
    reads(log, undefined);
    reads(log, 'c1', 1500, true);
    reads(log, 'c1');
    reads(log, 'c1');
    const made = log.events.filter((e) => e.type === 'llm.req')[1]!.seq;
    // Made at request 2, last used 6 minutes later (3 events a turn, a minute apart), then idle 15.
    const byCreator = storageByCreator(log.events);
    expect([...byCreator.keys()]).toStrictEqual([made]);
    expect(byCreator.get(made)).toBeCloseTo((1500 * 21) / 60, 9);
  });

  it('ends an entry where a request names another (replaced at a trim) or none (dropped)', () => {
    const log = new LogBuilder();
    reads(log, 'c1', 1500, true);
    reads(log, 'c1');
    reads(log, 'c2', 900, true); // 6 minutes after c1 was made
    reads(log, undefined); // 3 minutes after c2 was made: dropped
    reads(log, 'c3', 1200, true);
    const reqs = log.events.filter((e) => e.type === 'llm.req').map((e) => e.seq);
    const byCreator = storageByCreator(log.events);
    expect(byCreator.get(reqs[0]!)).toBeCloseTo((1500 * 6) / 60, 9);
    expect(byCreator.get(reqs[2]!)).toBeCloseTo((900 * 3) / 60, 9);
    expect(byCreator.get(reqs[4]!)).toBeCloseTo((1200 * 15) / 60, 9);
  });

  it('goes into the cost of the request that made it, and into the totals and the rendered stats', () => {
    const log = new LogBuilder();
    reads(log, 'c1', 1500, true);
    reads(log, 'c1');
    const { requests, session } = sessionStats('s', log.events, priced);
    const tokenHours = (1500 * 18) / 60;
    const storage = tokenHours * PRICE.cache_storage! / 1e6;
    const tokens = (500 * PRICE.input + 1500 * PRICE.cache_read! + 10 * PRICE.output) / 1e6;
    expect(requests[0]!.storage_token_hours).toBeCloseTo(tokenHours, 9);
    expect(requests[0]!.storage_usd).toBeCloseTo(storage, 12);
    expect(requests[0]!.cost_usd).toBeCloseTo(tokens + storage, 12);
    expect(requests[1]!).toMatchObject({ storage_token_hours: null, storage_usd: null });
    expect(requests[1]!.cost_usd).toBeCloseTo(tokens, 12);
    expect(session.storage_token_hours).toBeCloseTo(tokenHours, 9);
    expect(session.cost_usd).toBeCloseTo(2 * tokens + storage, 12);
    expect(renderStats({ session, requests })).toMatch(/cache storage\s+450\.0 token-hours \(\$0\.000[45], in the cost above\)/);
  });

  it('is unknown, never 0, on a route without a storage price: the cost of the request that made it is unknown', () => {
    const log = new LogBuilder('other');
    reads(log, 'c1', 1500, true);
    const cheap: PriceBook = () => ({ input: 0.3, output: 2.5 });
    const { requests, session } = sessionStats('s', log.events, cheap);
    expect(requests[0]!.storage_token_hours).toBeGreaterThan(0);
    expect(requests[0]!.storage_usd).toBeNull();
    expect(requests[0]!.cost_usd).toBeNull();
    expect(session.cost_unknown).toBe(1);
    expect(renderStats({ session, requests })).toMatch(/cache storage .*\(cost unknown/);
  });

  it('prices nothing from a log written before kept_until was recorded', () => {
    const log = new LogBuilder();
    reads(log, 'c1', 1500, true, false);
    reads(log, 'c1', 1500, false, false);
    expect(storageByCreator(log.events).size).toBe(0);
    expect(sessionStats('s', log.events, priced).session.storage_token_hours).toBeNull();
  });
});
