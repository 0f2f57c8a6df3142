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

/**
 * Replicas shared with other traffic: several agent sessions at once on replicas whose caches
 * hold only so many blocks. With a session key each session keeps to one replica; without, every
 * replica holds every session's prefixes and evicts them sooner.
 */
export async function measureSharedCache(sessions: number, requests: number, replicas: number, maxBlocksPerReplica: number): Promise<CacheRow[]> {
  const sim = await createSim({ replicas, routing: 'random', seed: 17, maxBlocksPerReplica });
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-shared-'));
  const file = join(dir, 'config.toml');
  await writeFile(file, `listen = "127.0.0.1:0"\ndata_dir = "${join(dir, 'data')}"\n\n[providers.simr]\npreset = "sim"\nbase_url = "${sim.url}"\n`);
  const proxy = await startProxy(loadConfig({ path: file, env: {} }));
  const seeds = Array.from({ length: sessions }, (_, i) => 100 + i);
  try {
    const viaProxy = await Promise.all(seeds.map((seed) => runAgent(new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'bench', maxRetries: 0 }), 'simr/agent', { requests, seed })));
    sim.reset();
    const direct = await Promise.all(seeds.map((seed) => runAgent(new OpenAI({ baseURL: sim.url, apiKey: 'bench', maxRetries: 0 }), 'agent', { requests, seed })));
    const label = `${sessions} sessions at once, ${replicas} replicas of ${maxBlocksPerReplica} blocks`;
    return [
      sum(`${label}, through the proxy (session key)`, viaProxy.map((r) => r.steps)),
      sum(`${label}, direct, no key`, direct.map((r) => r.steps)),
    ];
  } finally {
    await proxy.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function sum(path: string, runs: AgentStep[][]): CacheRow {
  const rows = runs.map((steps) => row(path, steps));
  return {
    path,
    requests: rows.reduce((n, r) => n + r.requests, 0),
    prompt: rows.reduce((n, r) => n + r.prompt, 0),
    cached: rows.reduce((n, r) => n + r.cached, 0),
    ideal: rows.reduce((n, r) => n + r.ideal, 0),
  };
}
