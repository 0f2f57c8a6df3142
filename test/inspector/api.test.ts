/**
 * The inspector's JSON against what the log holds: a session's figures equal `proxy stats
 * SESSION --json`'s (readSessionStats over the same store), the list sorts, filters and pages, a
 * request is rebuilt with its digest verified and its first difference named as `proxy diff` does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { listSessionSummaries, readSessionStats } from '../../src/stats/collect.js';
import { pricesFromConfig } from '../../src/stats/prices.js';
import { loadConfig } from '../../src/config/load.js';
import { join } from 'node:path';
import { conversation, getJson, startWorld, turn, type Json, type Msg, type World } from './world.js';

let w: World;
let ids: string[];

beforeAll(async () => {
  w = await startWorld();
  await conversation(w, 'alpha', 4, 'pd');
  await conversation(w, 'beta', 2, 'oa');
  const gamma = await conversation(w, 'gamma', 2);
  // The client drops its first user turn: the log records a rewrite, the request's cause says so.
  gamma.splice(1, 2);
  gamma.push({ role: 'user', content: 'gamma after the edit [[say edited]]' } as Msg);
  await turn(w, gamma);
  ids = await w.proxy.store.listSessions();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

type Page = { total: number; offset: number; limit: number; items: Record<string, unknown>[] };

async function sessionOf(tag: string): Promise<string> {
  const page = await getJson<Page>(w, '/api/sessions?limit=500');
  for (const item of page.body.items) {
    const detail = await getJson<{ requests: unknown[] }>(w, `/api/sessions/${item.id as string}`);
    const req = await getJson<{ upstream: { messages: { content: unknown }[] } }>(w, `/api/sessions/${item.id as string}/requests/${(detail.body.requests[0] as { seq: number }).seq}`);
    if (JSON.stringify(req.body.upstream.messages[0]).includes(tag)) return item.id as string;
  }
  throw new Error(`no session for ${tag}`);
}

describe('GET /api/sessions/:id', () => {
  it('has the figures of proxy stats SESSION --json, request by request and in total', async () => {
    const config = loadConfig({ path: join(w.dir, 'config.toml'), env: {}, cwd: w.dir });
    for (const id of ids) {
      const stats = await readSessionStats(w.proxy.store, id, pricesFromConfig(config));
      const { status, body } = await getJson<Json>(w, `/api/sessions/${id}`);
      expect(status).toBe(200);
      expect(body.total_requests).toBe(stats.requests.length);
      body.requests.forEach((row: Record<string, unknown>, i: number) => {
        for (const [k, v] of Object.entries(stats.requests[i]!)) expect(row[k], `${id} row ${i} ${k}`).toEqual(v);
      });
      const s = stats.session;
      expect(body.totals).toMatchObject({
        requests: s.requests, prompt_tokens: s.prompt_tokens, cached_tokens: s.cached_tokens, cache_write_tokens: s.cache_write_tokens,
        completion_tokens: s.completion_tokens, cache_share: s.token_cache_rate, known_cost_usd: s.cost_usd, unknown_cost_requests: s.cost_unknown,
      });
      expect(body.last_active).toBe(s.last_active);
    }
  });

  it('adds uncached tokens and cumulative cost and savings; a priced route has them known', async () => {
    const id = await sessionOf('alpha');
    const { body } = await getJson<Json>(w, `/api/sessions/${id}`);
    expect(body.key).toBe('-');
    expect(body.client).toBe('openai-chat');
    expect(body.route).toBe('pd');
    let cost = 0;
    for (const row of body.requests) {
      expect(row.uncached_tokens).toBe(row.prompt_tokens - (row.cached_tokens ?? 0) - (row.cache_write_tokens ?? 0));
      cost += row.cost_usd;
      expect(row.cumulative_cost_usd).toBeCloseTo(cost, 12);
      expect(row.savings_usd).toBeCloseTo(row.uncached_cost_usd - row.cost_usd, 12);
    }
    expect(body.totals.cost_usd).toBeCloseTo(cost, 12);
    expect(body.totals.savings_usd).toBeGreaterThan(0); // the later turns read the prefix from cache
  });

  it('pages its requests', async () => {
    const id = await sessionOf('alpha');
    const { body } = await getJson<Json>(w, `/api/sessions/${id}?offset=1&limit=2`);
    expect(body.total_requests).toBe(4);
    expect(body.requests.map((r: { seq: number }) => r.seq)).toHaveLength(2);
    expect(body.offset).toBe(1);
    expect((await getJson(w, `/api/sessions/${id}?limit=5001`)).status).toBe(400);
  });

  it('is a 404 in the API error shape for an unknown session, a 400 for a bad id', async () => {
    const res = await getJson<{ error: { code: string } }>(w, '/api/sessions/no-such-session');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('session_not_found');
    const bad = await getJson<{ error: { type: string; code: string; message: string } }>(w, '/api/sessions/..%2Fetc');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'bad_argument' });
    expect(bad.body.error.message).toContain('invalid session id');
  });
});

describe('GET /api/sessions', () => {
  it('lists every session, sorted, filtered and paged', async () => {
    const all = await getJson<Page>(w, '/api/sessions');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(ids.length);
    const active = all.body.items.map((s) => s.last_active as string);
    expect(active).toEqual([...active].sort().reverse());

    // By what the cache saved, the most first; an unknown saving (unpriced routes) last.
    const bySavings = (await getJson<Page>(w, '/api/sessions?sort=savings')).body.items.map((i) => i.savings_usd as number | null);
    const known = bySavings.filter((v) => v !== null);
    expect(known.length).toBeGreaterThan(0);
    expect(bySavings).toEqual([...known.sort((a, b) => b - a), ...bySavings.filter((v) => v === null)]);
    const byRequests = await getJson<Page>(w, '/api/sessions?sort=requests&dir=asc');
    const counts = byRequests.body.items.map((s) => s.requests as number);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));

    const page = await getJson<Page>(w, '/api/sessions?sort=requests&dir=asc&offset=1&limit=1');
    expect(page.body).toMatchObject({ total: ids.length, offset: 1, limit: 1 });
    expect(page.body.items.map((s) => s.id)).toEqual([byRequests.body.items[1]!.id]);

    const oa = await getJson<Page>(w, '/api/sessions?model=oa');
    expect(oa.body.items.map((s) => s.route)).toEqual(['oa']);
    const one = ids[0]!;
    const q = await getJson<Page>(w, `/api/sessions?q=${one.slice(2, 10)}`);
    expect(q.body.items.map((s) => s.id)).toContain(one);
    expect((await getJson<Page>(w, '/api/sessions?key=nobody')).body.total).toBe(0);
  });

  it('filters by a break cause: the sessions with a request that broke for it', async () => {
    const all = (await getJson<Page>(w, '/api/sessions?limit=500')).body.items;
    const rewritten: string[] = [];
    for (const item of all) {
      const detail = await getJson<Json>(w, `/api/sessions/${item.id as string}`);
      if (detail.body.requests.some((r: { cause: string }) => r.cause === 'client_rewrite')) rewritten.push(item.id as string);
    }
    expect(rewritten).toHaveLength(1);
    expect((await getJson<Page>(w, '/api/sessions?cause=client_rewrite')).body.items.map((i) => i.id)).toEqual(rewritten);
    expect((await getJson<Page>(w, '/api/sessions?cause=summary')).body.total).toBe(0);
    const bad = await getJson<{ error: { param: string } }>(w, '/api/sessions?cause=everything');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('cause');
  });

  it('refuses what it does not know: 400 naming the parameter', async () => {
    for (const url of ['/api/sessions?sort=size', '/api/sessions?dir=up', '/api/sessions?limit=501', '/api/sessions?period=2d', '/api/sessions?offset=-1']) {
      const res = await getJson<{ error: { param: string } }>(w, url);
      expect(res.status, url).toBe(400);
    }
  });
});

describe('GET /api/overview', () => {
  it('adds up every request of the period, by cause, route and key, and in a series', async () => {
    const { status, body } = await getJson<Json>(w, '/api/overview?period=1h');
    expect(status).toBe(200);
    const total = (await Promise.all(ids.map((id) => getJson<Json>(w, `/api/sessions/${id}`)))).reduce((n, r) => n + r.body.total_requests, 0);
    expect(body.totals.requests).toBe(total);
    expect(body.causes.reduce((n: number, c: { requests: number }) => n + c.requests, 0)).toBe(total);
    expect(body.causes.map((c: { cause: string }) => c.cause)).toContain('client_rewrite');
    expect(body.by_route.map((r: { route: string }) => r.route).sort()).toEqual(['ds', 'oa', 'pd']);
    expect(body.by_key).toEqual([expect.objectContaining({ key: '-', requests: total })]);
    expect(body.series).toHaveLength(60);
    expect(body.series.reduce((n: number, b: { requests: number }) => n + b.requests, 0)).toBe(total);
    // The simulator's models have no price: the sum is unknown, never 0; the priced route's is known.
    expect(body.totals.cost_usd).toBeNull();
    expect(body.totals.unknown_cost_requests).toBe(total - 4);
    const pd = body.by_route.find((r: { route: string }) => r.route === 'pd');
    expect(pd.cost_usd).toBeGreaterThan(0);
    expect(pd.savings_usd).toBeCloseTo(pd.uncached_cost_usd - pd.cost_usd, 12);
  });
});

describe('GET /api/sessions/:id/requests/:seq', () => {
  it('rebuilds the request as replay does, digest verified, and names its first difference as proxy diff does', async () => {
    const id = await sessionOf('gamma');
    const detail = await getJson<Json>(w, `/api/sessions/${id}`);
    const last = detail.body.requests.at(-1);
    expect(last.cause).toBe('client_rewrite');
    const { status, body } = await getJson<Json>(w, `/api/sessions/${id}/requests/${last.seq}`);
    expect(status).toBe(200);
    expect(body.digest.verified).toBe(true);
    expect(body.digest.rebuilt).toBe(body.digest.logged);
    expect(body.wire).toBe('openai-chat');
    expect(body.upstream.model).toBe('deepseek-v4');
    expect(body.cause).toBe('client_rewrite');
    expect(body.diff.path).toMatch(/^messages/);
    expect(body.diff.cause).toBe('client_rewrite');
    expect(body.diff.context.before.length).toBeGreaterThan(0);
    expect(detail.body.timeline.map((t: { kind: string }) => t.kind)).toContain('rewrite');
    // What it cost: the session's row for it, without the running sums.
    const { cumulative_cost_usd: _c, cumulative_savings_usd: _s, ...row } = last;
    expect(body.figures).toEqual(row);
    const first = await getJson<Json>(w, `/api/sessions/${id}/requests/${detail.body.requests[0].seq}`);
    expect(first.body).toMatchObject({ cause: 'first', diff: null, previous: null });
    expect(first.body.hints).toHaveProperty('cache_key_sent');
  });

  it('says where a call failed: the upstream\'s status and its own message, no cost', async () => {
    const before = new Set(await w.proxy.store.listSessions());
    await expect(w.client.chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: 'refuse this [[error 400]]' }] })).rejects.toThrow();
    const id = (await w.proxy.store.listSessions()).find((s) => !before.has(s))!;
    const detail = await getJson<Json>(w, `/api/sessions/${id}`);
    const row = detail.body.requests[0];
    expect(row.status).toBe('error');
    const { body } = await getJson<Json>(w, `/api/sessions/${id}/requests/${row.seq}`);
    expect(body.failure).toMatchObject({ status: 400, error: null });
    expect(body.failure.message).toBe('Simulated error 400 (asked for by [[error 400]]).');
    expect(body.figures).toMatchObject({ status: 'error', cost_usd: null });
    const ok = await getJson<Json>(w, `/api/sessions/${ids[0]}/requests/${(await getJson<Json>(w, `/api/sessions/${ids[0]}`)).body.requests[0].seq}`);
    expect(ok.body.failure).toBeNull();
  });

  it('404s a seq that is no request', async () => {
    const res = await getJson<{ error: { code: string } }>(w, `/api/sessions/${ids[0]}/requests/0`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('request_not_found');
  });
});

describe('a session whose log cannot be read', () => {
  it('is named in the list with the error proxy sessions gives, counted by the overview, and gone once its log is', async () => {
    // A copy of a served session's log under a new id, its second line damaged.
    const source = w.proxy.store.file(ids[0]!);
    const id = '20261207T000000Z-damaged1';
    const lines = readFileSync(source, 'utf8').split('\n');
    lines[1] = '{"seq":2,"ts":"2026-12-07T00:00:00.000Z","type":"client.msg","msg":{';
    writeFileSync(w.proxy.store.file(id), lines.join('\n'));
    try {
      const cli = await listSessionSummaries(w.proxy.store, () => undefined);
      const expected = cli.unreadable.find((u) => u.id === id);
      expect(expected?.error).toMatch(/:2: /);
      const named = async () => (await getJson<{ total: number; unreadable: { total: number; items: { id: string; error: string }[] } }>(w, '/api/sessions?limit=500')).body;
      await expect.poll(async () => (await named()).unreadable.items, { timeout: 10_000 }).toEqual([expected]);
      const page = await named();
      expect(page.unreadable.total).toBe(1);
      expect(page.total).toBe(cli.sessions.length);
      expect((await getJson<{ unreadable_sessions: number }>(w, '/api/overview?period=all')).body.unreadable_sessions).toBe(1);
    } finally {
      rmSync(w.proxy.store.file(id));
    }
    await expect.poll(async () => (await getJson<{ unreadable: { total: number } }>(w, '/api/sessions')).body.unreadable.total, { timeout: 10_000 }).toBe(0);
    expect((await getJson<{ unreadable_sessions: number }>(w, '/api/overview?period=all')).body.unreadable_sessions).toBe(0);
  });
});
