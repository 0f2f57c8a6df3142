/**
 * The cache through the proxy against the same agent sent direct: a simulator with 4 replicas,
 * each with its own prefix cache, routing at random when no session key is sent. Through the
 * proxy the session key keeps the conversation on one replica; direct, it lands anywhere.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load.js';
import { startProxy } from '../src/proxy/server.js';
import { createSim } from '../src/sim/server.js';
import { idealCached, runAgent, type AgentStep } from './agent.js';

export interface CacheRow {
  path: string;
  requests: number;
  prompt: number;
  cached: number;
  ideal: number;
}

export async function measureCache(requests: number, seed: number, replicas: number): Promise<CacheRow[]> {
  const sim = await createSim({ replicas, routing: 'random', seed });
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-'));
  const file = join(dir, 'config.toml');
  await writeFile(file, `listen = "127.0.0.1:0"\ndata_dir = "${join(dir, 'data')}"\n\n[providers.sim4]\npreset = "sim"\nbase_url = "${sim.url}"\n`);
  const proxy = await startProxy(loadConfig({ path: file, env: {} }));
  try {
    const viaProxy = await runAgent(new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'bench', maxRetries: 0 }), 'sim4/agent', { requests, seed, stream: true });
    sim.reset();
    const direct = await runAgent(new OpenAI({ baseURL: sim.url, apiKey: 'bench', maxRetries: 0 }), 'agent', { requests, seed, stream: true });
    return [row(`${replicas} replicas, through the proxy (session key)`, viaProxy.steps), row(`${replicas} replicas, direct, no key`, direct.steps)];
  } finally {
    await proxy.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function row(path: string, steps: AgentStep[]): CacheRow {
  return {
    path,
    requests: steps.length,
    prompt: steps.reduce((n, s) => n + (s.prompt_tokens ?? 0), 0),
    cached: steps.reduce((n, s) => n + (s.cached_tokens ?? 0), 0),
    ideal: idealCached(steps),
  };
}
