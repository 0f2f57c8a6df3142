/**
 * What the proxy adds to a request. Two views, each measured side by side with the simulator
 * alone in the same run:
 * - an agent session (appends, the window, the log synced before each answer), one request at a
 *   time through the official client: the median of per-request wall time;
 * - autocannon, 10 connections, each request a new one-message conversation (a new session and
 *   log file each time, the worst case for the log): requests per second and latency percentiles.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load.js';
import { startProxy } from '../src/proxy/server.js';
import { createSim } from '../src/sim/server.js';
import { runAgent } from './agent.js';
import { median, percentile } from './stats.js';

export interface OverheadRow {
  path: string;
  agentP50: number;
  agentP99: number;
  rps: number;
  p50: number;
  p99: number;
}

export async function measureOverhead(requests: number, amount: number): Promise<OverheadRow[]> {
  const sim = await createSim({ seed: 3 });
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-overhead-'));
  const file = join(dir, 'config.toml');
  await writeFile(file, `listen = "127.0.0.1:0"\ndata_dir = "${join(dir, 'data')}"\n\n[providers.s]\npreset = "sim"\nbase_url = "${sim.url}"\n`);
  const proxy = await startProxy(loadConfig({ path: file, env: {} }));
  try {
    const rows: OverheadRow[] = [];
    for (const [path, base, model] of [['simulator alone', sim.url, 'agent'], ['through the proxy', `${proxy.url}/v1`, 's/agent']] as const) {
      const client = new OpenAI({ baseURL: base, apiKey: 'bench', maxRetries: 0 });
      await runAgent(client, model, { requests: 10, seed: 99 }); // warm-up
      const run = await runAgent(client, model, { requests, seed: 5 });
      const ms = run.steps.map((s) => s.ms ?? NaN);
      const load = await cannon(`${base}/chat/completions`, model, amount);
      rows.push({ path, agentP50: median(ms), agentP99: percentile(ms, 99), ...load });
    }
    return rows;
  } finally {
    await proxy.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function cannon(url: string, model: string, amount: number): Promise<{ rps: number; p50: number; p99: number }> {
  let n = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections: 10,
    amount,
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    requests: [{
      setupRequest: (req: { method?: string }) => ({
        ...req,
        body: JSON.stringify({ model, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `question ${n++}: ${'context '.repeat(200)}` }] }),
      }),
    }],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`bench: ${result.non2xx} non-2xx and ${result.errors} errors at ${url}`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}
