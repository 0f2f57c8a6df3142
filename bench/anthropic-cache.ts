/**
 * The cache on an Anthropic-style upstream, which caches nothing unless asked: the bench agent's
 * long trace through the proxy with cache_control, through the proxy without it, and sent direct
 * by a client that sets none. Cost at Claude Sonnet's list prices.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load.js';
import { startProxy } from '../src/proxy/server.js';
import { createSim } from '../src/sim/server.js';
import { idealCached, runAgent, type AgentStep } from './agent.js';
import { runDirectAnthropic } from './anthropic-direct.js';

/** USD per million tokens: Claude Sonnet list prices (5-minute cache writes). */
export const SONNET = { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 };

export interface AnthropicRow {
  path: string;
  requests: number;
  prompt: number;
  cached: number;
  written: number;
  ideal: number;
  cost: number;
}

export async function measureAnthropicCache(requests: number, seed: number): Promise<AnthropicRow[]> {
  const sim = await createSim({ seed });
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-anthropic-'));
  const file = join(dir, 'config.toml');
  const base = `${sim.origin}/anthropic/v1`;
  const price = `price = { input = ${SONNET.input}, cache_read = ${SONNET.cache_read}, cache_write = ${SONNET.cache_write}, output = ${SONNET.output} }`;
  await writeFile(file, `listen = "127.0.0.1:0"
data_dir = "${join(dir, 'data')}"

[providers.ant]
preset = "anthropic"
base_url = "${base}"
api_key_env = ""

[models.claude-cached]
provider = "ant"
model = "claude-sonnet-sim"
cache_control = "ephemeral"
${price}

[models.claude-plain]
provider = "ant"
model = "claude-sonnet-sim"
cache_control = "off"
${price}
`);
  const proxy = await startProxy(loadConfig({ path: file, env: {} }));
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'bench', maxRetries: 0 });
  try {
    const cached = await runAgent(client, 'claude-cached', { requests, seed, stream: true });
    sim.reset();
    const plain = await runAgent(client, 'claude-plain', { requests, seed: seed + 1, stream: true });
    sim.reset();
    const direct = await runDirectAnthropic(base, 'claude-sonnet-sim', { requests, seed: seed + 2 });
    return [
      row('through the proxy, cache_control = "ephemeral"', cached.steps),
      row('through the proxy, cache_control = "off"', plain.steps),
      row('direct, a client that sets no cache_control', direct),
    ];
  } finally {
    await proxy.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function row(path: string, steps: readonly AgentStep[]): AnthropicRow {
  let prompt = 0;
  let cached = 0;
  let written = 0;
  let cost = 0;
  for (const s of steps) {
    const p = s.prompt_tokens ?? 0;
    const c = s.cached_tokens ?? 0;
    const w = s.cache_write_tokens ?? 0;
    prompt += p;
    cached += c;
    written += w;
    cost += ((p - c - w) * SONNET.input + c * SONNET.cache_read + w * SONNET.cache_write + (s.completion_tokens ?? 0) * SONNET.output) / 1e6;
  }
  return { path, requests: steps.length, prompt, cached, written, ideal: idealCached(steps, 1024, 1), cost };
}
