/**
 * The inspector on a PostgreSQL store: the same answers as on files (the figures equal
 * readSessionStats over the database), and a second replica on the same database serves the
 * sessions the first one wrote, and streams a request the first one answered (its poll).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import OpenAI from 'openai';
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import { periodEnd, periodStart } from '../../src/proxy/budget-period.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { readSessionStats } from '../../src/stats/collect.js';
import { pricesFromConfig } from '../../src/stats/prices.js';
import { startPgServer, type PgServer } from '../store/pg-server.js';
import { conversation, getJson, startWorld, type Json, type World } from './world.js';

const ENV = 'PP_INSPECTOR_TEST_PG_URL';
let server: PgServer;
let w: World;
let replica: RunningProxy;

beforeAll(async () => {
  server = await startPgServer();
  process.env[ENV] = await server.createDatabase('inspector');
  w = await startWorld({ extraToml: `\n[store]\nkind = "postgres"\nurl_env = "${ENV}"\n` });
  await conversation(w, 'pg-alpha', 3, 'pd');
  await conversation(w, 'pg-beta', 2);
  const config = withSimulator(loadConfig({ path: join(w.dir, 'config.toml'), env: {}, cwd: w.dir }), w.sim.url);
  replica = await startProxy(config);
}, 120_000);
afterAll(async () => {
  replica?.app.server.closeAllConnections();
  await replica?.close();
  await w?.close();
  server?.stop();
  delete process.env[ENV];
});

describe('on PostgreSQL', () => {
  it('answers /api/sessions/:id with the figures of readSessionStats over the database', async () => {
    expect(w.proxy.store.kind).toBe('postgres');
    const ids = await w.proxy.store.listSessions();
    expect(ids).toHaveLength(2);
    const config = loadConfig({ path: join(w.dir, 'config.toml'), env: {}, cwd: w.dir });
    for (const id of ids) {
      const stats = await readSessionStats(w.proxy.store, id, pricesFromConfig(config));
      const { body } = await getJson<Json>(w, `/api/sessions/${id}`);
      expect(body.requests.map((r: Json) => [r.seq, r.prompt_tokens, r.cached_tokens, r.cost_usd])).toEqual(stats.requests.map((r) => [r.seq, r.prompt_tokens, r.cached_tokens, r.cost_usd]));
      expect(body.totals.cache_share).toBe(stats.session.token_cache_rate);
      const req = await getJson<Json>(w, `/api/sessions/${id}/requests/${body.requests.at(-1).seq}`);
      expect(req.body.digest.verified).toBe(true);
    }
    const list = await getJson<Json>(w, '/api/sessions?sort=requests');
    expect(list.body.items.map((s: Json) => s.requests)).toEqual([3, 2]);
    expect((await getJson<Json>(w, '/api/overview')).body.totals.requests).toBe(5);
  });

  it('a second replica serves the same pages, and streams what the first one answered', async () => {
    const mine = (await replica.app.inject({ method: 'GET', url: '/api/sessions' })).json();
    const theirs = (await getJson<Json>(w, '/api/sessions')).body;
    expect(mine.items.map((s: Json) => [s.id, s.requests, s.cost_usd])).toEqual(theirs.items.map((s: Json) => [s.id, s.requests, s.cost_usd]));

    const res = await new Promise<IncomingMessage>((resolve, reject) => request(`${replica.url}/api/live`, resolve).on('error', reject).end());
    const got = new Promise<string>((resolve) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        const i = text.indexOf('event: request');
        if (i >= 0 && text.indexOf('\n\n', i) > 0) resolve(text.slice(i, text.indexOf('\n\n', i)));
      });
    });
    await conversation(w, 'pg-gamma', 1);
    const frame = await got;
    expect(frame).toContain('"status":"ok"');
    res.destroy();
  }, 30_000);

  it('a key\'s budget and spend are the shared ledger\'s: the replica that served none of it shows it', async () => {
    const secret = 'pp-inspector-budget-key';
    await w.proxy.store.keys!.add({ name: 'team', sha256: createHash('sha256').update(secret).digest('hex'), models: undefined, budgetUsd: 5, budgetPeriod: 'month' });
    const ask = (apiKey: string) => new OpenAI({ baseURL: `${w.proxy.url}/v1`, apiKey, maxRetries: 0 }).chat.completions.create({ model: 'pd', messages: [{ role: 'user', content: 'spend a little [[say ok]]' }] });
    // The first replica takes the key within [store] key_refresh_seconds: from then on a key it does not know is refused.
    await expect.poll(() => ask('not-a-key').then(() => 200, (err: { status?: number }) => err.status), { timeout: 15_000 }).toBe(401);
    await ask(secret);
    const spent = await w.proxy.store.keys!.spent('team', periodStart('month', Date.now()));
    expect(spent).toBeGreaterThan(0);
    const budgets = async () => ((await replica.app.inject({ method: 'GET', url: '/api/overview' })).json() as { budgets: Json[] }).budgets;
    await expect.poll(budgets, { timeout: 15_000 }).toEqual([{
      key: 'team', source: 'stored', budget_usd: 5, budget_period: 'month', spent_usd: spent,
      resets_at: new Date(periodEnd('month', Date.now())!).toISOString(), requests_per_minute: null,
    }]);
  }, 40_000);
});
