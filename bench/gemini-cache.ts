/**
 * Gemini's explicit context caches against implicit caching alone: the bench agent's 60-request
 * trace on the native wire, through the proxy, to the simulator's native Gemini mode (implicit
 * prefix cache per replica; `cachedContents` with storage in token-hours), back to back and with
 * gaps longer than the implicit cache keeps a prefix. The simulator's clock is the proxy's, moved
 * forward by hand. Also the world the e2e test (test/e2e/gemini-cache.test.ts) runs in.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/load.js';
import { costOf, storageCostOf } from '../src/pricing/cost.js';
import type { Price } from '../src/pricing/price.js';
import { geminiCachesOf } from '../src/proxy/app.js';
import type { GeminiCaches } from '../src/proxy/gemini-caches.js';
import { startProxy, type RunningProxy } from '../src/proxy/server.js';
import { createSim, type Sim } from '../src/sim/server.js';
import { runAgent, type AgentStep } from './agent.js';
import { fmt, pct } from './stats.js';

/** USD per million tokens (storage: per million token-hours): Gemini 2.5 Flash's list prices, text. */
export const FLASH: Required<Pick<Price, 'input' | 'cache_read' | 'output' | 'cache_storage'>> = { input: 0.3, cache_read: 0.03, output: 2.5, cache_storage: 1 };

export interface GeminiCacheWorld {
  dir: string;
  sim: Sim;
  proxy: RunningProxy;
  client: OpenAI;
  /** Moves the clock the proxy and the simulator share. */
  advance(ms: number): void;
  caches(): GeminiCaches;
  close(): Promise<void>;
}

/**
 * The simulator, the proxy on a clock shared with it, and a `gm` provider (gemini preset) at
 * `upstream(sim.origin)` (a tap, for a test that reads the wire), with the `[models]` given.
 */
export async function startGeminiCacheWorld(opts: { models: string; idleMinutes?: number; seed?: number; upstream?: (origin: string) => Promise<string> }): Promise<GeminiCacheWorld> {
  let offset = 0;
  const now = () => Date.now() + offset;
  const sim = await createSim({ host: '127.0.0.1', port: 0, clock: now, seed: opts.seed ?? 1 });
  const base = opts.upstream === undefined ? sim.origin : await opts.upstream(sim.origin);
  const dir = await mkdtemp(join(tmpdir(), 'pp-gemini-cache-'));
  const file = join(dir, 'config.toml');
  await writeFile(file, `listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(dir, 'data'))}

[sessions]
idle_minutes = ${opts.idleMinutes ?? 15}

[providers.gm]
preset = "gemini"
base_url = "${base}/v1beta"
api_key_env = ""
${opts.models}`);
  const proxy = await startProxy(loadConfig({ path: file, env: {}, cwd: dir }), { now: () => new Date(now()) });
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'bench', maxRetries: 0 });
  return {
    dir, sim, proxy, client,
    advance: (ms) => {
      offset += ms;
    },
    caches: () => geminiCachesOf.get(proxy.app)!,
    async close() {
      proxy.app.server.closeAllConnections();
      await proxy.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface GeminiCacheRow {
  path: string;
  requests: number;
  prompt: number;
  /** Prompt tokens read from a cache (implicit or explicit). */
  read: number;
  /** Tokens put in `cachedContents` entries. */
  written: number;
  /** Token-hours stored, by the simulator's count. */
  tokenHours: number;
  entries: number;
  /** Reads, input and output at the prices, entries written at the input price, storage. */
  cost: number;
  storageCost: number;
}

const priceLine = `price = { input = ${FLASH.input}, cache_read = ${FLASH.cache_read}, output = ${FLASH.output}, cache_storage = ${FLASH.cache_storage} }`;

/** How the runs differ: the pause between requests, and a window small enough to trim. */
const RUNS = [
  { gapMs: 0, context: undefined, label: 'back to back' },
  { gapMs: 10 * 60_000, context: undefined, label: '10 min apart' },
  { gapMs: 0, context: 24_000, label: 'back to back, trimmed at 24k context' },
] as const;

/** Each run: one session of `requests`, `gapMs` apart, then left idle until its entry is deleted. */
export async function measureGeminiCache(requests: number, seed: number): Promise<GeminiCacheRow[]> {
  const rows: GeminiCacheRow[] = [];
  for (const { gapMs, context, label } of RUNS) {
    for (const mode of ['implicit', 'explicit'] as const) {
      const w = await startGeminiCacheWorld({
        seed, idleMinutes: 15,
        models: `
[models.flash]
provider = "gm"
model = "gemini-2.5-flash"
gemini_cache = "${mode}"
${context === undefined ? '' : `context = ${context}\noutput_reserve = 4000`}
${priceLine}
`,
      });
      try {
        const run = await runAgent(w.client, 'flash', {
          requests, seed, stream: true,
          rewrite: (messages, i) => {
            if (i > 0) w.advance(gapMs);
            return messages;
          },
        });
        // The session goes idle: its entry lives until the sweep deletes it, and is billed till then.
        w.advance(15 * 60_000 + 1);
        await w.caches()?.sweep();
        const stats = w.sim.stats().gemini.cachedContents;
        const written = w.caches()?.totals().tokensWritten ?? 0;
        rows.push(row(`${mode}${mode === 'explicit' ? ' (`gemini_cache = "explicit"`)' : ' only'}, ${label}`, run.steps, written, stats.tokenHours, stats.created));
      } finally {
        await w.close();
      }
    }
  }
  return rows;
}

function row(path: string, steps: readonly AgentStep[], written: number, tokenHours: number, entries: number): GeminiCacheRow {
  const price: Price = FLASH;
  let prompt = 0;
  let read = 0;
  let cost = 0;
  for (const s of steps) {
    prompt += s.prompt_tokens ?? 0;
    read += s.cached_tokens ?? 0;
    const split = costOf(price, { prompt_tokens: s.prompt_tokens ?? 0, cached_tokens: s.cached_tokens ?? 0, completion_tokens: s.completion_tokens ?? 0 })!;
    cost += split.input + split.cache_read + split.output;
  }
  const storageCost = storageCostOf(price, tokenHours) ?? Number.NaN;
  cost += written * FLASH.input * 1e-6 + storageCost;
  return { path, requests: steps.length, prompt, read, written, tokenHours, entries, cost, storageCost };
}

/** The `gemini-cache` section of bench/RESULTS.md. */
export async function geminiCacheSection(line: (s?: string) => void): Promise<boolean> {
  const rows = await measureGeminiCache(60, 11);
  line('## Cache: Gemini explicit context caches against implicit caching alone, a 60-request agent trace');
  line();
  line('The bench agent (OpenAI client) through the proxy to the simulator\'s native Gemini wire (`gemini` preset): implicit');
  line('prefix caching per replica (5-minute TTL) and `cachedContents` with storage in token-hours by the simulator\'s count,');
  line('which includes each entry\'s idle tail until the proxy deletes it (`idle_minutes = 15`). Requests back to back, and');
  line('10 minutes apart (the clock moved by hand). Cost at Gemini 2.5 Flash list prices, text');
  line(`($${FLASH.input} input, $${FLASH.cache_read} cache read, $${FLASH.output} output per million tokens, $${FLASH.cache_storage} per million`);
  line('token-hours stored); the tokens put in an entry are billed once at the input price (an assumption: the pricing page');
  line('names only the read and storage prices).');
  line();
  line('| path | requests | prompt tokens | read from cache | of prompt | written to entries | entries | token-hours stored | storage (USD) | cost (USD) |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.path} | ${r.requests} | ${r.prompt} | ${r.read} | ${pct(r.read, r.prompt)} | ${r.written} | ${r.entries} | ${fmt(r.tokenHours, 0)} | ${fmt(r.storageCost, 4)} | ${fmt(r.cost, 4)} |`);
  }
  line();
  const [implicitFast, explicitFast, implicitSlow, explicitSlow, implicitTrim, explicitTrim] = rows;
  line(`Back to back, explicit costs ${fmt(explicitFast!.cost / implicitFast!.cost, 2)}x implicit; 10 minutes apart, ${fmt(explicitSlow!.cost / implicitSlow!.cost, 2)}x;`);
  line(`trimmed, ${fmt(explicitTrim!.cost / implicitTrim!.cost, 2)}x (docs/decisions/0007-gemini-explicit-caching.md).`);
  line();
  return true;
}
