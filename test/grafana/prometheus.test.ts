/**
 * Every PromQL expression of every dashboard, run by a real Prometheus against a real proxy:
 * the simulator and the proxy on port 0 serve an agent trace (official `openai` client, with a
 * client key), plus requests that make the rarer series exist (an upstream 500, cache writes from
 * a fake upstream, a key refused for its spent budget);
 * Prometheus scrapes /metrics every second; each expression must parse and return data.
 * Prometheus must be installed (Debian's `prometheus` package; `npm test` installs it first, see
 * scripts/test-servers.sh): without it this file fails, it does not skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../bench/agent.js';
import { startStatsWorld, type StatsWorld } from '../stats/world.js';
import { startCacheWriter, type CacheWriter } from './cache-writer.js';
import { expressions, substituteVariables } from './dashboards.js';

const exprs = expressions();
const SPENT_KEY = 'prometheus-test-spent-key';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let world: StatsWorld | undefined;
let writer: CacheWriter | undefined;
let prometheus: ChildProcess | undefined;
let promLog = '';
let promUrl = '';
let dir = '';

interface QueryResult {
  status: string;
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

async function query(expr: string): Promise<QueryResult> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return (await res.json()) as QueryResult;
}

/** The value of a query returning one sample, or undefined. */
async function scalar(expr: string): Promise<number | undefined> {
  const r = await query(expr);
  const first = r.data?.result[0] as { value?: [number, string] } | undefined;
  return first?.value === undefined ? undefined : Number(first.value[1]);
}

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Prometheus: ${what} not within ${ms} ms. Its log:\n${promLog.slice(-4000)}`);
    await sleep(100);
  }
}

beforeAll(async () => {
  const version = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (version.error !== undefined) {
    throw new Error(`prometheus is not on PATH (${version.error.message}). Install it: apt-get install -y prometheus (npm test's pretest, scripts/test-servers.sh, does).`);
  }
  dir = mkdtempSync(join(tmpdir(), 'pp-prom-'));
  writer = await startCacheWriter();
  const writerUrl = writer.url;
  world = await startStatsWorld({
    extraToml: () => `
[providers.writer]
preset = "generic"
base_url = "${writerUrl}"

[models.writer]
provider = "writer"
model = "writer-1"
price = { input = 3, cache_read = 0.3, cache_write = 3.75, output = 15 }

# The client's key, with a budget the trace stays under, and one whose budget is spent.
[auth]
keys = [
  { name = "team", sha256 = "${sha256('test')}", budget_usd = 100, budget_period = "day" },
  { name = "spent", sha256 = "${sha256(SPENT_KEY)}", budget_usd = 0, budget_period = "day" },
]
`,
  });
  const target = new URL(world.proxy.url).host;
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: prefix-proxy
    static_configs:
      - targets: ["${target}"]
`);
  prometheus = spawn('prometheus', [
    `--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  prometheus.stdout!.on('data', (c: Buffer) => (promLog += c.toString()));
  prometheus.stderr!.on('data', (c: Buffer) => (promLog += c.toString()));
  await until('ready', async () => (await fetch(`${promUrl}/-/ready`)).ok, 15_000);
  await until('first scrape of the proxy', async () => (await scalar('up{job="prefix-proxy"}')) === 1, 10_000);

  // The trace, while Prometheus scrapes: an agent session that trims, a credential pasted into a
  // message, an upstream 500, and a route that reports cache writes.
  await runAgent(world.client, 'sim', { requests: 15, stream: true, seed: 11 });
  await world.client.chat.completions.create({ model: 'sim', messages: [{ role: 'user', content: 'the token is ghp_8fK2mQ9xL4vB7nR1tY6wZ3cS5dH0jP2aE4uG' }] });
  await expect(world.client.chat.completions.create({ model: 'sim', messages: [{ role: 'user', content: 'fail please [[error 500]]' }] }))
    .rejects.toMatchObject({ status: 500 });
  for (let i = 0; i < 2; i++) {
    await world.client.chat.completions.create({ model: 'writer', messages: [{ role: 'user', content: 'write the cache' }, ...(i === 0 ? [] : [{ role: 'assistant' as const, content: 'written.' }, { role: 'user' as const, content: 'again' }])] });
  }
  expect(writer.requests).toBe(2);
  // A key over its budget: refused with a 429 before anything is sent.
  const spent = new OpenAI({ baseURL: `${world.proxy.url}/v1`, apiKey: SPENT_KEY, maxRetries: 0 });
  await expect(spent.chat.completions.create({ model: 'sim', messages: [{ role: 'user', content: 'over budget' }] })).rejects.toMatchObject({ status: 429 });
  const traceEnd = Date.now() / 1000;
  // Two scrapes after the trace: every counter's final value is in, and rate() has two samples.
  await until('two scrapes after the trace', async () => {
    const last = await scalar('timestamp(up{job="prefix-proxy"})');
    return last !== undefined && last > traceEnd + 1;
  }, 10_000);
}, 60_000);

afterAll(async () => {
  if (prometheus !== undefined && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus!.once('exit', r));
    prometheus.kill('SIGTERM');
    await Promise.race([exited, sleep(5000).then(() => prometheus!.kill('SIGKILL'))]);
  }
  await world?.close();
  await writer?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('dashboard queries against a real Prometheus', () => {
  it('the scrape saw the trace', async () => {
    expect(await scalar('sum(proxy_requests_total{model="sim", status="200"})')).toBe(16);
    expect(await scalar('sum(proxy_redactions_total{kind="github"})')).toBe(1);
    expect(await scalar('sum(proxy_upstream_errors_total{status="500"})')).toBe(1);
    expect(await scalar('sum(proxy_cache_write_tokens_total{model="writer"})')).toBe(2900);
  });

  it('the saving series holds the writer route\'s cache read at its prices', async () => {
    const saved = await scalar('sum(proxy_cost_saved_usd_total{model="writer"})');
    expect(saved, 'no proxy_cost_saved_usd_total: is recordCacheSaving called in src/proxy/pipeline/?').toBeDefined();
    expect(saved).toBeCloseTo((2900 * (3 - 0.3)) / 1e6, 12);
  });

  it.each(exprs.map((e) => [`${e.file} "${e.panel}" ${e.refId}`, e] as const))('%s parses and returns data', async (_name, e) => {
    const promql = substituteVariables(e.expr);
    const r = await query(promql);
    expect(r.status, `${promql}: ${r.error ?? ''}`).toBe('success');
    const hint = promql.includes('proxy_cost_saved_usd_total') ? ' (is recordCacheSaving called in src/proxy/pipeline/?)' : '';
    expect(r.data!.result.length, `no data for ${promql}${hint}`).toBeGreaterThan(0);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
