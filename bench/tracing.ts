/**
 * What tracing costs per request: the same agent session through two proxies in one process, one
 * with tracing off and one exporting every span (sample ratio 1) to an OTLP/HTTP receiver in a
 * child process (so the receiver's own work is not counted). Rounds alternate which goes first;
 * the figure is this process's CPU time per request (client, simulator and proxy together: the
 * difference between the two is tracing's), median over rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load.js';
import { startProxy, type RunningProxy } from '../src/proxy/server.js';
import { createSim } from '../src/sim/server.js';
import { runAgent } from './agent.js';
import { median } from './stats.js';

export interface TracingRow {
  tracing: 'off' | 'on';
  /** CPU µs per request, median over rounds, and the smallest and largest round. */
  cpuUs: number;
  minUs: number;
  maxUs: number;
  /** Wall ms per request, median over rounds. */
  wallMs: number;
}

// A collector that reads each export whole and answers 200: the proxy's exporter sees a real endpoint.
const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function startReceiver(): Promise<{ endpoint: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { endpoint: `http://127.0.0.1:${chunk.toString().trim()}`, child };
}

export async function measureTracing(requests: number, rounds: number): Promise<TracingRow[]> {
  const sim = await createSim({ seed: 3 });
  const receiver = await startReceiver();
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-tracing-'));
  const proxies: Record<'off' | 'on', RunningProxy> = {} as Record<'off' | 'on', RunningProxy>;
  try {
    for (const mode of ['off', 'on'] as const) {
      const file = join(dir, `${mode}.toml`);
      const tracing = mode === 'on' ? `\n[tracing]\nendpoint = "${receiver.endpoint}"\n` : '';
      await writeFile(file, `listen = "127.0.0.1:0"\ndata_dir = "${join(dir, mode)}"\n\n[providers.s]\npreset = "sim"\nbase_url = "${sim.url}"\n${tracing}`);
      proxies[mode] = await startProxy(loadConfig({ path: file, env: {} }));
    }
    const clients = {
      off: new OpenAI({ baseURL: `${proxies.off.url}/v1`, apiKey: 'bench', maxRetries: 0 }),
      on: new OpenAI({ baseURL: `${proxies.on.url}/v1`, apiKey: 'bench', maxRetries: 0 }),
    };
    for (const mode of ['off', 'on'] as const) await runAgent(clients[mode], 's/agent', { requests: 10, seed: 99 }); // warm-up
    const cpu: Record<'off' | 'on', number[]> = { off: [], on: [] };
    const wall: Record<'off' | 'on', number[]> = { off: [], on: [] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const mode of order) {
        const before = process.cpuUsage();
        const t0 = performance.now();
        // A new seed each round: a new conversation, the same work for both modes.
        await runAgent(clients[mode], 's/agent', { requests, seed: 1000 + round });
        const used = process.cpuUsage(before);
        cpu[mode].push((used.user + used.system) / requests);
        wall[mode].push((performance.now() - t0) / requests);
      }
    }
    return (['off', 'on'] as const).map((mode) => ({
      tracing: mode,
      cpuUs: median(cpu[mode]),
      minUs: Math.min(...cpu[mode]),
      maxUs: Math.max(...cpu[mode]),
      wallMs: median(wall[mode]),
    }));
  } finally {
    for (const p of Object.values(proxies)) await p.close();
    receiver.child.kill();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
