/**
 * Time to open a 2,000-request session in the inspector page: `proxy serve`'s own server (files
 * store, dist/ui as built) and Debian's chromium through playwright-core, from the navigation to
 * the session's stacked bars drawn (2,000 of them) and its first table page shown. The first open
 * is cold (the page's files and the session's log read for the first time); then the median and
 * worst of the next opens, each in a new tab. Budget (issue 28): under 1 s.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { loadConfig } from '../src/config/load.js';
import { FileStore } from '../src/store/files.js';
import type { Line } from './session-sections.js';
import { fmt, median } from './stats.js';

const REQUESTS = 2_000;
const OPENS = 7;
const BUDGET_MS = 1_000;

const RECIPE = {
  version: 'window-v3', route: 'a', context: 128_000, output_reserve: 8_000, high_water: 96_000, low_water: 60_000,
  max_result_tokens: 2_000, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
};

/** An agent's log: a turn per request, the prompt growing, a trim every 100 requests (elisions, a cache break). */
function logLines(requests: number, now: number): string[] {
  const start = now - requests * 1000;
  let seq = 0;
  const line = (body: Record<string, unknown>) => JSON.stringify({ seq: ++seq, ts: new Date(start + seq * 400).toISOString(), ...body });
  const out = [line({ type: 'session.start', recipe: RECIPE, ids: [] }), line({ type: 'client.msg', msg: { role: 'system', content: 'You are an agent.' }, head: true })];
  let prompt = 4_000;
  const users: number[] = [];
  for (let r = 0; r < requests; r++) {
    out.push(line({ type: 'client.msg', msg: { role: 'user', content: `turn ${r}` } }));
    users.push(seq);
    const trim = r > 0 && r % 100 === 0;
    if (trim) prompt = 40_000;
    const req = seq + 1;
    out.push(line({
      type: 'llm.req', digest: 'sha256:0', recipe_version: 'window-v3', route: 'a', model: 'model-a', origin: { provider: 'p', model: 'model-a' },
      params: {}, elided: trim ? users.slice(-80, -70) : [], est_tokens: prompt, cause: r === 0 ? 'first' : trim ? 'trim' : 'none', key_name: 'k', inbound: 'openai-chat',
    }));
    out.push(line({
      type: 'llm.resp', req, origin: { provider: 'p', model: 'model-a' }, timings: { ttfb_ms: 300, total_ms: 900 },
      reply: { content: 'ok', finish_reason: 'stop', usage: { prompt_tokens: prompt, cached_tokens: r === 0 ? 0 : trim ? 2_048 : prompt - 400, completion_tokens: 200 } },
    }));
    prompt += 300;
  }
  return out;
}

export async function inspectorPageSection(line: Line): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-bench-page-'));
  const port = await freePort();
  const toml = `listen = "127.0.0.1:${port}"\ndata_dir = ${JSON.stringify(join(dir, 'data'))}\n[models.a]\nprovider = "sim"\nmodel = "model-a"\nprice = { input = 1, cache_read = 0.1, output = 4 }\n`;
  await writeFile(join(dir, 'config.toml'), toml);
  const config = loadConfig({ path: join(dir, 'config.toml'), env: {}, cwd: dir });
  await new FileStore(config.dataDir).importLog('long', logLines(REQUESTS, Date.now()));
  // The built CLI, as a person runs it: `proxy serve` serves the page from the package's dist/ui.
  const serve = spawn(process.execPath, [resolve(import.meta.dirname, '../../dist/cli/main.js'), 'serve', '--config', join(dir, 'config.toml')], { stdio: 'ignore' });
  const proxy = { url: `http://127.0.0.1:${port}` };
  await ready(proxy.url);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const times: number[] = [];
    for (let i = 0; i < OPENS; i++) {
      const page = await context.newPage();
      const t = performance.now();
      await page.goto(`${proxy.url}/ui/#/s/long`);
      await page.locator(`[data-testid="token-chart"][data-bars="${REQUESTS}"] canvas`).waitFor({ timeout: 10_000 }).catch(async (err: unknown) => {
        throw new Error(`the session did not open: ${(await page.locator('main').innerText()).slice(0, 300)}`, { cause: err });
      });
      await page.locator('[data-testid="request-row"]').first().waitFor();
      times.push(performance.now() - t);
      await page.close();
    }
    const [cold, ...warm] = times as [number, ...number[]];
    const worst = Math.max(...warm);
    line(`A session of ${REQUESTS.toLocaleString('en-US')} requests (19 breaks, each a trim with elisions), opened in the inspector page`);
    line(`(\`proxy serve\`'s server, files store; Debian's chromium through playwright-core, 1280x900): from the navigation`);
    line(`to the ${REQUESTS.toLocaleString('en-US')} stacked bars drawn and the first table page shown.`);
    line('');
    line('| open | ms |');
    line('|---|---:|');
    line(`| first (cold: the page's files and the log read for the first time) | ${fmt(cold, 0)} |`);
    line(`| next ${warm.length}, median | ${fmt(median(warm), 0)} |`);
    line(`| next ${warm.length}, worst | ${fmt(worst, 0)} |`);
    line('');
    const ok = Math.max(cold, worst) < BUDGET_MS;
    line(`Budget: under ${fmt(BUDGET_MS, 0)} ms, every open: ${ok ? 'kept' : 'NOT kept'}.`);
    return ok;
  } finally {
    await browser.close();
    serve.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function ready(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`proxy serve did not answer at ${url}`);
}
