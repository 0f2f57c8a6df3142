/**
 * The inspector's API at scale: 10,000 stored sessions (files store), the sessions list and the
 * overview answered from the in-memory index (p50/p99 over mixed queries), the index's first build
 * and its rescan, and one 2,000-request session's `/api/sessions/:id`. Through fastify's inject():
 * the figures include routing and JSON serialisation, not a socket.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { loadConfig } from '../src/config/load.js';
import { LiveFeed } from '../src/inspector/live.js';
import { inspectorPlugin } from '../src/inspector/routes.js';
import { FileStore } from '../src/store/files.js';
import { fmt, median, percentile } from './stats.js';
import type { Line } from './session-sections.js';

const SESSIONS = 10_000;
const LONG = 2_000;
const QUERIES = [
  '/api/sessions',
  '/api/sessions?sort=cost',
  '/api/sessions?sort=cache_share&dir=asc',
  '/api/sessions?sort=requests&offset=5000&limit=100',
  '/api/sessions?period=24h&sort=prompt_tokens',
  '/api/sessions?q=7a',
  '/api/sessions?model=b&limit=500',
  '/api/sessions?key=k3',
];

const RECIPE = {
  version: 'window-v3', route: 'a', context: 128_000, output_reserve: 8_000, high_water: 96_000, low_water: 60_000,
  max_result_tokens: 2_000, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
};

/** A plausible log: start, system prompt, then `requests` turns of user message, request and reply. */
function logLines(i: number, requests: number, now: number): string[] {
  const route = i % 3 === 0 ? 'b' : 'a';
  const start = now - ((i * 7919) % (7 * 86_400_000));
  let seq = 0;
  const ts = () => new Date(start + seq * 1000).toISOString();
  const line = (body: Record<string, unknown>) => JSON.stringify({ seq: ++seq, ts: ts(), ...body });
  const out = [line({ type: 'session.start', recipe: { ...RECIPE, route }, ids: [] }), line({ type: 'client.msg', msg: { role: 'system', content: 'You are an agent.' }, head: true })];
  let prompt = 4_000;
  for (let r = 0; r < requests; r++) {
    out.push(line({ type: 'client.msg', msg: { role: 'user', content: `turn ${r}` } }));
    const req = seq + 1;
    out.push(line({
      type: 'llm.req', digest: 'sha256:0', recipe_version: 'window-v3', route, model: `model-${route}`, origin: { provider: 'p', model: `model-${route}` },
      params: {}, elided: [], est_tokens: prompt, cause: r === 0 ? 'first' : 'none', key_name: `k${i % 5}`, inbound: 'openai-chat',
    }));
    out.push(line({
      type: 'llm.resp', req, origin: { provider: 'p', model: `model-${route}` }, timings: { ttfb_ms: 300, total_ms: 900 },
      reply: { content: 'ok', finish_reason: 'stop', usage: { prompt_tokens: prompt, cached_tokens: r === 0 ? 0 : prompt - 400, completion_tokens: 200 } },
    }));
    prompt += 600;
  }
  return out;
}

function timeOf(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  return fn().then(() => performance.now() - t);
}

export async function inspectorSection(line: Line): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-bench-inspector-'));
  try {
    await writeFile(join(dir, 'config.toml'), `data_dir = ${JSON.stringify(join(dir, 'data'))}\n[models.a]\nprovider = "sim"\nmodel = "model-a"\nprice = { input = 1, cache_read = 0.1, output = 4 }\n`);
    const config = loadConfig({ path: join(dir, 'config.toml'), env: {}, cwd: dir });
    const store = new FileStore(config.dataDir);
    const now = Date.now();
    let requests = 0;
    for (let i = 0; i < SESSIONS; i++) {
      const n = 1 + (i % 10);
      requests += n;
      await store.importLog(`s${i.toString(16).padStart(5, '0')}`, logLines(i, n, now));
    }
    await store.importLog('long', logLines(1, LONG, now));
    const app = Fastify();
    await app.register(inspectorPlugin, { config, store, live: new LiveFeed({ pollMs: 0, heartbeatMs: 0 }), now: () => new Date(), refreshMs: 60_000 });
    const get = async (url: string) => {
      const res = await app.inject({ method: 'GET', url });
      if (res.statusCode !== 200) throw new Error(`bench: ${url} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
      return res;
    };
    const build = await timeOf(() => get('/api/sessions'));
    const list: number[] = [];
    for (let round = 0; round < 40; round++) for (const q of QUERIES) list.push(await timeOf(() => get(q)));
    const overview: number[] = [];
    for (let round = 0; round < 20; round++) for (const p of ['1h', '24h', '7d', 'all']) overview.push(await timeOf(() => get(`/api/overview?period=${p}`)));
    const long: number[] = [];
    for (let round = 0; round < 15; round++) long.push(await timeOf(() => get('/api/sessions/long')));
    const longBytes = (await get('/api/sessions/long')).body.length;
    const request: number[] = [];
    for (let round = 0; round < 15; round++) request.push(await timeOf(() => get(`/api/sessions/long/requests/${3 * LONG + 1}`)));
    await app.close();

    line('## Inspector: the sessions API at 10,000 sessions');
    line();
    line(`${SESSIONS.toLocaleString('en-US')} session logs on the files store (1-10 requests each, ${requests.toLocaleString('en-US')} requests over 7 days) plus one`);
    line(`${LONG.toLocaleString('en-US')}-request session, answered through fastify's inject() (routing and JSON included, no socket). The first call`);
    line('builds the in-memory index (every log read once); later calls filter, sort and page it, and a log is read again only when');
    line(`its length changed. \`/api/sessions\`: ${list.length} calls over ${QUERIES.length} mixed queries (sorts, a deep page, filters); \`/api/overview\`: ${overview.length} calls over the four periods.`);
    line();
    line('| call | p50 (ms) | p99 (ms) |');
    line('|---|---:|---:|');
    line(`| first call: index built from ${(SESSIONS + 1).toLocaleString('en-US')} logs | ${fmt(build, 0)} | |`);
    line(`| \`GET /api/sessions\` (mixed queries) | ${fmt(median(list), 2)} | ${fmt(percentile(list, 99), 2)} |`);
    line(`| \`GET /api/overview\` (four periods) | ${fmt(median(overview), 2)} | ${fmt(percentile(overview, 99), 2)} |`);
    line(`| \`GET /api/sessions/:id\`, ${LONG.toLocaleString('en-US')} requests (${fmt(longBytes / 1024, 0)} KiB of JSON) | ${fmt(median(long), 1)} | ${fmt(percentile(long, 99), 1)} |`);
    line(`| \`GET /api/sessions/:id/requests/:seq\`, the last of ${LONG.toLocaleString('en-US')} (rebuilt from the log) | ${fmt(median(request), 1)} | ${fmt(percentile(request, 99), 1)} |`);
    line();
    return true;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
