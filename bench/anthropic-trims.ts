/**
 * What an Anthropic-style upstream reads at the requests that trim, with the proxy's one top-level
 * `cache_control` against its explicit breakpoints (docs/decisions/0003): the bench agent's trace
 * on a route small enough to trim several times, once per setting, the simulator reset between.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { LogEvent } from '../src/core/events.js';
import { loadConfig } from '../src/config/load.js';
import { startProxy } from '../src/proxy/server.js';
import { createSim } from '../src/sim/server.js';
import { runAgent } from './agent.js';
import { pct } from './stats.js';

/** A coding agent's system prompt in size (~30 KB): the head a trim should not cost. */
const HEAD = Array.from({ length: 400 }, (_, i) => `Rule ${i}: keep the change small, run the tests, and say what you did and why (${i % 13}).`).join('\n');

export interface TrimRow {
  at: 'top-level' | 'breakpoints';
  requests: number;
  trims: number;
  prompt: number;
  cached: number;
  /** Tokens read from the cache by the requests that trimmed, and their prompts. */
  trimCached: number;
  trimPrompt: number;
}

export async function measureAnthropicTrims(requests: number, seed: number): Promise<TrimRow[]> {
  const sim = await createSim({ seed });
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-trims-'));
  const rows: TrimRow[] = [];
  try {
    for (const at of ['top-level', 'breakpoints'] as const) {
      const data = join(dir, at);
      const file = join(dir, `${at}.toml`);
      await writeFile(file, `listen = "127.0.0.1:0"
data_dir = "${data}"

[providers.ant]
preset = "anthropic"
base_url = "${sim.origin}/anthropic/v1"
api_key_env = ""

[models.claude]
provider = "ant"
model = "claude-sonnet-sim"
context = 40000
cache_control_at = "${at}"
`);
      const proxy = await startProxy(loadConfig({ path: file, env: {} }));
      const from = sim.anthropicRequests.length;
      try {
        await runAgent(new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'bench', maxRetries: 0 }), 'claude', { requests, seed, stream: true, resultBytes: 3000, system: HEAD });
      } finally {
        await proxy.close();
      }
      const records = sim.anthropicRequests.slice(from).filter((r) => !r.path.endsWith('/count_tokens'));
      const trimmed = await trimIndexes(join(data, 'sessions'));
      const row: TrimRow = { at, requests: records.length, trims: trimmed.size, prompt: 0, cached: 0, trimCached: 0, trimPrompt: 0 };
      records.forEach((r, i) => {
        row.prompt += r.promptTokens;
        row.cached += r.cachedTokens;
        if (!trimmed.has(i)) return;
        row.trimCached += r.cachedTokens;
        row.trimPrompt += r.promptTokens;
      });
      rows.push(row);
      sim.reset();
    }
    return rows;
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The 0-based indexes, among the session's requests, of those that elided something. */
async function trimIndexes(sessions: string): Promise<Set<number>> {
  const out = new Set<number>();
  for (const name of (await readdir(sessions)).filter((n) => n.endsWith('.jsonl'))) {
    const events = (await readFile(join(sessions, name), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogEvent);
    let i = 0;
    for (const e of events) {
      if (e.type !== 'llm.req') continue;
      if (e.elided.length > 0) out.add(i);
      i++;
    }
  }
  return out;
}

/** The `anthropic-trims` section of bench/RESULTS.md. */
export async function anthropicTrimsSection(line: (s?: string) => void): Promise<boolean> {
  const rows = await measureAnthropicTrims(80, 21);
  line('## Cache: Anthropic at the requests that trim, top-level cache_control against breakpoints');
  line();
  line('The bench agent\'s 80-request trace (3 KB tool results) and a ~30 KB system prompt on an Anthropic route of context 40,000, so the window trims');
  line('several times; the simulator\'s Anthropic wire caches only at `cache_control` markers. The request that trims changes');
  line('the prompt after its unchanged head (tools, system, first messages): one top-level marker sits on the last block');
  line('and cannot reach that head; breakpoints mark it (docs/decisions/0003).');
  line();
  line('| cache_control_at | requests | trims | prompt tokens | cached | cached / prompt | read at trims | trims\' prompt |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.at} | ${r.requests} | ${r.trims} | ${r.prompt} | ${r.cached} | ${pct(r.cached, r.prompt)} | ${r.trimCached} | ${r.trimPrompt} |`);
  }
  line();
  return rows.every((r) => r.trims >= 2);
}
