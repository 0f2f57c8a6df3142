/**
 * One world per UI test file: the simulator and the proxy on port 0 with `[auth] keys` (an admin
 * key and a client key), sessions served through it with the official `openai` client (a trim on
 * a small context route, a fork, a compaction side request and a client rewrite), and Debian's
 * chromium driven by playwright-core, logged in to the inspector with the admin key.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import { expect } from 'vitest';
import { runAgent } from '../../bench/agent.js';
import { loadConfig } from '../../src/config/load.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { proxy as cli } from '../cli/helpers.js';

export const ADMIN_KEY = 'ui-test-admin-key-7f3a';
export const CLIENT_KEY = 'ui-test-client-key-91c2';
/** USD per million tokens for both routes. */
export const PRICE = { input: 2, cache_read: 0.2, cache_write: 2.5, output: 8 };
export const SCREENSHOTS = resolve(import.meta.dirname, '../../docs/screenshots');

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export interface UiWorld {
  dir: string;
  dataDir: string;
  configFile: string;
  sim: Sim;
  proxy: RunningProxy;
  /** The client the agents use (the non-admin key). */
  client: OpenAI;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** The sessions the traffic made, by what they show. */
  ids: { trimmed: string; parent: string; fork: string; conversation: string; side: string; rewritten: string };
  /** Send one more request in the rewritten session (under its explicit id). */
  extend(): Promise<void>;
  close(): Promise<void>;
}

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

export async function startUiWorld(name: string): Promise<UiWorld> {
  const dir = await mkdtemp(join(tmpdir(), `pp-ui-${name}-`));
  const dataDir = join(dir, 'data');
  const sim = await createSim({ host: '127.0.0.1', port: 0 });
  const price = `price = { input = ${PRICE.input}, cache_read = ${PRICE.cache_read}, cache_write = ${PRICE.cache_write}, output = ${PRICE.output} }`;
  const toml = `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(dataDir)}

[providers.up]
preset = "generic"
base_url = "${sim.url}"

[models.m]
provider = "up"
model = "sim-model"
${price}

[providers.an]
preset = "anthropic"
base_url = "${sim.origin}/anthropic/v1"
api_key_env = ""

# A model that binds signed thinking to its prefix (docs/decisions/0009), as the simulator plays it.
[models.thinker]
provider = "an"
model = "claude-sonnet-5-5"
${price}

[models.tight]
provider = "up"
model = "sim-model"
context = 5000
output_reserve = 1000
max_result_tokens = 1000
${price}

[auth]
keys = [
  { name = "ops", sha256 = "${sha(ADMIN_KEY)}", admin = true },
  { name = "dev", sha256 = "${sha(CLIENT_KEY)}", budget_usd = 10, budget_period = "day" },
]
`;
  const configFile = join(dir, 'config.toml');
  await writeFile(configFile, toml);
  const proxy = await startProxy(loadConfig({ path: configFile, env: {}, cwd: dir }));
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
  const { ids, extend } = await serveSessions(client, dataDir);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  expect(await logIn(context, proxy.url, ADMIN_KEY)).toBe(303);
  return {
    dir, dataDir, configFile, sim, proxy, client, browser, context, page, ids, extend,
    async close() {
      await browser.close();
      proxy.app.server.closeAllConnections();
      await proxy.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Log the browser in: the login form's POST, made through the context's request API so that the
 * cookie lands in the browser (test/ui/access.test.ts submits the form itself too).
 */
export async function logIn(context: BrowserContext, base: string, key: string): Promise<number> {
  const answer = await context.request.post(`${base}/ui/login`, { form: { key }, maxRedirects: 0 });
  return answer.status();
}

export async function sessionList(dataDir: string): Promise<string[]> {
  return (await readdir(join(dataDir, 'sessions'))).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length));
}

/** The one session made since `before` (sessionList's answer then). */
export async function newId(dataDir: string, before: readonly string[]): Promise<string> {
  const now = await sessionList(dataDir);
  const created = now.filter((id) => !before.includes(id));
  expect(created).toHaveLength(1);
  return created[0]!;
}

/** About 1,600 tokens of system prompt: above the simulator's 1,024-token cache minimum alone. */
function longSystem(t: string): string {
  return Array.from({ length: 120 }, (_, i) => `Rule ${i + 1} of ${t}: keep the answer short, name files exactly.`).join('\n');
}

async function chat(client: OpenAI, messages: Msg[], headers: Record<string, string> = {}): Promise<string> {
  const r = await client.chat.completions.create({ model: 'm', messages }, { headers });
  return r.choices[0]?.message.content ?? '';
}

/** Each kind of session the inspector shows. The ids are read back as `proxy sessions` lists them. */
async function serveSessions(client: OpenAI, dataDir: string): Promise<Pick<UiWorld, 'ids' | 'extend'>> {
  let known: string[] = [];
  const next = async () => {
    const id = await newId(dataDir, known);
    known = [...known, id];
    return id;
  };

  // An agent on a small context: the window trims (elisions, breaks with cause trim).
  await runAgent(client, 'tight', { requests: 14, seed: 3 });
  const trimmed = await next();

  // A conversation, and another client forking it from the middle.
  const history: Msg[] = [{ role: 'system', content: longSystem('fork') }];
  for (let i = 1; i <= 4; i++) {
    history.push({ role: 'user', content: `step ${i} of the fork test [[say done with step ${i}]]` });
    history.push({ role: 'assistant', content: await chat(client, history) });
  }
  const parent = await next();
  await chat(client, [...history.slice(0, 5), { role: 'user', content: 'a different step 3 [[say forked]]' }]);
  const fork = await next();

  // A conversation under an explicit id, then opencode's compaction prompt on it: a side session.
  const named = { 'x-session-id': 'ui-conversation' };
  const conv: Msg[] = [{ role: 'system', content: longSystem('side') }];
  for (let i = 1; i <= 3; i++) {
    conv.push({ role: 'user', content: `part ${i} of the side test: ${'context words '.repeat(100)} [[say part ${i} done]]` });
    conv.push({ role: 'assistant', content: await chat(client, conv, named) });
  }
  const conversation = await next();
  await chat(client, [
    { role: 'system', content: 'You are a helpful AI assistant tasked with summarizing conversations.' },
    ...conv.slice(1),
    { role: 'user', content: 'Provide a detailed prompt for continuing our conversation above.\nFocus on information that would be helpful for continuing the conversation, including what we did, what we\'re doing, which files we\'re working on, and what we\'re going to do next. [[say the summary]]' },
  ], named);
  const side = await next();

  // A client that edits its own history under its session id: a client rewrite.
  const mine = { 'x-session-id': 'ui-rewriting-client' };
  const edited: Msg[] = [{ role: 'system', content: longSystem('rewrite') }];
  for (let i = 1; i <= 3; i++) {
    edited.push({ role: 'user', content: `question ${i} of the rewrite test [[say answer ${i}]]` });
    edited.push({ role: 'assistant', content: await chat(client, edited, mine) });
  }
  const rewritten = await next();
  edited[3] = { role: 'user', content: 'question 2 of the rewrite test, said again another way' };
  edited.push({ role: 'user', content: 'question 4 [[say answer 4]]' });
  edited.push({ role: 'assistant', content: await chat(client, edited, mine) });
  expect(await sessionList(dataDir)).toHaveLength(known.length);

  let more = 4;
  const extend = async () => {
    more++;
    edited.push({ role: 'user', content: `question ${more} [[say answer ${more}]]` });
    edited.push({ role: 'assistant', content: await chat(client, edited, mine) });
  };
  return { ids: { trimmed, parent, fork, conversation, side, rewritten }, extend };
}

/** `proxy stats SESSION --json` and `proxy sessions --json`, run as a person would. */
export function statsJson(w: UiWorld, id: string): StatsJson {
  const r = cli(['stats', id, '--json', '--data-dir', w.dataDir, '--config', w.configFile]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as StatsJson;
}

export function sessionsJson(w: UiWorld): SessionsJson {
  const r = cli(['sessions', '--json', '--data-dir', w.dataDir, '--config', w.configFile]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as SessionsJson;
}

export interface CliTotals {
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  completion_tokens: number | null;
  token_cache_rate: number | null;
  cost_usd: number | null;
  cost_unknown: number;
}
export interface StatsJson {
  session: CliTotals & { id: string; last_active: string | null };
  requests: { seq: number; status: string; error: string | null; cause: string | null; prompt_tokens: number | null; cached_tokens: number | null; cache_write_tokens: number | null; completion_tokens: number | null; cost_usd: number | null; dropped_blocks: number | null }[];
}
export interface SessionsJson { sessions: (CliTotals & { id: string; models: string[]; last_active: string | null })[]; unreadable: { id: string; error: string }[] }

/** The number a figure holds (its `data-value`); null for unknown. */
export async function figure(page: Page, testid: string): Promise<number | null> {
  const v = await page.getByTestId(testid).first().getAttribute('data-value');
  return v === null || v === 'null' ? null : Number(v);
}

/** axe on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')})`)).toEqual([]);
}

/**
 * Tab from the top of the page: every link and button the page shows is reached, in order, each
 * with a visible focus outline; returns the names reached.
 */
export async function tabThrough(page: Page, max = 400): Promise<string[]> {
  // Start where a fresh load starts: before the first element of the document. (Browser code as
  // text: the tests are typed without the DOM's library.)
  await page.evaluate(`{
    document.body.tabIndex = -1;
    document.body.focus();
    document.body.removeAttribute('tabindex');
    window.scrollTo(0, 0);
  }`);
  const reached: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const info = await page.evaluate<{ key: string; outlined: boolean } | null>(`(() => {
      const el = document.activeElement;
      if (el === null || el === document.body) return null;
      const style = getComputedStyle(el);
      return { key: el.tagName + ':' + (el.getAttribute('data-testid') ?? '') + ':' + (el.textContent ?? '').trim().slice(0, 40), outlined: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 };
    })()`);
    if (info === null) break;
    if (reached.includes(info.key) && info.key === reached[0]) break;
    expect(info.outlined, `focus visible on ${info.key}`).toBe(true);
    reached.push(info.key);
  }
  return reached;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * The bars a uPlot chart drew, read from its canvas as a person sees them: the runs of pixels more
 * opaque than `alpha` (of 255) along a row `above` CSS px over the plot area's bottom edge
 * (`.u-over` is laid over exactly that area), as CSS pixels from the area's left edge. Break rules and timeline ticks are drawn at a
 * bar's centre, inside its run; grid lines are faint and are not counted.
 */
export async function drawnBars(page: Page, testid: string, above = 2, alpha = 200): Promise<{ plotWidth: number; runs: { from: number; to: number }[] }> {
  return page.evaluate(`(() => {
    const box = document.querySelector('[data-testid="${testid}"]');
    const canvas = box.querySelector('canvas');
    const over = box.querySelector('.u-over').getBoundingClientRect();
    const at = canvas.getBoundingClientRect();
    const scale = canvas.width / at.width;
    const left = Math.round((over.left - at.left) * scale);
    const width = Math.round(over.width * scale);
    const y = Math.round((over.bottom - at.top - ${above}) * scale);
    const row = canvas.getContext('2d').getImageData(left, y, width, 1).data;
    const runs = [];
    let start = -1;
    for (let x = 0; x <= width; x++) {
      const opaque = x < width && row[4 * x + 3] > ${alpha};
      if (opaque && start < 0) start = x;
      if (!opaque && start >= 0) { runs.push({ from: start / scale, to: x / scale }); start = -1; }
    }
    return { plotWidth: width / scale, runs };
  })()`);
}
