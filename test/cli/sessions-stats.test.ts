/**
 * `proxy sessions` and `proxy stats` (the built CLI) over a session served through the proxy to
 * the simulator: the figures are the simulator's own accounting; unknown stays unknown.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runAgent } from '../../bench/agent.js';
import { LogStore } from '../../src/log/store.js';
import { listSessionSummaries } from '../../src/stats/collect.js';
import { NO_PRICES } from '../../src/stats/prices.js';
import type { SessionsReport } from '../../src/stats/collect.js';
import type { SessionStats } from '../../src/stats/session-totals.js';
import { LogBuilder } from '../stats/events.js';
import { SIM_PRICE, startStatsWorld, type StatsWorld } from '../stats/world.js';
import { proxy, writeSession } from './helpers.js';

let w: StatsWorld;
let id: string;

beforeAll(async () => {
  w = await startStatsWorld();
  await runAgent(w.client, 'sim', { requests: 15, seed: 5 });
  const ids = await new LogStore(w.dataDir).listSessions();
  expect(ids).toHaveLength(1);
  id = ids[0]!;
});
afterAll(async () => {
  await w?.close();
});

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;

describe('proxy stats', () => {
  it('--json: per-request prompt and cached tokens and the totals are the simulator\'s', () => {
    const r = proxy(['stats', id, '--json', '--data-dir', w.dataDir, '--config', w.configFile]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const stats = JSON.parse(r.stdout) as SessionStats;
    const served = w.sim.requests.filter((x) => x.status === 200);
    expect(stats.requests.map((x) => [x.prompt_tokens, x.cached_tokens])).toEqual(served.map((x) => [x.promptTokens, x.cachedTokens]));
    const sim = w.sim.stats();
    expect(stats.session).toMatchObject({ id, requests: 15, prompt_tokens: sim.promptTokens, cached_tokens: sim.cachedTokens, completion_tokens: sim.completionTokens });
    expect(stats.session.token_cache_rate).toBeCloseTo(sim.cachedTokens / sim.promptTokens, 12);
    const cost = ((sim.promptTokens - sim.cachedTokens) * SIM_PRICE.input + sim.cachedTokens * SIM_PRICE.cache_read + sim.completionTokens * SIM_PRICE.output) / 1e6;
    expect(stats.session.cost_usd).toBeCloseTo(cost, 12);
  });

  it('prints one row per request and the totals, with the rate as sum over sum', () => {
    const r = proxy(['stats', id, '--data-dir', w.dataDir]);
    expect(r.code).toBe(0);
    const sim = w.sim.stats();
    const lines = r.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('seq'));
    expect(lines[header]).toMatch(/seq\s+model\s+cause\s+status\s+prompt\s+cached\s+written\s+reuse/);
    expect(lines.slice(header + 1).filter((l) => /^\s*\d+\s+sim\s/.test(l))).toHaveLength(15);
    expect(r.stdout).toContain(`token cache rate    ${pct(sim.cachedTokens, sim.promptTokens)}`);
    expect(r.stdout).toMatch(new RegExp(`prompt tokens\\s+${sim.promptTokens.toLocaleString('en-US')}\\n`));
    // No --config and a simulator that reports no cost: the cost is unknown, not $0.
    expect(r.stdout).toMatch(/ {2}cost\s+unknown/);
    expect(r.stdout).toMatch(/cache write tokens\s+unknown/);
  });

  it('an unknown session, a missing argument and a bad option are errors with exit 2', () => {
    const missing = proxy(['stats', 'no-such-session', '--data-dir', w.dataDir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No session "no-such-session"');
    expect(proxy(['stats', '--data-dir', w.dataDir]).code).toBe(2);
    expect(proxy(['stats', id, '--nope']).stderr).toContain('usage: proxy stats');
  });
});

describe('proxy sessions', () => {
  it('the table has the session\'s model, requests, prompt tokens, rate, cost and last activity', () => {
    const r = proxy(['sessions', '--data-dir', w.dataDir, '--config', w.configFile]);
    expect(r.code).toBe(0);
    const [header, row] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^id\s+model\s+requests\s+prompt tokens\s+token cache rate\s+cost\s+last active$/);
    const sim = w.sim.stats();
    const cells = row!.split(/\s{2,}/);
    expect(cells[0]).toBe(id);
    expect(cells[1]).toBe('sim');
    expect(cells[2]).toBe('15');
    expect(cells[3]).toBe(sim.promptTokens.toLocaleString('en-US'));
    expect(cells[4]).toBe(pct(sim.cachedTokens, sim.promptTokens));
    expect(cells[5]).toMatch(/^\$\d+\.\d{4}$/);
    expect(cells[6]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('--json is the same report the admin route serves; $PROXY_DATA_DIR is the default data dir', async () => {
    const r = proxy(['sessions', '--json'], { PROXY_DATA_DIR: w.dataDir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as SessionsReport;
    expect(report).toEqual(JSON.parse(JSON.stringify(await listSessionSummaries(new LogStore(w.dataDir), NO_PRICES))));
    expect(report.sessions[0]!.cost_usd).toBeNull();
  });

  it('a session whose replies reported no usage shows unknown, never 0; a malformed log is listed as unreadable', () => {
    const data = join(w.dir, 'other-data');
    writeSession(data, 'no-usage', new LogBuilder('sim').turn(undefined).turn(undefined).events);
    writeSession(data, 'zero', new LogBuilder('sim').turn({ prompt_tokens: 1500, cached_tokens: 0 }).events);
    const file = writeSession(data, 'broken', new LogBuilder('sim').turn(undefined).events);
    // A bad line in the middle (not a torn tail).
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.splice(1, 0, '{not json');
    writeFileSync(file, lines.join('\n'));
    const r = proxy(['sessions', '--data-dir', data]);
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n');
    const noUsage = rows.find((l) => l.startsWith('no-usage'))!.split(/\s{2,}/);
    expect(noUsage.slice(2, 6)).toEqual(['2', 'unknown', 'unknown', 'unknown']);
    const zero = rows.find((l) => l.startsWith('zero'))!.split(/\s{2,}/);
    expect(zero.slice(2, 6)).toEqual(['1', '1,500', '0.0%', 'unknown']);
    expect(r.stdout).toMatch(/broken: unreadable: .*broken\.jsonl:2/);
  });

  it('an empty data dir says so; proxy --help lists both commands', () => {
    expect(proxy(['sessions', '--data-dir', join(w.dir, 'empty')]).stdout).toBe('no sessions\n');
    const help = proxy(['--help']).stdout;
    expect(help).toMatch(/sessions\s+list stored sessions/);
    expect(help).toMatch(/stats\s+one session's requests/);
  });
});

describe('proxy stats of a refused call', () => {
  it('a call the upstream refused: its status in the table, and under it what the upstream said', async () => {
    const before = new Set(await new LogStore(w.dataDir).listSessions());
    await expect(w.client.chat.completions.create({ model: 'sim', messages: [{ role: 'user', content: 'refuse me [[error 400]]' }] })).rejects.toThrow();
    const refused = (await new LogStore(w.dataDir).listSessions()).find((s) => !before.has(s))!;
    // Its own session, removed after: the tests above count the data dir's sessions.
    onTestFinished(() => rmSync(join(w.dataDir, 'sessions', `${refused}.jsonl`), { force: true }));
    const r = proxy(['stats', refused, '--data-dir', w.dataDir, '--config', w.configFile]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const row = lines.find((l) => /^\s*\d+\s+sim\b/.test(l))!;
    expect(row).toContain('error 400');
    const seq = Number(row.trim().split(/\s+/)[0]);
    expect(lines).toContain(`seq ${seq}: the upstream answered 400: Simulated error 400 (asked for by [[error 400]]).`);
    const json = JSON.parse(proxy(['stats', refused, '--json', '--data-dir', w.dataDir, '--config', w.configFile]).stdout) as SessionStats;
    expect(json.requests[0]).toMatchObject({ status: 'error', error: '400', error_message: 'Simulated error 400 (asked for by [[error 400]]).' });
  });
});
