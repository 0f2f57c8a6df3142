/** Client keys' budgets and rates: the token bucket, the UTC windows, the charges and the ledger that keeps them. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientKey } from '../../src/config/types.js';
import { isProxyError, type ProxyError } from '../../src/core/errors.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { periodEnd, periodStart } from '../../src/proxy/budget-period.js';
import { ClientLimits, type SpendSink } from '../../src/proxy/client-limits.js';
import { foldBefore, LEDGER_FILE, parseLedger, SpendLedger, type SpendEntry } from '../../src/proxy/spend-ledger.js';
import { TokenBucket } from '../../src/proxy/token-bucket.js';

const T0 = Date.UTC(2026, 4, 31, 23, 59, 0);
/** $1 per million input tokens: a reply with N prompt tokens costs N micro-dollars. */
const route = { price: { input: 1, cache_read: 0, cache_write: 0, output: 0 } };
const usd = (n: number) => ({ prompt_tokens: n * 1e6 });

function key(over: Partial<ClientKey> = {}): ClientKey {
  return { name: 'dev', sha256: '0'.repeat(64), models: undefined, budgetPeriod: 'month', ...over };
}

function refusal(fn: () => unknown): ProxyError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!isProxyError(err)) throw err;
    return err;
  }
}

class MemorySink implements SpendSink {
  entries: SpendEntry[] = [];
  synced = 0;
  append(entry: SpendEntry): void {
    this.entries.push(entry);
  }
  async sync(): Promise<void> {
    this.synced = this.entries.length;
  }
}

describe('TokenBucket', () => {
  it('lets a minute\'s worth through at once, then one per 60/N seconds', () => {
    const bucket = new TokenBucket(3, 0);
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([0, 0, 0]);
    expect(bucket.take(0)).toBe(20_000);
    expect(bucket.take(19_999)).toBe(1);
    expect(bucket.take(20_000)).toBe(0);
    expect(bucket.take(20_000)).toBeGreaterThan(19_000);
  });

  it('never holds more than a minute\'s worth, and a clock that steps back refills nothing', () => {
    const bucket = new TokenBucket(2, 0);
    expect(bucket.take(0) + bucket.take(0)).toBe(0);
    expect(bucket.take(3_600_000)).toBe(0);
    expect(bucket.take(3_600_000)).toBe(0);
    expect(bucket.take(3_600_000)).toBe(30_000);
    expect(bucket.take(0)).toBe(30_000);
  });
});

describe('budget windows (UTC)', () => {
  it('a day and a month start and end at UTC midnight; total has no end', () => {
    expect(new Date(periodStart('day', T0)).toISOString()).toBe('2026-05-31T00:00:00.000Z');
    expect(new Date(periodEnd('day', T0)!).toISOString()).toBe('2026-06-01T00:00:00.000Z');
    expect(new Date(periodStart('month', T0)).toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(new Date(periodEnd('month', Date.UTC(2026, 11, 31))!).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodStart('total', T0)).toBe(Number.NEGATIVE_INFINITY);
    expect(periodEnd('total', T0)).toBeUndefined();
  });
});

describe('ClientLimits', () => {
  it('answers the request that crosses the budget and refuses the next, with a 429 no client retries', async () => {
    let now = T0;
    const sink = new MemorySink();
    const metrics = createMetrics({ defaults: false });
    const k = key({ budgetUsd: 1, budgetPeriod: 'total' });
    const limits = new ClientLimits([k], [], { now: () => now, ledger: sink, metrics });
    limits.admit(k);
    await limits.charge(k, route, usd(0.75));
    limits.admit(k);
    await limits.charge(k, route, usd(0.75));
    expect(limits.spent(k)).toBeCloseTo(1.5);
    now += 365 * 86_400_000;
    const err = refusal(() => limits.admit(k))!;
    expect([err.status, err.code, err.type]).toEqual([429, 'budget_exceeded', 'insufficient_quota']);
    expect(err.headers['x-should-retry']).toBe('false');
    expect(err.headers['retry-after']).toBeUndefined();
    expect(err.message).toContain('1.5 USD of its 1 USD budget for all time');
    expect(sink.entries.map((e) => e.usd)).toEqual([0.75, 0.75]);
    expect(sink.synced).toBe(2);
    const text = await metrics.registry.metrics();
    expect(text).toContain('proxy_client_spend_usd_total{client="dev"} 1.5');
    expect(text).toContain('proxy_client_refused_total{client="dev",reason="budget"} 1');
  });

  it('a day\'s budget starts again at UTC midnight, and says when in retry-after', async () => {
    let now = T0;
    const k = key({ budgetUsd: 1, budgetPeriod: 'day' });
    const limits = new ClientLimits([k], [], { now: () => now });
    await limits.charge(k, route, usd(2));
    const err = refusal(() => limits.admit(k))!;
    expect(err.code).toBe('budget_exceeded');
    expect(err.headers['retry-after']).toBe('60');
    now += 60_000;
    expect(refusal(() => limits.admit(k))).toBeUndefined();
    expect(limits.spent(k)).toBe(0);
  });

  it('a reply of unknown cost counts 0; a provider\'s own figure counts without prices; nothing goes to the ledger for 0', async () => {
    const sink = new MemorySink();
    const k = key({ budgetUsd: 1 });
    const limits = new ClientLimits([k], [], { now: () => T0, ledger: sink });
    await limits.charge(k, {}, { prompt_tokens: 10_000_000 });
    await limits.charge(k, route, undefined);
    await limits.charge(k, route, { prompt_tokens: 0 });
    expect(limits.spent(k)).toBe(0);
    await limits.charge(k, {}, { prompt_tokens: 10, cost_usd: 0.25 });
    expect(limits.spent(k)).toBe(0.25);
    expect(sink.entries).toHaveLength(1);
  });

  it('over its rate a key gets a 429 rate_limited with retry-after, counted by reason; other keys are not touched', () => {
    let now = T0;
    const metrics = createMetrics({ defaults: false });
    const slow = key({ name: 'slow', requestsPerMinute: 2 });
    const free = key({ name: 'free' });
    const limits = new ClientLimits([slow, free], [], { now: () => now, metrics });
    limits.admit(slow);
    limits.admit(slow);
    const err = refusal(() => limits.admit(slow))!;
    expect([err.status, err.code, err.headers['retry-after']]).toEqual([429, 'rate_limited', '30']);
    for (let i = 0; i < 100; i++) limits.admit(free);
    now += 30_000;
    expect(refusal(() => limits.admit(slow))).toBeUndefined();
    return metrics.registry.metrics().then((text) => expect(text).toContain('proxy_client_refused_total{client="slow",reason="rate"} 1'));
  });

  it('a refusal for budget takes no token from the bucket', () => {
    const k = key({ budgetUsd: 0, requestsPerMinute: 1 });
    const limits = new ClientLimits([k], [], { now: () => T0 });
    expect(refusal(() => limits.admit(k))?.code).toBe('budget_exceeded');
    expect(refusal(() => limits.admit(k))?.code).toBe('budget_exceeded');
  });

  it('rebuilds each key\'s spend from the ledger\'s entries of its current window', () => {
    const month = key({ name: 'm', budgetUsd: 10 });
    const day = key({ name: 'd', budgetUsd: 10, budgetPeriod: 'day' });
    const entries: SpendEntry[] = [
      { ts: Date.UTC(2026, 3, 30), client: 'm', usd: 100 },
      { ts: Date.UTC(2026, 4, 2), client: 'm', usd: 2 },
      { ts: Date.UTC(2026, 4, 30), client: 'd', usd: 5 },
      { ts: Date.UTC(2026, 4, 31, 1), client: 'd', usd: 3 },
      { ts: Date.UTC(2026, 4, 31, 2), client: 'gone', usd: 50 },
    ];
    const limits = new ClientLimits([month, day], entries, { now: () => T0 });
    expect(limits.spent(month)).toBe(2);
    expect(limits.spent(day)).toBe(3);
  });
});

describe('the spend ledger', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('reads whole lines only: a torn last line (a crash mid-append) is left out and cut off', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pp-ledger-'));
    const file = join(dir, LEDGER_FILE);
    await writeFile(file, '{"ts":"2026-05-31T10:00:00.000Z","client":"dev","usd":0.5}\n{"ts":"2026-05-31T11:00:00.000Z","cli');
    const { ledger, entries } = await SpendLedger.open(dir, { durable: true, now: T0 });
    expect(entries).toEqual([{ ts: Date.UTC(2026, 4, 31, 10), client: 'dev', usd: 0.5 }]);
    ledger.append({ ts: T0, client: 'dev', usd: 0.25 });
    await ledger.sync();
    await ledger.close();
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.slice(0, 2).map((l) => JSON.parse(l) as SpendEntry).map((e) => e.usd)).toEqual([0.5, 0.25]);
    const again = await SpendLedger.open(dir, { durable: true, now: T0 });
    expect(again.entries.map((e) => e.usd)).toEqual([0.5, 0.25]);
    await again.ledger.close();
  });

  it('folds the lines before the current month into one per client, so a total budget keeps its sum', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pp-ledger-'));
    const old = [1, 2, 3].map((d) => ({ ts: Date.UTC(2026, 2, d), client: 'dev', usd: d }));
    const recent = { ts: Date.UTC(2026, 4, 3), client: 'dev', usd: 0.5 };
    await writeFile(join(dir, LEDGER_FILE), [...old, recent].map((e) => `${JSON.stringify({ ...e, ts: new Date(e.ts).toISOString() })}\n`).join(''));
    const { ledger, entries } = await SpendLedger.open(dir, { durable: false, now: T0 });
    await ledger.close();
    expect(entries).toEqual([{ ts: Date.UTC(2026, 2, 3), client: 'dev', usd: 6 }, recent]);
    expect(parseLedger(await readFile(join(dir, LEDGER_FILE), 'utf8')).entries).toEqual(entries);
    const total = key({ budgetPeriod: 'total' });
    expect(new ClientLimits([total], entries, { now: () => T0 }).spent(total)).toBe(6.5);
    expect(new ClientLimits([key()], entries, { now: () => T0 }).spent(key())).toBe(0.5);
  });

  it('foldBefore keeps clients apart and leaves the recent lines as they were', () => {
    const e = (client: string, d: number, usd: number) => ({ ts: Date.UTC(2026, 0, d), client, usd });
    expect(foldBefore([e('a', 1, 1), e('b', 2, 2), e('a', 3, 4), e('a', 20, 8)], Date.UTC(2026, 0, 10))).toEqual([e('a', 3, 5), e('b', 2, 2), e('a', 20, 8)]);
  });
});
