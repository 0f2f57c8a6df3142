/**
 * Damaged logs beside good ones: the proxy starts, names and counts what it set aside, and serves
 * the rest; startup reads sidecars, and a log whole only when it grew after its sidecar.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvents } from '../../src/cli/verify.js';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import type { Config } from '../../src/config/types.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { FileStore } from '../../src/store/files.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { SessionManager } from '../../src/session/manager.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { listSessionSummaries } from '../../src/stats/collect.js';
import { NO_PRICES } from '../../src/stats/prices.js';
import { tag } from './harness.js';
import { contentOf, post } from './wire-faults.js';

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

let dir: string;
let sim: Sim;
let config: Config;
let store: FileStore;
const proxies: RunningProxy[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pp-damaged-'));
  sim = await createSim({ host: '127.0.0.1', port: 0 });
  const path = join(dir, 'config.toml');
  await writeFile(path, `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(dir, 'data'))}

[providers.up]
preset = "generic"
base_url = "${sim.urlFor('openai')}"

[models.m]
provider = "up"
model = "sim-model"
`);
  config = withSimulator(loadConfig({ path, env: {}, cwd: dir }), sim.url);
  store = new FileStore(config.dataDir);
});
afterAll(async () => {
  for (const p of proxies) {
    p.app.server.closeAllConnections();
    await p.close();
  }
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

async function start(): Promise<{ proxy: RunningProxy; warnings: string[] }> {
  const warnings: string[] = [];
  const proxy = await startProxy(config, { warn: (line) => warnings.push(line) });
  proxies.push(proxy);
  return { proxy, warnings };
}

async function stop(proxy: RunningProxy): Promise<void> {
  await proxy.close();
  proxies.splice(proxies.indexOf(proxy), 1);
}

/** A conversation: its messages so far, the explicit id it is sent under (if any). */
interface Conversation {
  t: string;
  headers: Record<string, string>;
  messages: Msg[];
  id?: string;
}

async function turn(proxy: RunningProxy, c: Conversation, text: string): Promise<string> {
  c.messages.push({ role: 'user', content: text });
  const r = await post(proxy.url, { model: 'm', messages: c.messages }, c.headers);
  expect(r.status, r.text).toBe(200);
  const reply = contentOf(r);
  c.messages.push({ role: 'assistant', content: reply });
  return reply;
}

function conversation(name: string, named: boolean): Conversation {
  const t = tag(name);
  return { t, headers: named ? { 'x-session-id': `conv-${t}` } : {}, messages: [{ role: 'system', content: `You help with ${t}.` }] };
}

async function events(id: string): Promise<LogEvent[]> {
  return (await store.read(id)).events;
}

/** The session whose log holds `t`. */
async function sessionOf(t: string): Promise<string> {
  const ids: string[] = [];
  for (const id of await store.listSessions()) {
    if ((await readFile(store.file(id), 'utf8')).includes(t)) ids.push(id);
  }
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

async function health(proxy: RunningProxy): Promise<unknown> {
  return (await fetch(`${proxy.url}/healthz`)).json();
}

const good = { plain: conversation('plain', false), named: conversation('named', true), grown: conversation('grown', false) };
/** Damaged in the middle with a line of another length: its sidecar no longer fits, startup reads it whole. */
const middle = conversation('middle', true);
/** Damaged in place (same length): its sidecar still fits, so it is found damaged on first use. */
const rotten = conversation('rotten', true);
/** Bytes that are neither UTF-8 nor JSON, several lines of them. */
const BINARY_ID = '20260101T000000Z-0badf11e';

describe('a clean close', () => {
  it('leaves a sidecar beside every log: the next start reads no log whole', async () => {
    const { proxy } = await start();
    for (const c of [...Object.values(good), middle, rotten]) {
      await turn(proxy, c, `${c.t} first [[say one]]`);
      await turn(proxy, c, `second [[say two]]`);
      c.id = await sessionOf(c.t);
    }
    await stop(proxy);

    const m = new SessionManager(store, { now: () => new Date() });
    const found = await m.init();
    await m.close();
    expect(found).toEqual({ sessions: 5, readWhole: 0, damaged: [] });
  });
});

describe('damaged logs beside good ones', () => {
  let proxy: RunningProxy;
  let warnings: string[];

  beforeAll(async () => {
    // The middle line of one log becomes garbage of another length.
    const lines = (await readFile(store.file(middle.id!), 'utf8')).split('\n');
    const at = Math.floor(lines.length / 2);
    lines[at] = '{"seq":' + at + ',"ts":garbage';
    await writeFile(store.file(middle.id!), lines.join('\n'));
    // A middle line of another is overwritten in place, its length kept.
    const rot = (await readFile(store.file(rotten.id!), 'utf8')).split('\n');
    const r = Math.floor(rot.length / 2);
    rot[r] = '{' + '#'.repeat(rot[r]!.length - 1);
    await writeFile(store.file(rotten.id!), rot.join('\n'));
    // A file that is not text at all.
    await writeFile(store.file(BINARY_ID), Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x0a, 0xc3, 0x28, 0x9f, 0x0a, 0x1f, 0x8b, 0x08]));
    // One more line in a good log after its sidecar was written (the proxy stopped without writing it again).
    const grownEvents = await events(good.grown.id!);
    const last = grownEvents.at(-1)!;
    const extra = { seq: last.seq + 1, ts: last.ts, type: 'client.msg', msg: { role: 'user', content: 'written after the sidecar [[say still found]]' } };
    await appendFile(store.file(good.grown.id!), JSON.stringify(extra) + '\n');
    good.grown.messages.push(extra.msg as Msg);
  });

  it('startup reads the grown log and the damaged ones whole, and names the damaged ones', async () => {
    const m = new SessionManager(store, { now: () => new Date() });
    const found = await m.init();
    await m.close();
    expect(found.sessions).toBe(4);
    expect(found.readWhole).toBe(3);
    expect(found.damaged.map((d) => d.id).sort()).toEqual([BINARY_ID, middle.id].sort());
    // The grown log's sidecar was written again as it was read: the next start reads only the damaged ones.
    const again = new SessionManager(store, { now: () => new Date() });
    expect((await again.init()).readWhole).toBe(2);
    await again.close();
  });

  it('the proxy starts, warns naming each damaged log, and /healthz counts them', async () => {
    ({ proxy, warnings } = await start());
    expect(warnings).toHaveLength(2);
    expect(warnings.some((w) => w.includes(middle.id!))).toBe(true);
    expect(warnings.some((w) => w.includes(BINARY_ID))).toBe(true);
    expect(await health(proxy)).toEqual({ status: 'ok', damaged_sessions: 2 });
  });

  it('the good sessions go on in their own logs', async () => {
    for (const c of [good.plain, good.named]) {
      const before = (await events(c.id!)).length;
      expect(await turn(proxy, c, 'third [[say three]]')).toBe('three');
      expect(await sessionOf(c.t)).toBe(c.id);
      const after = await events(c.id!);
      expect(after.slice(before).map((e) => e.type)).toEqual(['client.msg', 'llm.req', 'llm.resp']);
    }
  });

  it('the log that grew after its sidecar is still found, with the line written last', async () => {
    const before = (await events(good.grown.id!)).length;
    const r = await post(proxy.url, { model: 'm', messages: good.grown.messages }, good.grown.headers);
    expect(r.status).toBe(200);
    expect(contentOf(r)).toBe('still found');
    expect(await sessionOf(good.grown.t)).toBe(good.grown.id);
    expect((await events(good.grown.id!)).slice(before).map((e) => e.type)).toEqual(['llm.req', 'llm.resp']);
  });

  it('a request naming a session damaged at startup starts a new session', async () => {
    const ids = new Set(await store.listSessions());
    expect(await turn(proxy, middle, 'third [[say anew]]')).toBe('anew');
    const created = (await store.listSessions()).filter((id) => !ids.has(id));
    expect(created).toHaveLength(1);
    const start = (await events(created[0]!))[0] as EventOf<'session.start'>;
    expect(start.ids).toEqual([`conv-${middle.t}`]);
    expect(await health(proxy)).toEqual({ status: 'ok', damaged_sessions: 2 });
  });

  it('a log damaged in place is set aside on first use: the request starts a new session, and is warned about', async () => {
    const ids = new Set(await store.listSessions());
    expect(await turn(proxy, rotten, 'third [[say fresh]]')).toBe('fresh');
    const created = (await store.listSessions()).filter((id) => !ids.has(id));
    expect(created).toHaveLength(1);
    expect((await events(created[0]!)).some((e) => e.type === 'client.msg' && e.msg.content === 'third [[say fresh]]')).toBe(true);
    expect(warnings.at(-1)).toContain(rotten.id);
    expect(await health(proxy)).toEqual({ status: 'ok', damaged_sessions: 3 });
    // Its next request goes on in the new session.
    expect(await turn(proxy, rotten, 'fourth [[say on]]')).toBe('on');
    expect((await store.listSessions()).filter((id) => !ids.has(id))).toEqual(created);
  });

  it('proxy sessions lists the damaged logs as unreadable, the rest as sessions', async () => {
    const report = await listSessionSummaries(store, NO_PRICES);
    expect(report.unreadable.map((u) => u.id).sort()).toEqual([BINARY_ID, middle.id, rotten.id].sort());
    for (const u of report.unreadable) expect(u.error).toContain(store.file(u.id));
    const listed = report.sessions.map((s) => s.id);
    for (const c of Object.values(good)) expect(listed).toContain(c.id);
    expect(listed).toHaveLength((await store.listSessions()).length - 3);
  });

  it('every readable log replays', async () => {
    const report = await listSessionSummaries(store, NO_PRICES);
    for (const s of report.sessions) {
      const rebuilt = verifyEvents(await events(s.id), { file: store.file(s.id) });
      expect(rebuilt.filter((r) => !r.ok)).toEqual([]);
    }
  });
});
