/**
 * Per-key usage in `proxy sessions` (issue 31, item 3; docs/scaling.md, Keys without restarts):
 * each session lists the client keys its requests came with (`key_name` in `llm.req`), with their
 * requests, tokens and cost, in the JSON and the table; a key made by `proxy keys add` and a key
 * of the config alike, on PostgreSQL; a request without a key counts in no key.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import type { KeyTotal } from '../../src/stats/key-totals.js';
import type { SessionSummary } from '../../src/stats/session-totals.js';
import { usePgWorld } from './pg-world.js';
import { runCli } from './harness.js';
import { replicaConfig } from './replica-procs.js';

const pgw = usePgWorld('pp-sessions-keys-');

async function converse(proxy: RunningProxy, key: string | undefined, name: string, turns: number, task = 'first'): Promise<void> {
  const messages: { role: string; content: string }[] = [{ role: 'system', content: `You are ${name}'s agent on the ${task} task.` }];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `Turn ${i} of ${name}. [[say answer ${i} for ${name}]]` });
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
      body: JSON.stringify({ model: 'oa', messages }),
    });
    const body = await res.json() as { choices: { message: { content: string } }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    messages.push({ role: 'assistant', content: body.choices[0]!.message.content });
  }
}

describe('proxy sessions: usage per client key', () => {
  it('names each session\'s keys with their requests and cost, for stored and config keys', async () => {
    const env = 'PP_TEST_SESSIONS_KEYS_DB';
    process.env[env] = await pgw.server.createDatabase('sessions_keys');
    process.env.PP_TEST_SK_OPS_KEY = 'ops-key-for-sessions';
    const made = await runCli(['keys', 'add', 'alice', '--store', 'postgres', '--url-env', env]);
    expect(made.code, made.stderr).toBe(0);
    const alice = made.stdout.split('\n')[0]!;
    const path = await replicaConfig(pgw.dir, 'sk', 0, env, pgw.sim.urlFor('openai'), `
[models.oa.price]
input = 1000
output = 1000

[auth]
keys = [{ name = "ops", key_env = "PP_TEST_SK_OPS_KEY" }]
`);
    const proxy = await startProxy(loadConfig({ path, env: process.env, cwd: pgw.dir }));
    try {
      await converse(proxy, alice, 'alice', 3);
      await converse(proxy, 'ops-key-for-sessions', 'ops', 2);
      await converse(proxy, alice, 'alice', 1, 'second');
    } finally {
      await proxy.close();
    }

    const listed = await runCli(['sessions', '--json', '--store', 'postgres', '--url-env', env, '--config', path]);
    expect(listed.code, listed.stderr).toBe(0);
    const { sessions, keys } = JSON.parse(listed.stdout) as { sessions: SessionSummary[]; keys: KeyTotal[] };
    expect(sessions).toHaveLength(3);
    const a = sessions.find((s) => s.keys[0]?.name === 'alice' && s.requests === 3)!;
    const a2 = sessions.find((s) => s.keys[0]?.name === 'alice' && s.requests === 1)!;
    const o = sessions.find((s) => s.keys[0]?.name === 'ops')!;
    expect(a.keys).toEqual([{ name: 'alice', requests: 3, prompt_tokens: a.prompt_tokens, cached_tokens: a.cached_tokens, completion_tokens: a.completion_tokens, rate_basis: a.rate_basis, cost_usd: a.cost_usd, cost_unknown: 0 }]);
    expect(a.cost_usd).toBeGreaterThan(0);
    expect(o.keys).toEqual([{ name: 'ops', requests: 2, prompt_tokens: o.prompt_tokens, cached_tokens: o.cached_tokens, completion_tokens: o.completion_tokens, rate_basis: o.rate_basis, cost_usd: o.cost_usd, cost_unknown: 0 }]);
    // Each key over every session: alice's two, summed; the dearest key first.
    expect(keys.map((k) => k.name)).toEqual(['alice', 'ops']);
    expect(keys[0]).toMatchObject({ sessions: 2, requests: 4, prompt_tokens: a.prompt_tokens! + a2.prompt_tokens!, cached_tokens: a.cached_tokens! + a2.cached_tokens! });
    expect(keys[0]!.cost_usd).toBeCloseTo(a.cost_usd! + a2.cost_usd!, 10);
    expect(keys[1]).toMatchObject({ sessions: 1, requests: 2, prompt_tokens: o.prompt_tokens, cost_usd: o.cost_usd });

    const table = await runCli(['sessions', '--store', 'postgres', '--url-env', env, '--config', path]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/last active\s+keys$/);
    expect(lines.find((l) => l.startsWith(a.id))).toContain(`alice (3, $${a.cost_usd!.toFixed(4)})`);
    expect(lines.find((l) => l.startsWith(o.id))).toContain(`ops (2, $${o.cost_usd!.toFixed(4)})`);
    const perKey = lines.slice(lines.indexOf('per client key, over every session:') + 2);
    expect(perKey[0]).toMatch(new RegExp(`^alice\\s+2\\s+4\\s.*\\$${(a.cost_usd! + a2.cost_usd!).toFixed(4).replace('.', '\\.')}$`));
    expect(perKey[1]).toMatch(/^ops\s+1\s+2\s/);
  }, 60_000);
});
