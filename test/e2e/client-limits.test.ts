/**
 * Client keys' budgets and rates over the simulator: the request that crosses a budget is answered
 * and the next is a 429 in the caller's own wire; a key over its rate gets a 429 with retry-after;
 * a restarted proxy still knows what each key spent.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import { startProxy } from '../../src/proxy/server.js';
import { LEDGER_FILE, parseLedger } from '../../src/proxy/spend-ledger.js';
import { startWorld, tag, type World } from './harness.js';
import { proxy as runCli } from '../cli/helpers.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const WIRES = ['chat', 'messages', 'responses'] as const;
type Wire = (typeof WIRES)[number];
const BUDGET = 0.05;

let w: World;
beforeAll(async () => {
  const keys = WIRES.map((wire) => `{ name = "spend-${wire}", sha256 = "${sha(`key-${wire}`)}", budget_usd = ${BUDGET}, budget_period = "total" }`);
  w = await startWorld({
    extraToml: `
[models.priced]
provider = "oa"
model = "sim-model"
price = { input = 1000.0, cache_read = 100.0, cache_write = 1000.0, output = 1000.0 }

[auth]
keys = [
  ${keys.join(',\n  ')},
  { name = "rate", sha256 = "${sha('key-rate')}", requests_per_minute = 2 },
]
`,
  });
});
afterAll(async () => {
  await w?.close();
});

/** One request in `wire`'s own shapes, a new conversation each time. */
async function post(wire: Wire, key: string): Promise<Response> {
  const text = `${tag(wire)} [[say ok]]`;
  const [path, headers, body] = wire === 'chat'
    ? ['/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'priced', messages: [{ role: 'user', content: text }] }]
    : wire === 'messages'
      ? ['/v1/messages', { 'x-api-key': key }, { model: 'priced', max_tokens: 64, messages: [{ role: 'user', content: text }] }]
      : ['/v1/responses', { authorization: `Bearer ${key}` }, { model: 'priced', input: text }];
  return fetch(`${w.proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function spent(client: string): Promise<number> {
  const text = await (await fetch(`${w.proxy.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`proxy_client_spend_usd_total{client="${client}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** The error as the wire's clients read it: OpenAI's envelope, or Anthropic's. */
async function refusal(res: Response, wire: Wire): Promise<{ status: number; type: string; code: string | undefined }> {
  const body = (await res.json()) as { type?: string; error: { type: string; code?: string } };
  if (wire === 'messages') expect(body.type).toBe('error');
  return { status: res.status, type: body.error.type, code: body.error.code };
}

it.each(WIRES)('on %s, the request that crosses the budget is answered and the next is refused in the wire\'s own shape', async (wire) => {
  const client = `spend-${wire}`;
  let answered = 0;
  for (;;) {
    const before = await spent(client);
    const res = await post(wire, `key-${wire}`);
    if (res.status !== 200) {
      expect(before).toBeGreaterThanOrEqual(BUDGET);
      expect(await refusal(res, wire)).toEqual(wire === 'messages'
        ? { status: 429, type: 'rate_limit_error', code: undefined }
        : { status: 429, type: 'insufficient_quota', code: 'budget_exceeded' });
      expect(res.headers.get('x-should-retry')).toBe('false');
      break;
    }
    expect(before).toBeLessThan(BUDGET);
    await res.json();
    answered++;
    expect(answered).toBeLessThan(50);
  }
  expect(answered).toBeGreaterThanOrEqual(2);
  // The last one answered went over: it was admitted under the budget and charged in full.
  expect(await spent(client)).toBeGreaterThan(BUDGET);
});

it('over its rate a key gets a 429 with retry-after in each wire, and is served again when the bucket refills', async () => {
  expect((await post('chat', 'key-rate')).status).toBe(200);
  expect((await post('messages', 'key-rate')).status).toBe(200);
  for (const wire of WIRES) {
    const res = await post(wire, 'key-rate');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(await refusal(res, wire)).toEqual(wire === 'messages'
      ? { status: 429, type: 'rate_limit_error', code: undefined }
      : { status: 429, type: 'rate_limit_error', code: 'rate_limited' });
  }
  const metrics = await (await fetch(`${w.proxy.url}/metrics`)).text();
  expect(metrics).toContain('proxy_client_refused_total{client="rate",reason="rate"} 3');
});

it('proxy keys list --config shows each config key\'s budget and what it spent, as the proxy counts it', async () => {
  const r = runCli(['keys', 'list', '--json', '--config', join(w.dir, 'config.toml')]);
  expect(r.code, r.stderr).toBe(0);
  const { keys } = JSON.parse(r.stdout) as { keys: { name: string; budgetUsd?: number; budgetPeriod: string; spent: number; requestsPerMinute?: number }[] };
  expect(keys.map((k) => k.name)).toEqual([...WIRES.map((wire) => `spend-${wire}`), 'rate']);
  for (const wire of WIRES) {
    const k = keys.find((x) => x.name === `spend-${wire}`)!;
    expect(k).toMatchObject({ budgetUsd: BUDGET, budgetPeriod: 'total' });
    // Over its budget (the crossing request was charged in full), and the proxy's own count.
    expect(k.spent).toBeGreaterThan(BUDGET);
    expect(k.spent).toBeCloseTo(await spent(`spend-${wire}`), 9);
  }
  expect(keys.find((x) => x.name === 'rate')).toMatchObject({ requestsPerMinute: 2, spent: await spent('rate') });
  // The table a person reads: no key itself, the config's keys named as such.
  const table = runCli(['keys', 'list', '--config', join(w.dir, 'config.toml')]);
  expect(table.stdout).toMatch(/^spend-chat\s+config\s+0\.05 \/ total\s+0\.\d+/m);
  expect(table.stdout).not.toContain(sha('key-chat'));
});

it('a restarted proxy keeps each key\'s spend: the spent key is refused at once, from the ledger', async () => {
  const ledger = parseLedger(await readFile(join(w.dir, 'data', LEDGER_FILE), 'utf8'));
  expect(ledger.torn).toBe(false);
  const chatSpent = ledger.entries.filter((e) => e.client === 'spend-chat').reduce((sum, e) => sum + e.usd, 0);
  expect(chatSpent).toBeCloseTo(await spent('spend-chat'), 9);
  w.proxy.app.server.closeAllConnections();
  await w.proxy.close();
  w.proxy = await startProxy(withSimulator(loadConfig({ path: join(w.dir, 'config.toml'), env: {}, cwd: w.dir }), w.sim.url));
  for (const wire of WIRES) {
    const res = await post(wire, 'key-chat');
    expect(await refusal(res, wire)).toMatchObject({ status: 429 });
  }
  expect((await post('chat', 'key-rate')).status).toBe(200);
});
