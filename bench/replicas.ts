/**
 * Throughput of the agent load (bench/agent.ts) through `proxy serve` processes, in one run:
 * one replica on the file store, one replica on PostgreSQL, two replicas on one PostgreSQL with
 * each agent's requests alternating between them (docs/scaling.md). The simulator answers at
 * once, so the figures are the proxy's and the store's costs, not a provider's latency. The
 * database is a temporary cluster (test/store/pg-server.ts) on this machine.
 *
 * The `replicas` section of `npm run bench` (8 agents x 16 requests); alone:
 *   npm run bench -- --only replicas
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { createSim, type Sim } from '../src/sim/server.js';
import { startPgServer } from '../test/store/pg-server.js';
import { runAgent } from './agent.js';
import { waitFor } from './peers/targets.js';

const AGENTS = 8;
const REQUESTS = 16;
const MAIN = join(process.cwd(), 'dist', 'cli', 'main.js');

let served = 0;

async function serve(dir: string, sim: Sim, store: 'files' | 'postgres', env: NodeJS.ProcessEnv): Promise<{ origin: string; child: ChildProcess }> {
  const n = served++;
  const path = join(dir, `proxy-${n}.toml`);
  await writeFile(path, `
data_dir = ${JSON.stringify(join(dir, `data-${n}`))}
[log]
level = "silent"
[store]
kind = "${store}"
url_env = "BENCH_DATABASE_URL"
[providers.oa]
preset = "generic"
base_url = "${sim.urlFor('openai')}"
[models.oa]
provider = "oa"
model = "sim-model"
`);
  // Port 0, read back from its start-up line: a port picked here beforehand could be taken by
  // another process before the proxy listened on it (a run failed that way).
  const child = spawn(process.execPath, [MAIN, 'serve', '--config', path, '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const origin = (await waitFor(child, /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/, 'proxy'))[1]!;
  return { origin, child };
}

/**
 * Requests per second of AGENTS agents at once, each request going to the next origin in turn;
 * `pinned`: each agent keeps to one origin (what a load balancer with session affinity does).
 */
async function load(all: readonly string[], seed: number, pinned: boolean): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: AGENTS }, (_, a) => {
    const origins = pinned ? [all[a % all.length]!] : all;
    let n = a;
    const client = new OpenAI({
      baseURL: 'http://bench.invalid/v1', apiKey: 'bench', maxRetries: 0,
      fetch: (input, init) => {
        const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
        return fetch(new URL(url.pathname + url.search, origins[n++ % origins.length]), init);
      },
    });
    return runAgent(client, 'oa', { requests: REQUESTS, seed: seed * 1000 + a, stream: true, resultBytes: 4000 });
  }));
  return (AGENTS * REQUESTS) / ((performance.now() - started) / 1000);
}

/** SIGTERM, and the process gone (its connections closed). */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Transactions committed in the database so far (pg_stat_database; includes this query's own). */
async function commits(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

export interface ReplicaRow {
  setup: string;
  /** Requests per second, one per round. */
  rps: number[];
  /** Database commits per request, one per round (PostgreSQL setups). */
  commits: number[];
}

/** Three rounds of every setup, interleaved; rows in the order of the setups, the file store first. */
export async function measureReplicas(): Promise<ReplicaRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-bench-replicas-'));
  const pg = await startPgServer();
  const sim = await createSim({ host: '127.0.0.1', port: 0 });
  const rows: ReplicaRow[] = [];
  try {
    const setups: { setup: string; store: 'files' | 'postgres'; replicas: number; pinned: boolean }[] = [
      { setup: 'one replica, file store (fsync)', store: 'files', replicas: 1, pinned: false },
      { setup: 'one replica, PostgreSQL', store: 'postgres', replicas: 1, pinned: false },
      { setup: 'two replicas, one PostgreSQL, requests alternating', store: 'postgres', replicas: 2, pinned: false },
      { setup: 'two replicas, one PostgreSQL, each agent on one', store: 'postgres', replicas: 2, pinned: true },
    ];
    // Three rounds, setups interleaved, so drift on a shared machine touches each alike.
    for (let round = 0; round < 3; round++) {
      for (const [i, s] of setups.entries()) {
        const url = await pg.createDatabase(`bench_${round}_${i}`);
        const env = { ...process.env, BENCH_DATABASE_URL: url };
        const procs = [];
        for (let r = 0; r < s.replicas; r++) procs.push(await serve(dir, sim, s.store, env));
        try {
          const origins = procs.map((p) => p.origin);
          await load(origins, 99, s.pinned); // warm-up
          const rps = await load(origins, round + 1, s.pinned);
          const row = rows.find((x) => x.setup === s.setup) ?? rows[rows.push({ setup: s.setup, rps: [], commits: [] }) - 1]!;
          row.rps.push(rps);
          if (s.store === 'postgres') {
            // Counted on a load of their own: a backend reports its counts when idle at most every
            // 10 s (PostgreSQL 15's PGSTAT_IDLE_INTERVAL) and all of them when it exits, so the
            // count starts once the replicas' connections have idled that long and ends once the
            // replicas have exited.
            await new Promise((r) => setTimeout(r, 11_000));
            const before = await commits(url);
            await load(origins, round + 11, s.pinned);
            await Promise.all(procs.map((p) => stop(p.child)));
            await new Promise((r) => setTimeout(r, 500));
            // Less the reading of `before` itself, counted when its connection ended.
            row.commits.push(((await commits(url)) - before - 1) / (AGENTS * REQUESTS));
          }
        } finally {
          for (const p of procs) p.child.kill('SIGTERM');
        }
      }
    }
  } finally {
    await sim.close();
    pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

/** The section's lines: requests/s by setup, their ratio to the file store, commits per request. */
export function renderReplicas(rows: readonly ReplicaRow[]): string[] {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(rows[0]!.rps);
  const out = [
    '## Scale-out: one replica on the file store or PostgreSQL, two replicas on one PostgreSQL',
    '',
    `${AGENTS} agents at once (bench/agent.ts, official \`openai\` client, streamed), ${REQUESTS} requests each, through \`proxy serve\``,
    'processes in front of the simulator; PostgreSQL is a temporary cluster on this machine (test/store/pg-server.ts). Three',
    'rounds, setups interleaved; medians. Every process shares the same 2 cores, so a second replica adds coordination, not',
    `capacity (docs/scaling.md). ${cpus().length} cores (${cpus()[0]?.model ?? '?'}).`,
    '',
    '| setup | requests/s (median; each round) | vs files | database commits per request |',
    '|---|---|---:|---:|',
  ];
  for (const r of rows) {
    const c = r.commits.length === 0 ? '-' : `${median(r.commits).toFixed(2)} (${r.commits.map((x) => x.toFixed(2)).join(', ')})`;
    out.push(`| ${r.setup} | ${median(r.rps).toFixed(1)} (${r.rps.map((x) => x.toFixed(0)).join(', ')}) | ${(median(r.rps) / base).toFixed(2)} | ${c} |`);
  }
  out.push('');
  out.push(`Commits are \`pg_stat_database.xact_commit\` over a third load of the same size after the timed ones, read-only`);
  out.push('transactions included, read once the replicas have exited (a backend reports its counts then). They include what is');
  out.push(`not per request: each agent's first request (${AGENTS} of ${AGENTS * REQUESTS}) starts a session (two more), a replica meeting a session it`);
  out.push('does not know looks it up and opens it, each new connection starts with a transaction of its own (the pools closed');
  out.push('theirs while idle), every replica asks for the key list every 2 s, and every session the replicas hold saves its');
  out.push('index as they exit. A steady request is its claim and one batch (test/e2e/pg-commits.test.ts, decision 0008).');
  out.push('');
  return out;
}
