/**
 * What the log costs on disk against the conversation it records: the resending agent through the
 * proxy to the simulator, with and without credentials in the files it reads. The log should hold
 * each message once (plus each request's record and reply), whatever the client resends: a
 * redacted credential the client sends again unredacted is the same message, not a rewrite.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load.js';
import type { LogEvent } from '../src/core/events.js';
import { startProxy } from '../src/proxy/server.js';
import { createSim, type Sim } from '../src/sim/server.js';
import { runResendingAgent, type ResendingRun } from './resending-agent.js';
import { median } from './stats.js';

export interface LogGrowthRow {
  requests: number;
  plantEvery: number;
  toolResults: number;
  planted: number;
  /** Medians over the repetitions. */
  logBytes: number;
  conversationBytes: number;
  clientMsgs: number;
  rewrites: number;
  sessions: number;
  /** Planted secrets found in the log (must be 0). */
  leaked: number;
}

export async function measureLogGrowth(sizes: readonly number[], plantEvery: number, reps: number): Promise<LogGrowthRow[]> {
  const sim = await createSim({ seed: 21 });
  try {
    const rows: LogGrowthRow[] = [];
    for (const requests of sizes) {
      for (const every of [0, plantEvery]) {
        const runs: Omit<LogGrowthRow, 'requests' | 'plantEvery'>[] = [];
        for (let rep = 0; rep < reps; rep++) runs.push(await once(sim, requests, every, 40 + rep));
        const mid = (pick: (r: (typeof runs)[number]) => number) => median(runs.map(pick));
        rows.push({
          requests, plantEvery: every, toolResults: mid((r) => r.toolResults), planted: mid((r) => r.planted),
          logBytes: mid((r) => r.logBytes), conversationBytes: mid((r) => r.conversationBytes), clientMsgs: mid((r) => r.clientMsgs),
          rewrites: mid((r) => r.rewrites), sessions: mid((r) => r.sessions), leaked: Math.max(...runs.map((r) => r.leaked)),
        });
      }
    }
    return rows;
  } finally {
    await sim.close();
  }
}

async function once(sim: Sim, requests: number, plantEvery: number, seed: number): Promise<Omit<LogGrowthRow, 'requests' | 'plantEvery'>> {
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-log-'));
  const file = join(dir, 'config.toml');
  await writeFile(file, `listen = "127.0.0.1:0"\ndata_dir = "${join(dir, 'data')}"\n\n[providers.s]\npreset = "sim"\nbase_url = "${sim.url}"\n`);
  try {
    const proxy = await startProxy(loadConfig({ path: file, env: {} }));
    let run: ResendingRun;
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'bench', maxRetries: 0 });
      run = await runResendingAgent(client, 's/agent', { requests, seed, plantEvery });
    } finally {
      await proxy.close();
    }
    const sessions = join(dir, 'data', 'sessions');
    const logs = await Promise.all((await readdir(sessions)).filter((f) => f.endsWith('.jsonl')).map((f) => readFile(join(sessions, f), 'utf8')));
    let clientMsgs = 0;
    let rewrites = 0;
    for (const text of logs) {
      for (const line of text.split('\n')) {
        if (line === '') continue;
        const type = (JSON.parse(line) as LogEvent).type;
        if (type === 'client.msg') clientMsgs++;
        if (type === 'client.rewrite') rewrites++;
      }
    }
    const all = logs.join('\n');
    return {
      toolResults: run.toolResults, planted: run.planted,
      logBytes: logs.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0), conversationBytes: run.conversationBytes,
      clientMsgs, rewrites, sessions: logs.length, leaked: run.secrets.filter((s) => all.includes(s)).length,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
