/**
 * Keys without restarts (docs/scaling.md): `proxy keys add` against PostgreSQL prints a key once
 * and stores its SHA-256 only; two running replicas take it within seconds, as they take a
 * `set-budget` and a `revoke`; the config's key works beside it; the key's name is in the log's
 * llm.req, the request log and the spend metric; `proxy keys list` shows what it spent, and with
 * `--config` the config's keys beside the stored ones.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { PgStore } from '../../src/store/pg/store.js';
import { usePgWorld } from './pg-world.js';
import { runCli } from './harness.js';
import { replicaConfig } from './replica-procs.js';

const pgw = usePgWorld('pp-keys-');

async function ask(proxy: RunningProxy, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'oa', messages: [{ role: 'user', content: `Hello from ${key.slice(0, 6)} ${Math.random()}. [[say hi]]` }] }),
  });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

/** Polls `check` until it holds, at most `ms`; how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - t0;
}

describe('keys without restarts', () => {
  it('add, set-budget and revoke reach both running replicas within seconds; config keys still work', async () => {
    const env = 'PP_TEST_KEYS_DB';
    process.env[env] = await pgw.server.createDatabase('keys');
    process.env.PP_TEST_OPS_KEY = 'ops-key-from-config';
    const extra = `
[models.oa.price]
input = 1000
output = 1000

[auth]
keys = [{ name = "ops", key_env = "PP_TEST_OPS_KEY" }]
`;
    const proxies: RunningProxy[] = [];
    try {
      for (const name of ['ka', 'kb']) {
        const path = await replicaConfig(pgw.dir, name, 0, env, pgw.sim.urlFor('openai'), extra);
        const config = loadConfig({ path, env: process.env, cwd: pgw.dir });
        proxies.push(await startProxy({ ...config, store: { ...config.store, keyRefreshMs: 200 } }));
      }
      const [a, b] = proxies as [RunningProxy, RunningProxy];
      expect((await ask(a, 'ops-key-from-config')).status).toBe(200);
      expect((await ask(a, 'pp-not-a-key')).status).toBe(401);

      const made = await runCli(['keys', 'add', 'alice', '--budget', '5', '--period', 'total', '--store', 'postgres', '--url-env', env]);
      expect(made.code, made.stderr).toBe(0);
      const key = made.stdout.split('\n')[0]!;
      expect(key).toMatch(/^pp-[A-Za-z0-9_-]{32}$/);
      expect(made.stdout).toContain('the only time it is shown');
      // Both replicas take it, without a restart.
      const took = await within(3000, async () => (await ask(a, key)).status === 200 && (await ask(b, key)).status === 200);
      expect(took).toBeLessThan(3000);

      // Stored hashed; listed without the key, with what it spent.
      const check = await PgStore.connect(process.env[env]!);
      const stored = await check.keys.list();
      await check.close();
      expect(JSON.stringify(stored)).not.toContain(key);
      const listed = await runCli(['keys', 'list', '--json', '--store', 'postgres', '--url-env', env]);
      const alice = (JSON.parse(listed.stdout) as { keys: { name: string; spent: number; budgetUsd: number; revokedAt?: string }[] }).keys.find((k) => k.name === 'alice')!;
      expect(alice.budgetUsd).toBe(5);
      expect(alice.spent).toBeGreaterThan(0);
      expect(listed.stdout).not.toContain(key);

      // Per-key usage: the spend metric names it, as does every llm.req it made.
      const metrics = await (await fetch(`${a.url}/metrics`)).text();
      expect(metrics).toMatch(/proxy_client_spend_usd_total\{client="alice"\} [0-9.e-]+/);
      const db = await PgStore.connect(process.env[env]!);
      let named = 0;
      for (const id of await db.listSessions()) for (const e of (await db.read(id)).events) if (e.type === 'llm.req' && e.key_name === 'alice') named++;
      await db.close();
      expect(named).toBeGreaterThanOrEqual(2);

      // A budget cut to nothing: both refuse within seconds, with the 429 no client retries.
      expect((await runCli(['keys', 'set-budget', 'alice', '0', '--store', 'postgres', '--url-env', env])).code).toBe(0);
      await within(3000, async () => (await ask(a, key)).status === 429 && (await ask(b, key)).status === 429);
      expect((await ask(b, key)).body).toMatchObject({ error: { code: 'budget_exceeded' } });
      expect((await runCli(['keys', 'set-budget', 'alice', 'none', '--store', 'postgres', '--url-env', env])).code).toBe(0);
      await within(3000, async () => (await ask(a, key)).status === 200 && (await ask(b, key)).status === 200);

      // Revoked: refused everywhere within seconds; the config's key goes on.
      expect((await runCli(['keys', 'revoke', 'alice', '--store', 'postgres', '--url-env', env])).code).toBe(0);
      await within(3000, async () => (await ask(a, key)).status === 401 && (await ask(b, key)).status === 401);
      expect((await ask(b, 'ops-key-from-config')).status).toBe(200);
      const again = await runCli(['keys', 'add', 'alice', '--store', 'postgres', '--url-env', env]);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('exists already');

      // With --config, the config's keys are listed beside the stored ones, each with the shared
      // ledger's spend; a stored key named like a config key is listed as the one the proxy ignores.
      expect((await runCli(['keys', 'add', 'ops', '--budget', '1', '--store', 'postgres', '--url-env', env])).code).toBe(0);
      const opsSpent = await (async () => {
        const db2 = await PgStore.connect(process.env[env]!);
        try { return await db2.keys.spent('ops', 0); } finally { await db2.close(); }
      })();
      expect(opsSpent).toBeGreaterThan(0);
      const withConfig = await runCli(['keys', 'list', '--json', '--config', `${pgw.dir}/ka.toml`]);
      expect(withConfig.code, withConfig.stderr).toBe(0);
      const rows = (JSON.parse(withConfig.stdout) as { keys: { name: string; spent: number; createdAt?: string; shadowed?: boolean; revokedAt?: string }[] }).keys;
      expect(rows.map((k) => [k.name, k.createdAt === undefined ? 'config' : k.shadowed === true ? 'shadowed' : k.revokedAt === undefined ? 'live' : 'revoked'])).toEqual([
        ['ops', 'config'], ['alice', 'revoked'], ['ops', 'shadowed'],
      ]);
      expect(rows[0]!.spent).toBeCloseTo(opsSpent, 10);
      const table = await runCli(['keys', 'list', '--config', `${pgw.dir}/ka.toml`]);
      expect(table.stdout).toMatch(/^ops +config /m);
      expect(table.stdout).toMatch(/^ops +shadowed by config /m);
      expect(withConfig.stdout + table.stdout).not.toContain('ops-key-from-config');
    } finally {
      for (const p of proxies) await p.close();
    }
    // The file store has no keys to manage: said plainly.
    const files = await runCli(['keys', 'list', '--store', 'files', '--data-dir', pgw.dir]);
    expect(files.code).toBe(2);
    expect(files.stderr).toContain('[auth] keys');
  }, 120_000);
});
