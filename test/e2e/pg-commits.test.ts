/**
 * Database round trips of a steady request on PostgreSQL (issue 31 item 4, decision 0008): every
 * statement the proxy's connections send is recorded, and each request of a streaming agent's
 * conversation after its first costs two transactions: the claim (with a limited key's admission)
 * and one batch holding the turn's events, the reply's charge and the unlock; its first, which
 * starts the session, two more (the lookup, the row). With and without a key that has a budget and
 * a rate. Each statement outside BEGIN/COMMIT is its own transaction;
 * none of these opens one.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../bench/agent.js';
import { loadConfig } from '../../src/config/load.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { usePgWorld } from './pg-world.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const REQUESTS = 8;

const pgw = usePgWorld('pp-pg-commits-');
let proxy: RunningProxy;
let url: string;

beforeAll(async () => {
  process.env.PP_TEST_COMMITS_DB = url = await pgw.server.createDatabase('commits');
  const path = join(pgw.dir, 'proxy.toml');
  await writeFile(path, `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(pgw.dir, 'data'))}
[log]
level = "silent"
[store]
kind = "postgres"
url_env = "PP_TEST_COMMITS_DB"
# The key list's poll (one statement every few seconds, not per request) kept out of the count.
key_refresh_seconds = 3600
[providers.oa]
preset = "generic"
base_url = "${pgw.sim.urlFor('openai')}"
[models.oa]
provider = "oa"
model = "sim-model"
price = { input = 1.0, cache_read = 0.1, cache_write = 1.0, output = 2.0 }
[auth]
keys = [
  { name = "plain", sha256 = "${sha('key-plain')}" },
  { name = "limited", sha256 = "${sha('key-limited')}", budget_usd = 1000, budget_period = "day", requests_per_minute = 6000 },
]
`);
  proxy = await startProxy(loadConfig({ path, env: process.env, cwd: pgw.dir }));
}, 120_000);
afterAll(async () => {
  await proxy?.close();
});

/** The text of every statement sent by any pg client in this process while `fn` runs, by request. */
async function statementsPerRequest(key: string, seed: number): Promise<string[][]> {
  const perRequest: string[][] = [];
  const query = pg.Client.prototype.query;
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    perRequest.at(-1)?.push((typeof first === 'string' ? first : first.text ?? '').replace(/\s+/g, ' ').trim());
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  };
  try {
    // A request's statements are those from its start to the next request's: a turn's unlock
    // sent after its last byte counts against it.
    const client = new OpenAI({
      baseURL: `${proxy.url}/v1`, apiKey: key, maxRetries: 0,
      fetch: (input, init) => {
        perRequest.push([]);
        return fetch(input, init);
      },
    });
    await runAgent(client, 'oa', { requests: REQUESTS, seed, stream: true, resultBytes: 3000 });
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    pg.Client.prototype.query = query;
  }
  return perRequest;
}

describe('a steady request on PostgreSQL', () => {
  it.each([
    ['without limits', 'key-plain', 'plain', 1, 'claim_session('],
    ['with a budget and a rate, admitted in the claim', 'key-limited', 'limited', 2, 'claim_session_admitting('],
  ])('%s: two transactions, its claim and one batch', async (_name, key, name, seed, claim) => {
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const replies = async () => Number((await check.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE type = 'llm.resp'")).rows[0]!.n);
    try {
      const before = await replies();
      const perRequest = await statementsPerRequest(key, seed);
      expect(perRequest).toHaveLength(REQUESTS);
      // The first request starts the session: a lookup that finds nothing, a limited key's
      // admission alone (a refused request makes no session), the row, then the same two.
      const first = perRequest[0]!;
      expect(first, first.join('\n')).toHaveLength(claim === 'claim_session(' ? 4 : 5);
      expect(first.filter((s) => /^INSERT INTO sessions/.test(s))).toHaveLength(1);
      for (const statements of perRequest.slice(1)) {
        expect(statements.some((s) => /^(BEGIN|START)/i.test(s))).toBe(false);
        expect(statements.length, statements.join('\n')).toBe(2);
        expect(statements[0]).toContain(claim);
        expect(statements[1]).toContain('append_events');
      }
      // Those two statements logged every reply and charged the key its cost.
      expect(await replies()).toBe(before + REQUESTS);
      const spend = await check.query<{ usd: number }>('SELECT usd FROM client_spend WHERE client = $1', [name]);
      expect(spend.rows[0]?.usd ?? 0).toBeGreaterThan(0);
    } finally {
      await check.end();
    }
  }, 60_000);
});
