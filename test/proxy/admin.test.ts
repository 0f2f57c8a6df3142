/**
 * The admin routes on the real app (buildApp, as app.ts will register them): the same JSON as
 * `proxy sessions --json` and `proxy stats --json`, 401 without the admin key or with a wrong one,
 * and no routes at all (404) when the config has no admin key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FileStore } from '../../src/store/files.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { buildApp } from '../../src/proxy/app.js';
import { ImageStore } from '../../src/proxy/images.js';
import { Upstreams } from '../../src/proxy/upstream.js';
import { SessionManager } from '../../src/session/manager.js';
import { listSessionSummaries, readSessionStats } from '../../src/stats/collect.js';
import { pricesFromConfig } from '../../src/stats/prices.js';
import { writeSession } from '../cli/helpers.js';
import { LogBuilder } from '../stats/events.js';

const KEY = 'admin-key-for-tests-0123456789';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pp-admin-'));
  writeSession(join(dir, 'data'), 's1', new LogBuilder('priced').turn({ prompt_tokens: 2000, cached_tokens: 0 }).turn({ prompt_tokens: 3000, cached_tokens: 1920 }).events);
  writeSession(join(dir, 'data'), 's2', new LogBuilder('priced').turn(undefined).events);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function appWith(adminKey: string | undefined): Promise<{ app: FastifyInstance; close(): Promise<void>; config: ReturnType<typeof loadConfig> }> {
  const file = join(dir, `config-${adminKey === undefined ? 'open' : 'keyed'}.toml`);
  writeFileSync(file, `data_dir = "data"\n${adminKey === undefined ? '' : 'admin_key_env = "PROXY_ADMIN_KEY"'}
[providers.simp]
preset = "generic"
base_url = "http://127.0.0.1:9/v1"
[models.priced]
provider = "simp"
model = "sim-1"
price = { input = 2, cache_read = 0.2, cache_write = 2.5, output = 8 }
`);
  const config = loadConfig({ path: file, env: adminKey === undefined ? {} : { PROXY_ADMIN_KEY: adminKey }, cwd: dir });
  const store = new FileStore(config.dataDir);
  const sessions = new SessionManager(store, { now: () => new Date() });
  await sessions.init();
  const upstreams = new Upstreams();
  const app = buildApp({ config, sessions, upstreams, images: new ImageStore(config.dataDir), metrics: createMetrics({ defaults: false }), now: () => new Date() });
  await app.ready();
  return {
    app, config,
    async close() {
      await app.close();
      await upstreams.close();
      await sessions.close();
    },
  };
}

describe('with an admin key', () => {
  let h: Awaited<ReturnType<typeof appWith>>;
  beforeAll(async () => {
    h = await appWith(KEY);
  });
  afterAll(async () => {
    await h?.close();
  });
  const auth = { authorization: `Bearer ${KEY}` };

  it('GET /admin/sessions answers the JSON of `proxy sessions --json`', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/admin/sessions', headers: auth });
    expect(res.statusCode).toBe(200);
    const want = await listSessionSummaries(new FileStore(h.config.dataDir), pricesFromConfig(h.config));
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(want)));
    const s1 = (res.json() as typeof want).sessions.find((s) => s.id === 's1')!;
    expect(s1.token_cache_rate).toBeCloseTo(1920 / 5000, 12);
    expect(s1.cost_usd).toBeGreaterThan(0);
    expect((res.json() as typeof want).sessions.find((s) => s.id === 's2')!.token_cache_rate).toBeNull();
  });

  it('GET /admin/sessions/:id answers the JSON of `proxy stats --json`', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/admin/sessions/s1', headers: auth });
    expect(res.statusCode).toBe(200);
    const want = await readSessionStats(new FileStore(h.config.dataDir), 's1', pricesFromConfig(h.config));
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(want)));
    expect(want.requests).toHaveLength(2);
  });

  it('an unknown session is a 404 in the OpenAI error shape; an invalid id a 400', async () => {
    const missing = await h.app.inject({ method: 'GET', url: '/admin/sessions/nope', headers: auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'session_not_found' } });
    const bad = await h.app.inject({ method: 'GET', url: '/admin/sessions/..%2Fetc', headers: auth });
    expect(bad.statusCode).toBe(400);
  });

  it('401 without the key, with a wrong key, or with the key in another scheme', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${KEY}x` }, { authorization: KEY }, { authorization: `Basic ${KEY}` }]) {
      for (const url of ['/admin/sessions', '/admin/sessions/s1']) {
        const res = await h.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json()).toMatchObject({ error: { type: 'authentication_error', code: 'unauthorized' } });
        expect(res.body).not.toContain(KEY.slice(4));
      }
    }
  });
});

describe('without an admin key', () => {
  it('the admin routes do not exist: 404, with or without a bearer', async () => {
    const h = await appWith(undefined);
    try {
      for (const url of ['/admin/sessions', '/admin/sessions/s1']) {
        for (const headers of [{}, { authorization: `Bearer ${KEY}` }]) {
          const res = await h.app.inject({ method: 'GET', url, headers });
          expect(res.statusCode).toBe(404);
        }
      }
      // The app itself still answers.
      expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await h.close();
    }
  });
});
