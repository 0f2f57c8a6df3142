/**
 * The inspector on a PostgreSQL store: the same answers as on files (the figures equal
 * readSessionStats over the database), and a second replica on the same database serves the
 * sessions the first one wrote, and streams a request the first one answered (its poll).
 */
import { join } from 'node:path';
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
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
});
