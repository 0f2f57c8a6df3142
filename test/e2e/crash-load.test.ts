/**
 * `proxy serve` killed with SIGKILL under eight streaming agent conversations (some mid-stream,
 * some between requests, some just answered or just logged) and restarted on its data directory;
 * clients retry as the SDKs do. No answered request is lost (docs/decisions.md, Durability), every
 * request replays, no conversation forks, and a torn tail (written by hand) is cut on load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyEvents } from '../../src/cli/verify.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { mulberry32 } from '../../src/core/prng.js';
import { readLog } from '../../src/log/reader.js';
import { AgentClient, REAL_CLIENT, type Received } from './agent-client.js';
import { runCli, until } from './harness.js';
import { chatWithRetries, type Phase } from './retrying-client.js';

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const CONVERSATIONS = 8;
const KILLS = 4;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** One `proxy serve` process at a time on the data directory; its origin changes with each start. */
class ProxyProcess {
  origin = 'http://127.0.0.1:1';
  #child: ChildProcess | undefined;

  constructor(readonly dir: string, readonly config: string | undefined) {}

  start(): Promise<void> {
    const args = [BIN, 'serve', '--port', '0', '--data-dir', join(this.dir, 'data'), ...(this.config === undefined ? [] : ['--config', this.config])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: this.dir, env: { PATH: process.env['PATH'] ?? '' } });
    children.push(child);
    this.#child = child;
    return new Promise((done, fail) => {
      let out = '';
      let listening = false;
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const lines = out.split('\n');
        out = lines.pop()!;
        for (const l of lines) {
          const m = /listening on (http:\/\/[^\s]+)\/v1/.exec(l);
          if (m !== null && !listening) {
            listening = true;
            this.origin = m[1]!;
            done();
          }
        }
      });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', (code) => listening || fail(new Error(`proxy exited (${code}) before listening: ${err}`)));
    });
  }

  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.#child!;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }
}

/** One agent conversation: its client, what it received whole, and where its current request stands. */
interface Conversation {
  tag: string;
  agent: AgentClient;
  headers: Record<string, string>;
  phase: 'between' | Exclude<Phase, 'done'>;
  received: Received[];
  sinceStart: number;
  retries: number;
}

/** Every session log of the data directory, read as a reader does (a torn tail reported, not fatal). */
async function readLogs(dataDir: string): Promise<{ id: string; events: LogEvent[]; torn: boolean }[]> {
  const sessions = join(dataDir, 'sessions');
  const names = readdirSync(sessions).filter((n) => n.endsWith('.jsonl')).sort();
  return Promise.all(names.map(async (n) => {
    const read = await readLog(join(sessions, n));
    return { id: n.slice(0, -'.jsonl'.length), events: read.events, torn: read.torn !== undefined };
  }));
}

/** The file's last line is a reply (`llm.resp`): read from its tail, at once, as the watcher sees it written. */
function endsWithReply(file: string): boolean {
  if (!file.endsWith('.jsonl')) return false;
  const buf = Buffer.alloc(8192);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const n = readSync(fd, buf, 0, buf.length, Math.max(0, size - buf.length));
    const tail = buf.subarray(0, n).toString('utf8').trimEnd();
    return tail.slice(tail.lastIndexOf('\n') + 1).includes('"type":"llm.resp"');
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The request at `i` got its reply or error before the next request. */
function answeredAfter(events: readonly LogEvent[], i: number): boolean {
  for (const e of events.slice(i + 1)) {
    if (e.type === 'llm.resp' || e.type === 'llm.error') return true;
    if (e.type === 'llm.req') return false;
  }
  return false;
}

/** What a client receives of a reply, as the log's `llm.resp` holds it. */
function replyKey(r: { content: string | null; toolCalls: Received['toolCalls'] }): string {
  return JSON.stringify([r.content ?? '', r.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])]);
}

function loggedKey(e: EventOf<'llm.resp'>): string {
  return replyKey({ content: e.reply.content ?? null, toolCalls: (e.reply.tool_calls ?? []).map((c) => ({ id: c.id, function: { name: c.name, arguments: c.arguments } })) });
}

/**
 * The durability promise and replay, over the logs as they stand: each conversation in one log,
 * whose replies hold everything the client received whole, in order; every request rebuilds to its
 * digest.
 */
async function checkLogs(dataDir: string, conversations: readonly Conversation[]): Promise<{ id: string; events: LogEvent[]; torn: boolean }[]> {
  const logs = await readLogs(dataDir);
  for (const c of conversations) {
    const mine = logs.filter((l) => JSON.stringify(l.events[1] ?? '').includes(c.tag));
    expect(mine.map((l) => l.id), `${c.tag}: one session`).toHaveLength(1);
    const replies = mine[0]!.events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp' && e.aborted !== true).map(loggedKey);
    let at = 0;
    for (const [i, r] of c.received.entries()) {
      const key = replyKey(r);
      while (at < replies.length && replies[at] !== key) at++;
      expect(at, `${c.tag}: answer ${i} received whole but not in the log`).toBeLessThan(replies.length);
      at++;
    }
  }
  for (const l of logs) {
    const rebuilt = verifyEvents(l.events, { file: l.id });
    expect(rebuilt.filter((r) => !r.ok).map((r) => `${l.id}:${r.seq} ${r.problem ?? ''}`)).toEqual([]);
  }
  return logs;
}

async function runCrashes(seed: number, config: string | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pp-crash-load-'));
  dirs.push(dir);
  const dataDir = join(dir, 'data');
  let configPath: string | undefined;
  if (config !== undefined) {
    configPath = join(dir, 'config.toml');
    writeFileSync(configPath, config);
  }
  const rng = mulberry32(seed);
  const proxy = new ProxyProcess(dir, configPath);
  await proxy.start();

  const conversations: Conversation[] = Array.from({ length: CONVERSATIONS }, (_, i) => {
    const tag = `crash-${seed}-${i}`;
    return {
      tag,
      agent: new AgentClient(seed * 100 + i, tag, { ...REAL_CLIENT, slowMs: 6, systemBytes: 2000, resultBytes: 800 }),
      // Half name their session as Claude Code does; the others are found by their history.
      headers: i % 2 === 0 ? { 'x-session-id': `${tag}-id` } : ({} as Record<string, string>),
      phase: 'between',
      received: [],
      sinceStart: 0,
      retries: 0,
    };
  });
  let stopping = false;
  /** Called once, when the next client sees an answer's end. */
  let onAnswer: (() => void) | undefined;
  const run = async (c: Conversation, think: () => number) => {
    while (!stopping) {
      const { messages, tools } = c.agent.request();
      const usage = c.received.length % 2 === 0 ? { stream_options: { include_usage: true } } : {};
      const body = JSON.stringify({ model: 'sim/crash-load', stream: true, ...usage, messages, tools });
      const got = await chatWithRetries(body, { origin: () => proxy.origin, stream: true, headers: c.headers, onPhase: (p) => {
        c.phase = p === 'done' ? 'between' : p;
        if (p !== 'done') return;
        const answered = onAnswer;
        onAnswer = undefined;
        answered?.();
      } });
      c.retries += got.attempts - 1;
      c.received.push(got.answer);
      c.agent.receive(got.answer);
      c.sinceStart++;
      await sleep(think());
    }
  };
  const runners = conversations.map((c, i) => {
    const own = mulberry32(seed + i + 1);
    return run(c, () => Math.floor(own() * 60));
  });
  // A runner that throws fails the test at once instead of leaving the kill loop waiting.
  const failed = Promise.race(runners.map((r) => r.then(() => new Promise<never>(() => undefined))));
  failed.catch(() => undefined);

  let torn: { id: string; lastSeq: number } | undefined;
  for (let k = 0; k < KILLS; k++) {
    // Every conversation has moved on since the last start (so each session was opened, and any
    // torn tail cut, before the next kill), then a random wait, then the moment: some stream under
    // way and some conversation between its requests; or just after a client saw an answer's end;
    // or just after a log was written (a reply being synced, its client not answered yet).
    await Promise.race([until(() => conversations.every((c) => c.sinceStart >= 2), 30_000), failed]);
    await sleep(Math.floor(rng() * 500));
    const kind = k % 3;
    if (kind === 0) {
      await Promise.race([until(() => conversations.some((c) => c.phase === 'streaming') && conversations.some((c) => c.phase === 'between'), 10_000), failed]);
    } else if (kind === 1) {
      await Promise.race([new Promise<void>((r) => (onAnswer = r)), failed]);
    } else {
      const sessions = join(dataDir, 'sessions');
      const watcher = watch(sessions);
      await Promise.race([new Promise<void>((r) => watcher.on('change', (_e, name) => endsWithReply(join(sessions, String(name))) && r())), failed]);
      watcher.close();
    }
    await proxy.stop('SIGKILL');
    // Bytes already on their way may still complete an answer: let them land before looking.
    await sleep(50);
    const logs = await checkLogs(dataDir, conversations);
    if (k === 1) {
      // A write cut short: half of the line that would have come next.
      const victim = logs.find((l) => !l.torn)!;
      torn = { id: victim.id, lastSeq: victim.events.at(-1)!.seq };
      const next = JSON.stringify({ seq: victim.events.at(-1)!.seq + 1, ts: new Date().toISOString(), type: 'client.msg', msg: { role: 'user', content: 'cut' } });
      appendFileSync(join(dataDir, 'sessions', `${victim.id}.jsonl`), next.slice(0, Math.floor(next.length / 2)));
    }
    for (const c of conversations) c.sinceStart = 0;
    await proxy.start();
  }
  await Promise.race([until(() => conversations.every((c) => c.sinceStart >= 2), 30_000), failed]);
  stopping = true;
  await Promise.race([Promise.all(runners), failed]);
  await proxy.stop('SIGTERM');

  const logs = await checkLogs(dataDir, conversations);
  expect(logs).toHaveLength(CONVERSATIONS);
  for (const l of logs) {
    // The session only grew: it started once, no fork copied it, no retry rewrote it.
    expect(l.torn, l.id).toBe(false);
    expect(l.events.filter((e) => e.type === 'session.start')).toHaveLength(1);
    expect((l.events[0] as EventOf<'session.start'>).parent).toBeUndefined();
    expect(l.events.filter((e) => e.type === 'client.rewrite').map((e) => e.seq), l.id).toEqual([]);
  }
  // The torn session was cut where its last whole line ended and went on in the same file, its
  // seqs running on (the reader refuses a bad line that is not the last, and a gap in seqs).
  const cut = logs.find((l) => l.id === torn!.id)!;
  expect(cut.events.filter((e) => e.seq > torn!.lastSeq && e.type === 'llm.resp').length).toBeGreaterThan(0);
  // Kills landed mid-request (a request logged, its answer never), and cost the clients retries.
  const cutShort = logs.reduce((n, l) => n + l.events.filter((e, i) => e.type === 'llm.req' && !answeredAfter(l.events, i)).length, 0);
  expect(cutShort).toBeGreaterThan(0);
  expect(conversations.reduce((n, c) => n + c.retries, 0)).toBeGreaterThanOrEqual(KILLS);
  const r = await runCli(['replay', '--all', '--json', '--data-dir', dataDir]);
  expect(r.code, r.stderr).toBe(0);
  const requests = logs.reduce((n, l) => n + l.events.filter((e) => e.type === 'llm.req').length, 0);
  expect(JSON.parse(r.stdout)).toMatchObject({ requests, failed: 0 });
}

describe('SIGKILL under load: eight streaming conversations, the proxy killed and restarted', () => {
  it('durability fsync (the default)', () => runCrashes(11, undefined), 90_000);
  it('durability write', () => runCrashes(23, '[sessions]\ndurability = "write"\n'), 90_000);
});
