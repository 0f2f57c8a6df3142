/**
 * The stats fold: per-request figures, the token cache rate as a sum over a sum (never a mean of
 * ratios), unknown usage kept unknown (never 0), reuse of the predecessor's prompt, and costs at
 * the config's prices, else the provider's, else unknown.
 */
import { describe, expect, it } from 'vitest';
import type { Price } from '../../src/config/types.js';
import { NO_PRICES, type PriceBook } from '../../src/stats/prices.js';
import { requestRows } from '../../src/stats/request-rows.js';
import { renderSessions, renderStats } from '../../src/stats/render.js';
import { sessionStats } from '../../src/stats/session-totals.js';
import { LogBuilder } from './events.js';

const PRICE: Price = { input: 2, cache_read: 0.2, cache_write: 2.5, output: 10 };
const priced: PriceBook = (route) => (route === 'priced' ? PRICE : undefined);

describe('token cache rate', () => {
  it('is sum(cached) / sum(prompt), not the mean of per-request rates', () => {
    const log = new LogBuilder().turn({ prompt_tokens: 100, cached_tokens: 0 }).turn({ prompt_tokens: 900, cached_tokens: 900 });
    const { session } = sessionStats('s', log.events, NO_PRICES);
    expect(session.token_cache_rate).toBeCloseTo(0.9, 12); // the mean of 0% and 100% would be 50%
    expect(session.rate_basis).toEqual({ replies: 2, prompt_tokens: 1000, cached_tokens: 900 });
  });

  it('leaves out replies that reported no cache read, and replies with no usage at all', () => {
    const log = new LogBuilder()
      .turn({ prompt_tokens: 1000, cached_tokens: 500 })
      .turn({ prompt_tokens: 4000 }) // prompt reported, cache read not: not in the rate
      .turn(undefined); // nothing reported
    const { session, requests } = sessionStats('s', log.events, NO_PRICES);
    expect(session.token_cache_rate).toBe(0.5);
    expect(session.prompt_tokens).toBe(5000); // the prompt total still counts every reported prompt
    expect(session.cached_tokens).toBe(500);
    expect(requests[1]!.cached_tokens).toBeNull();
    expect(requests[2]!.prompt_tokens).toBeNull();
    expect(requests[2]!.cost_usd).toBeNull();
  });

  it('a reported cache read of 0 against a positive prompt is 0%', () => {
    const { session } = sessionStats('s', new LogBuilder().turn({ prompt_tokens: 2000, cached_tokens: 0 }).events, NO_PRICES);
    expect(session.token_cache_rate).toBe(0);
    expect(renderSessions({ sessions: [session], keys: [], unreadable: [] })).toMatch(/\b0\.0%/);
  });

  it('is unknown, not 0, when no reply reported usage, or only a zero prompt', () => {
    for (const log of [new LogBuilder().turn(undefined).turn(undefined), new LogBuilder().turn({ prompt_tokens: 0, cached_tokens: 0 }), new LogBuilder()]) {
      const stats = sessionStats('s', log.events, NO_PRICES);
      expect(stats.session.token_cache_rate).toBeNull();
      const table = renderSessions({ sessions: [stats.session], keys: [], unreadable: [] });
      const row = table.split('\n')[1]!;
      expect(row).toContain('unknown');
      expect(row).not.toMatch(/\b0\.0%/);
      expect(renderStats(stats)).toMatch(/token cache rate\s+unknown/);
    }
  });

  it('with no usage at all, token totals are unknown rather than 0', () => {
    const { session } = sessionStats('s', new LogBuilder().turn(undefined).events, NO_PRICES);
    expect(session.prompt_tokens).toBeNull();
    expect(session.cached_tokens).toBeNull();
    expect(session.cost_usd).toBeNull();
    expect(session.cost_unknown).toBe(1);
  });
});

describe('request rows', () => {
  it('reuse is cached over the previous completed reply\'s prompt; errors and aborts do not become predecessors', () => {
    const log = new LogBuilder()
      .turn({ prompt_tokens: 2000, cached_tokens: 0 }, { cause: 'first' })
      .failed(500)
      .turn({ prompt_tokens: 3000, cached_tokens: 1920 }, { cause: 'none' })
      .turn({ prompt_tokens: 100 }, { aborted: true })
      .turn({ prompt_tokens: 3500, cached_tokens: 3000 }, { cause: 'trim' });
    const rows = requestRows(log.events, NO_PRICES);
    expect(rows.map((r) => r.status)).toEqual(['ok', 'error', 'ok', 'aborted', 'ok']);
    expect(rows[0]!.reuse).toBeNull();
    expect(rows[1]!.error).toBe('500');
    expect(rows[2]!.reuse).toBeCloseTo(1920 / 2000, 12);
    expect(rows[4]!.reuse).toBeCloseTo(3000 / 3000, 12);
    expect(rows.map((r) => r.cause)).toEqual(['first', null, 'none', null, 'trim']);
    const { session } = sessionStats('s', log.events, NO_PRICES);
    expect(session).toMatchObject({ requests: 5, replies: 4, errors: 1, aborted: 1 });
  });

  it('reuse is unknown when the predecessor reported no prompt', () => {
    const rows = requestRows(new LogBuilder().turn(undefined).turn({ prompt_tokens: 10, cached_tokens: 5 }).events, NO_PRICES);
    expect(rows[1]!.reuse).toBeNull();
  });

  it('costs at the config price when the route has one, else the provider\'s figure, else unknown', () => {
    const log = new LogBuilder()
      .turn({ prompt_tokens: 1_000_000, cached_tokens: 600_000, cache_write_tokens: 100_000, completion_tokens: 1000, cost_usd: 99 })
      .turn({ prompt_tokens: 1000, cost_usd: 0.0042 }, { route: 'sim/free' })
      .turn({ prompt_tokens: 1000 }, { route: 'sim/free' });
    const rows = requestRows(log.events, priced);
    // 300k uncached x 2 + 600k read x 0.2 + 100k written x 2.5 + 1000 out x 10, per million.
    expect(rows[0]!.cost_usd).toBeCloseTo(0.6 + 0.12 + 0.25 + 0.01, 10);
    expect(rows[0]!.cost_source).toBe('prices');
    expect(rows[1]!).toMatchObject({ cost_usd: 0.0042, cost_source: 'provider' });
    expect(rows[2]!).toMatchObject({ cost_usd: null, cost_source: null });
    const { session } = sessionStats('s', log.events, priced);
    expect(session.cost_usd).toBeCloseTo(0.98 + 0.0042, 10);
    expect(session.cost_unknown).toBe(1);
    expect(renderSessions({ sessions: [session], keys: [], unreadable: [] })).toContain('$0.9842+');
    // Without prices, the provider's own figures.
    expect(sessionStats('s', log.events, NO_PRICES).session.cost_usd).toBeCloseTo(99.0042, 10);
  });

  it('lists the routes used, first use first, and the first and last times', () => {
    const log = new LogBuilder().turn({ prompt_tokens: 1 }).turn({ prompt_tokens: 1 }, { route: 'other' }).turn({ prompt_tokens: 1 });
    const { session } = sessionStats('s', log.events, NO_PRICES);
    expect(session.models).toEqual(['priced', 'other']);
    expect(session.started).toBe(log.events[0]!.ts);
    expect(session.last_active).toBe(log.events.at(-1)!.ts);
  });

  it('a reply whose request is not in the events read is skipped, not misattributed', () => {
    const log = new LogBuilder().turn({ prompt_tokens: 10, cached_tokens: 0 }).turn({ prompt_tokens: 20, cached_tokens: 10 });
    const tail = log.events.slice(log.events.findIndex((e) => e.type === 'llm.req') + 2); // cut before the first reply
    const rows = requestRows(tail, NO_PRICES);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.prompt_tokens).toBe(20);
  });
});

describe('forks', () => {
  it('count only their own requests: the parent\'s copied events set the predecessor, nothing more', () => {
    const parent = new LogBuilder().turn({ prompt_tokens: 1000, cached_tokens: 0 }).turn({ prompt_tokens: 2000, cached_tokens: 1000 });
    const forkAt = parent.events.at(-1)!.seq + 1;
    const fork = new LogBuilder();
    fork.events.length = 0;
    for (const e of parent.events) fork.events.push(e.type === 'session.start' ? { ...e, parent: { session: 'p', seq: forkAt } } : e);
    const child = new LogBuilder().turn({ prompt_tokens: 2500, cached_tokens: 1920 }).events.slice(1)
      .map((e, i) => ({ ...e, seq: forkAt + i, ...(e.type === 'llm.resp' ? { req: forkAt + 1 } : {}) }) as typeof e);
    fork.events.push(...child);
    const { session, requests } = sessionStats('fork', fork.events, NO_PRICES);
    expect(requests).toHaveLength(1);
    expect(session.prompt_tokens).toBe(2500);
    expect(requests[0]!.reuse).toBeCloseTo(1920 / 2000, 12);
  });
});

describe('thinking blocks the upstream dropped (docs/decisions/0009)', () => {
  it('are counted per reply and in the totals; a reply that names none is 0, a request without a reply unknown', () => {
    const log = new LogBuilder()
      .turn({ prompt_tokens: 100, cached_tokens: 0 })
      .turn({ prompt_tokens: 200, cached_tokens: 0 }, { cause: 'trim', droppedBlocks: 2 })
      .turn({ prompt_tokens: 300, cached_tokens: 200 })
      .turn({ prompt_tokens: 400, cached_tokens: 0 }, { cause: 'system', droppedBlocks: 1 });
    log.failed(529);
    const { session, requests } = sessionStats('s', log.events, NO_PRICES);
    expect(requests.map((r) => r.dropped_blocks)).toEqual([0, 2, 0, 1, null]);
    expect(session.dropped_blocks).toBe(3);
    const text = renderStats({ session, requests });
    const seqs = requests.filter((r) => (r.dropped_blocks ?? 0) > 0).map((r) => r.seq);
    expect(text).toContain(`thinking blocks dropped  3 by the upstream, bound to a prefix that changed (seq ${seqs.join(', ')})`);
  });

  it('leave no line in `proxy stats` where none was dropped, and are unknown with no reply at all', () => {
    const some = sessionStats('s', new LogBuilder().turn({ prompt_tokens: 100, cached_tokens: 0 }).events, NO_PRICES);
    expect(some.session.dropped_blocks).toBe(0);
    expect(renderStats(some)).not.toContain('thinking blocks dropped');
    const none = sessionStats('s', new LogBuilder().failed(500).events, NO_PRICES);
    expect(none.session.dropped_blocks).toBeNull();
  });
});
