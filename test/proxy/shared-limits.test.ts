/**
 * One ledger for every replica (src/store/pg/client-ledger.ts): two ClientLimits, each on its own
 * connection pool to one real PostgreSQL, as two replicas are. A budget spent on one is spent on
 * the other; a rate is one bucket; windows roll over at UTC midnight; with requests in flight the
 * overspend is at most theirs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientKey } from '../../src/config/types.js';
import { isProxyError, type ProxyError } from '../../src/core/errors.js';
import { ClientLimits } from '../../src/proxy/client-limits.js';
import { PgStore } from '../../src/store/pg/store.js';
import { startPgServer, type PgServer } from '../store/pg-server.js';

const T0 = Date.UTC(2026, 4, 31, 23, 59, 0);
/** $1 per million input tokens: a reply with N prompt tokens costs N micro-dollars. */
const route = { price: { input: 1, cache_read: 0, cache_write: 0, output: 0 } };
const usd = (n: number) => ({ prompt_tokens: n * 1e6 });

let server: PgServer;
let stores: PgStore[];

beforeAll(async () => {
  server = await startPgServer();
  const url = await server.createDatabase('ledger');
  stores = [await PgStore.connect(url), await PgStore.connect(url)];
}, 120_000);
afterAll(async () => {
  for (const s of stores ?? []) await s.close();
  server?.stop();
});

function key(name: string, over: Partial<ClientKey> = {}): ClientKey {
  return { name, sha256: '0'.repeat(64), models: undefined, budgetPeriod: 'month', ...over };
}

async function refusal(p: void | Promise<void>): Promise<ProxyError | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (!isProxyError(err)) throw err;
    return err;
  }
}

function replicas(keys: ClientKey[], now: () => number): [ClientLimits, ClientLimits] {
  return [new ClientLimits(keys, [], { now, shared: stores[0]!.ledger }), new ClientLimits(keys, [], { now, shared: stores[1]!.ledger })];
}

describe('a ledger shared by replicas', () => {
  it('a budget spent on one replica is spent on the other', async () => {
    const k = key('shared-budget', { budgetUsd: 1, budgetPeriod: 'total' });
    const [a, b] = replicas([k], () => T0);
    await a.admit(k);
    await a.charge(k, route, usd(0.6));
    await b.admit(k);
    await b.charge(k, route, usd(0.6));
    const [ea, eb] = [await refusal(a.admit(k)), await refusal(b.admit(k))];
    expect(ea?.code).toBe('budget_exceeded');
    expect(eb?.code).toBe('budget_exceeded');
    expect(ea!.message).toContain('has spent 1.2 USD of its 1 USD budget for all time');
  });

  it('overspends by at most the requests in flight: twenty admitted at once, charged after', async () => {
    const k = key('in-flight', { budgetUsd: 1, budgetPeriod: 'total' });
    const [a, b] = replicas([k], () => T0);
    // Nine replies of $0.1 charged: $0.9 spent, under budget.
    for (let i = 0; i < 9; i++) await (i % 2 === 0 ? a : b).charge(k, route, usd(0.1));
    // Twenty requests at once on both replicas: each sees $0.9, all are admitted (in flight together).
    const admitted = await Promise.all(Array.from({ length: 20 }, (_, i) => refusal((i % 2 === 0 ? a : b).admit(k))));
    expect(admitted.filter((e) => e === undefined)).toHaveLength(20);
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).charge(k, route, usd(0.1))));
    // Spent $2.9: the budget plus at most what was in flight (20 x $0.1); the next is refused on both.
    const err = await refusal(b.admit(k));
    expect(err?.message).toContain('has spent 2.9 USD');
    expect((await refusal(a.admit(k)))?.code).toBe('budget_exceeded');
  });

  it('one request bucket across replicas, refilled with time', async () => {
    let now = T0;
    const k = key('shared-rate', { requestsPerMinute: 3 });
    const [a, b] = replicas([k], () => now);
    expect(await refusal(a.admit(k))).toBeUndefined();
    expect(await refusal(b.admit(k))).toBeUndefined();
    expect(await refusal(a.admit(k))).toBeUndefined();
    const err = await refusal(b.admit(k));
    expect(err?.code).toBe('rate_limited');
    expect(err?.headers['retry-after']).toBe('20');
    now += 20_000;
    expect(await refusal(b.admit(k))).toBeUndefined();
    expect((await refusal(a.admit(k)))?.code).toBe('rate_limited');
  });

  it('a day budget starts again at UTC midnight; a key over budget takes no token', async () => {
    let now = T0;
    const k = key('daily', { budgetUsd: 0.5, budgetPeriod: 'day', requestsPerMinute: 2 });
    const [a, b] = replicas([k], () => now);
    await a.admit(k);
    await a.charge(k, route, usd(0.5));
    const err = await refusal(b.admit(k));
    expect(err?.code).toBe('budget_exceeded');
    expect(err?.headers['retry-after']).toBe('60');
    now += 60_000;
    // A new day: nothing spent; the bucket still holds the token the refused request did not take.
    expect(await refusal(b.admit(k))).toBeUndefined();
    expect(await refusal(a.admit(k))).toBeUndefined();
    expect((await refusal(a.admit(k)))?.code).toBe('rate_limited');
  });
});
