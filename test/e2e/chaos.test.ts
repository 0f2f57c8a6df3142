/**
 * The chaos test of issue 31 (docs/scaling.md, Chaos): three `proxy serve` replicas on one
 * PostgreSQL behind the small retrying balancer, eight streaming agents (the official SDK with its
 * retries; a turn asked again after a cut stream marked as a retry: half the agents as the SDK marks
 * its own, half by an `Idempotency-Key` each try of a turn repeats, which any replica reads) on
 * one budgeted key from `proxy keys add`. For about a minute a replica is killed with
 * SIGKILL every few seconds and started again, and the database is stopped and started once. The
 * budget is cut, part way, to what was spent plus about ten seconds' worth, so it runs out under
 * the chaos. Then: every answer an agent received whole is in the log, eight sessions with no fork
 * and no rewrite, the key's spend over its budget is at most eight requests' cost (one in flight
 * per agent), and `proxy replay --all` verifies every digest.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/pg/store.js';
import { usePgWorld } from './pg-world.js';
import { startBalancer } from './balancer.js';
import { runCli } from './harness.js';
import { freePort, replicaConfig, startReplica, type Replica } from './replica-procs.js';
import { streamingAgent } from './streaming-agent.js';

const pgw = usePgWorld('pp-chaos-');

const AGENTS = 8;
const CHAOS_MS = 55_000;
const KILL_EVERY_MS = 3_500;
const MIN_KILLS = 10;
// Dollars per million tokens; the bound below prices every prompt token at the full input price.
const PRICE = { input: 1000, output: 1000 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What `proxy keys list` says the key spent. */
async function spentBy(env: string, client: string): Promise<number> {
  const listed = await runCli(['keys', 'list', '--json', '--store', 'postgres', '--url-env', env]);
  const key = (JSON.parse(listed.stdout) as { keys: { name: string; spent: number }[] }).keys.find((k) => k.name === client);
  return key?.spent ?? 0;
}

describe('chaos', () => {
  it('replicas killed every few seconds and the database restarted once under eight streaming agents lose no answer', async () => {
    const env = 'PP_TEST_CHAOS_DB';
    const url = await pgw.server.createDatabase('chaos');
    process.env[env] = url;
    const extra = `
[models.oa.price]
input = ${PRICE.input}
output = ${PRICE.output}
`;
    const replicas: Replica[] = [];
    const configs: string[] = [];
    for (const name of ['ca', 'cb', 'cc']) {
      const port = await freePort();
      configs.push(await replicaConfig(pgw.dir, name, port, env, pgw.sim.urlFor('openai'), extra));
      replicas.push({ name, origin: `http://127.0.0.1:${port}`, child: undefined, stderr: '', exited: Promise.resolve(0) });
    }
    const up = new Set<Replica>();
    const balancer = await startBalancer(() => replicas.filter((r) => up.has(r)).map((r) => r.origin));
    const made = await runCli(['keys', 'add', 'chaos', '--budget', '1000000', '--period', 'total', '--store', 'postgres', '--url-env', env]);
    expect(made.code, made.stderr).toBe(0);
    const key = made.stdout.split('\n')[0]!;
    let budget = 1_000_000;
    const kills: string[] = [];
    let dbDownMs = 0;
    let results;
    try {
      await Promise.all(replicas.map(async (r, i) => {
        await startReplica(r, configs[i]!);
        up.add(r);
      }));
      const client = new OpenAI({ baseURL: `${balancer.url}/v1`, apiKey: key, maxRetries: 4, timeout: 30_000 });
      let done = false;
      const spent = (err: unknown) => (err as { code?: unknown }).code === 'budget_exceeded';
      const agents = Array.from({ length: AGENTS }, (_, i) => streamingAgent(client, { id: `c${i}`, model: 'oa', stop: () => done, slowMs: 20, len: 20, fatal: spent, markResends: i % 2 === 0 ? 'count' : 'key' }));

      const t0 = Date.now();
      let step = 0;
      let budgetCut = false;
      // At least ten kills however slowly a loaded machine starts a replica again (each kill waits
      // for its restart): a run timed alone once made nine.
      while (Date.now() - t0 < CHAOS_MS || kills.length < MIN_KILLS) {
        await sleep(KILL_EVERY_MS);
        step++;
        if (step === 5) {
          // The database goes away (connections cut) for two seconds, once.
          const down = Date.now();
          pgw.server.pause();
          await sleep(2000);
          pgw.server.resume();
          dbDownMs = Date.now() - down;
          continue;
        }
        if (!budgetCut && Date.now() - t0 > CHAOS_MS * 0.6) {
          // About ten seconds' worth left at the rate so far, so it runs out while replicas still die.
          const now = await spentBy(env, 'chaos');
          budget = Math.round(now + (now / (Date.now() - t0)) * 10_000);
          const cut = await runCli(['keys', 'set-budget', 'chaos', String(budget), '--store', 'postgres', '--url-env', env]);
          expect(cut.code, cut.stderr).toBe(0);
          budgetCut = true;
        }
        const r = replicas[step % replicas.length]!;
        up.delete(r);
        r.child!.kill('SIGKILL');
        kills.push(String(await r.exited));
        await startReplica(r, configs[replicas.indexOf(r)]!);
        up.add(r);
      }
      done = true;
      results = await Promise.all(agents);
    } finally {
      for (const r of replicas) r.child?.kill('SIGKILL');
      await balancer.close();
    }

    expect(kills.length).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(kills.every((k) => k === 'SIGKILL')).toBe(true);
    expect(dbDownMs).toBeGreaterThanOrEqual(2000);
    const answered = results.reduce((n, r) => n + r.answers.length, 0);
    for (const res of results) expect(res.answers.length).toBeGreaterThan(3);

    const check = await PgStore.connect(url);
    try {
      // No answer lost: every answer an agent received whole is a logged reply.
      const ids = await check.listSessions();
      const logged = new Set<string>();
      for (const id of ids) {
        const { events } = await check.read(id);
        for (const e of events) if (e.type === 'llm.resp' && e.aborted !== true) logged.add(e.reply.content ?? '');
        // No fork: one session per agent, none a child of another, no rewrite.
        expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
        expect(events[0]).toMatchObject({ type: 'session.start' });
        expect((events[0] as { parent?: unknown }).parent, `${id} forked`).toBeUndefined();
      }
      expect(ids).toHaveLength(AGENTS);
      const lost = results.flatMap((r) => r.answers).filter((a) => !logged.has(a));
      expect(lost).toEqual([]);
    } finally {
      await check.close();
    }

    // The budget ran out, and was overspent by at most one request in flight per agent.
    const spent = await spentBy(env, 'chaos');
    const maxCost = Math.max(...pgw.sim.requests.map((r) => (r.promptTokens * PRICE.input + r.completionTokens * PRICE.output) / 1e6));
    expect(results.some((r) => r.ended !== undefined)).toBe(true);
    expect(spent).toBeGreaterThanOrEqual(budget);
    expect(spent).toBeLessThanOrEqual(budget + AGENTS * maxCost);

    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ failed: 0 });
    const causes: Record<string, number> = {};
    for (const m of results.flatMap((r) => r.errors)) causes[m.slice(0, 60)] = (causes[m.slice(0, 60)] ?? 0) + 1;
    console.log(`chaos: ${kills.length} kills, database down ${dbDownMs} ms, ${answered} answers, ${results.reduce((n, r) => n + r.errors.length, 0)} errors after SDK retries ${JSON.stringify(causes)}, ${results.reduce((n, r) => n + r.cut, 0)} cut streams, balancer retries ${JSON.stringify(balancer.retried)}, budget ${budget} spent ${spent.toFixed(2)} (max request ${maxCost.toFixed(2)})`);
  }, 110_000);
});
