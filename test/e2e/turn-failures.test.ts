/**
 * A turn failing at each of its steps: the client gets an OpenAI-shaped error (or nothing, having
 * left), the conversation's next request runs at once in its session, and every log replays.
 */
import fs from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyEvents } from '../../src/cli/verify.js';
import type { EventBody, EventOf, LogEvent } from '../../src/core/events.js';
import { DIALECTS } from '../../src/dialects/registry.js';
import { readLog } from '../../src/log/reader.js';
import { SessionLog } from '../../src/log/session-log.js';
import { LogStore } from '../../src/log/store.js';
import { Upstreams } from '../../src/proxy/upstream.js';
import { Locator } from '../../src/session/locator.js';
import { WindowState } from '../../src/window/index.js';
import { sessionsDir, startWorld, tag, until, type World } from './harness.js';
import { contentOf, errorOf, post, sseData, startBreakingUpstream, type BreakingUpstream, type Posted } from './wire-faults.js';

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

interface Worlds {
  w: World;
  upstream: BreakingUpstream;
}

/** What a case knows while it runs. */
interface Case {
  w: World;
  upstream: BreakingUpstream;
  /** Text only the failing request's last message holds. */
  marker: string;
  /** Upstream requests the simulator had seen before the failing request. */
  simBefore: number;
}

interface Step {
  name: string;
  /** The failing request opens the conversation (a new session), or is its second turn. */
  at: 'new' | 'existing';
  stream?: boolean;
  /** The failing request's directives (default: `[[say two]]`). */
  say?: string;
  /** Sets the fault up for the next request. */
  arm?: (c: Case) => void;
  /** Sends the failing request itself (the client leaving at some point); default: a plain POST. */
  send?: (c: Case, body: unknown, headers: Record<string, string>) => Promise<Posted | 'aborted'>;
  /** What the client got. */
  expect: 'error' | 'aborted';
  /** The next request: the same messages again, or the failed message followed by a new one. */
  next: 'same' | 'followup';
  /**
   * What the log says of the failed request: nothing sent upstream (no llm.req of it), an
   * `llm.error`, an aborted `llm.resp`, or the whole reply (the upstream finished it; the proxy
   * failed after logging it).
   */
  logged: 'nothing' | 'llm.error' | 'aborted' | 'reply';
  /**
   * Without an explicit id, the next request (which lacks the logged reply) is another branch of
   * the conversation: a fork of its session.
   */
  nextForks?: boolean;
  /** Only meaningful for sessions read back from disk. */
  storedOnly?: boolean;
}

/** A Node system error, as fs and net raise them. */
const ioError = (code: string, syscall = 'write') => Object.assign(new Error(`${code}: simulated fault, ${syscall}`), { code, syscall });

/** Replace `obj[method]` by a version that fails once, on the first call `when` picks. */
function failOnce<T extends object, K extends keyof T & string>(obj: T, method: K, when: (self: unknown, args: unknown[]) => boolean, fail: (...args: unknown[]) => unknown): void {
  const original = obj[method] as (...args: unknown[]) => unknown;
  let fired = false;
  vi.spyOn(obj, method as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
    if (!fired && when(this, args)) {
      fired = true;
      return fail(...args);
    }
    return original.apply(this, args);
  } as never);
}

function failAppend(type: EventBody['type']): void {
  failOnce(SessionLog.prototype, 'append', (_self, [body]) => (body as EventBody).type === type, () => {
    throw ioError('EIO');
  });
}

/** The log holds a client message with `marker`. */
function holds(log: SessionLog, marker: string): boolean {
  return log.events.some((e) => e.type === 'client.msg' && JSON.stringify(e.msg).includes(marker));
}

/** Whether a client message holding `marker` has been appended since (the failing turn began). */
function appendedSpy(marker: string): () => boolean {
  let seen = false;
  const original = SessionLog.prototype.append;
  vi.spyOn(SessionLog.prototype, 'append').mockImplementation(function (this: SessionLog, body, ts) {
    if (body.type === 'client.msg' && JSON.stringify(body.msg).includes(marker)) seen = true;
    return original.call(this, body, ts);
  });
  return () => seen;
}

/** The client leaves once the proxy is about to call the upstream; the call is made after it left. */
async function abortBeforeUpstream(c: Case, body: unknown, headers: Record<string, string>): Promise<Posted | 'aborted'> {
  const controller = new AbortController();
  const original = Upstreams.prototype.send;
  vi.spyOn(Upstreams.prototype, 'send').mockImplementationOnce(async function (this: Upstreams, ...args) {
    controller.abort();
    await until(() => args[4].aborted);
    return original.apply(this, args);
  });
  return sendAborting(c, body, headers, controller);
}

/** The client leaves once the simulator has the request and before it has answered a word. */
async function abortWhileWaiting(c: Case, body: unknown, headers: Record<string, string>): Promise<Posted | 'aborted'> {
  const controller = new AbortController();
  void until(() => c.w.sim.requests.length > c.simBefore, 5000).then(() => controller.abort());
  return sendAborting(c, body, headers, controller);
}

/** The client reads the stream until the first words of the reply, then leaves. */
async function abortMidStream(c: Case, body: unknown, headers: Record<string, string>): Promise<Posted | 'aborted'> {
  const controller = new AbortController();
  const res = await fetch(`${c.w.proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { status: res.status, contentType: res.headers.get('content-type') ?? '', text };
    text += Buffer.from(value).toString('utf8');
    if (/"content":"[^"]/.test(text)) break;
  }
  controller.abort();
  await reader.read().catch(() => undefined);
  return 'aborted';
}

async function sendAborting(c: Case, body: unknown, headers: Record<string, string>, controller: AbortController): Promise<Posted | 'aborted'> {
  const res = await fetch(`${c.w.proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: controller.signal,
  }).catch((e: unknown) => e);
  if (res instanceof Error && res.name === 'AbortError') return 'aborted';
  if (res instanceof Error) throw res;
  return { status: (res as Response).status, contentType: '', text: await (res as Response).text() };
}

const STEPS: Step[] = [
  {
    name: 'finding the session', at: 'existing', expect: 'error', next: 'same', logged: 'nothing',
    arm: () => failOnce(Locator.prototype, 'find', () => true, () => {
      throw new Error('simulated fault in find');
    }),
  },
  {
    name: 'opening the log of a new session', at: 'new', expect: 'error', next: 'same', logged: 'nothing',
    arm: () => failOnce(LogStore.prototype, 'open', () => true, () => Promise.reject(ioError('EMFILE', 'open'))),
  },
  {
    name: 'opening a stored log to load it', at: 'existing', expect: 'error', next: 'same', logged: 'nothing', storedOnly: true,
    arm: () => failOnce(LogStore.prototype, 'open', () => true, () => Promise.reject(ioError('EMFILE', 'open'))),
  },
  { name: 'appending session.start', at: 'new', expect: 'error', next: 'same', logged: 'nothing', arm: () => failAppend('session.start') },
  { name: 'appending the first client message of a new session', at: 'new', expect: 'error', next: 'same', logged: 'nothing', arm: () => failAppend('client.msg') },
  { name: 'appending a client message to a session', at: 'existing', expect: 'error', next: 'same', logged: 'nothing', arm: () => failAppend('client.msg') },
  {
    name: 'building the window', at: 'existing', expect: 'error', next: 'same', logged: 'nothing',
    arm: (c) => {
      // Loading a stored session builds its last request too: fail the build of the failing turn.
      const appended = appendedSpy(c.marker);
      failOnce(WindowState.prototype, 'build', () => appended(), () => {
        throw new Error('simulated fault in build');
      });
    },
  },
  {
    name: 'encoding for the dialect', at: 'existing', expect: 'error', next: 'same', logged: 'nothing',
    arm: () => failOnce(DIALECTS['openai-chat']!, 'encodeRequest', () => true, () => {
      throw new Error('simulated fault in encodeRequest');
    }),
  },
  { name: 'appending llm.req', at: 'existing', expect: 'error', next: 'same', logged: 'nothing', arm: () => failAppend('llm.req') },
  {
    // Every attempt: one that fails once is retried (docs/faults.md).
    name: 'the upstream call rejecting', at: 'existing', expect: 'error', next: 'same', logged: 'llm.error',
    arm: () => vi.spyOn(Upstreams.prototype, 'send').mockRejectedValue(ioError('ECONNRESET', 'read')),
  },
  { name: 'the upstream answering 500', at: 'existing', say: '[[error 500]]', expect: 'error', next: 'followup', logged: 'llm.error' },
  {
    name: 'the upstream stream breaking half-way', at: 'existing', say: '[[say two]] [[len 100]]', expect: 'error', next: 'same', logged: 'llm.error',
    arm: (c) => c.upstream.breakNext(300),
  },
  {
    name: 'the upstream stream breaking half-way, streamed to the client', at: 'existing', stream: true, say: '[[say two]] [[len 100]]', expect: 'error', next: 'same', logged: 'llm.error',
    arm: (c) => c.upstream.breakNext(300),
  },
  { name: 'an error event in the upstream stream', at: 'existing', stream: true, say: '[[say some words]] [[stream-error]]', expect: 'error', next: 'followup', logged: 'llm.error' },
  { name: 'appending llm.resp', at: 'existing', expect: 'error', next: 'same', logged: 'llm.error', arm: () => failAppend('llm.resp') },
  { name: 'appending llm.resp, streamed to the client', at: 'existing', stream: true, expect: 'error', next: 'same', logged: 'llm.error', arm: () => failAppend('llm.resp') },
  {
    name: 'the log sync rejecting after the reply was logged', at: 'existing', expect: 'error', next: 'same', logged: 'reply', nextForks: true,
    // The failing turn's own sync (a session leaving memory syncs its log too).
    arm: (c) => failOnce(SessionLog.prototype, 'sync', (self) => holds(self as SessionLog, c.marker), () => Promise.reject(ioError('EIO', 'fdatasync'))),
  },
  {
    name: 'the disk refusing the write (the log stops)', at: 'existing', expect: 'error', next: 'same', logged: 'nothing',
    arm: (c) => armDiskFull(c.marker),
  },
  { name: 'the client leaving before the upstream call', at: 'existing', expect: 'aborted', next: 'same', logged: 'aborted', send: abortBeforeUpstream },
  { name: 'the client leaving while the upstream thinks', at: 'existing', say: '[[slow 300]] [[say two]]', expect: 'aborted', next: 'followup', logged: 'aborted', send: abortWhileWaiting },
  { name: 'the client leaving mid-stream', at: 'existing', stream: true, say: '[[slow 50]] [[say two]] [[len 200]]', expect: 'aborted', next: 'followup', logged: 'aborted', send: abortMidStream },
];

/** Log writes (fs.writeSync) fail with ENOSPC for the first that holds `marker` (a log line of the failing turn). */
function armDiskFull(marker: string): void {
  failOnce(fs, 'writeSync', (_self, [, buf]) => Buffer.isBuffer(buf) && buf.includes(marker), () => {
    throw ioError('ENOSPC', 'write');
  });
}

async function startFaultWorld(stored: boolean): Promise<Worlds> {
  const upstream = await startBreakingUpstream();
  const w = await startWorld({
    extraToml: `
[providers.ft]
preset = "generic"
base_url = "${upstream.origin}/openai/v1"

[models.ft]
provider = "ft"
model = "sim-model"
${stored ? '\n[sessions]\nmax_live = 0\n' : ''}`,
  });
  upstream.target = w.sim.origin;
  return { w, upstream };
}

const worlds: Record<'live' | 'stored', Worlds | undefined> = { live: undefined, stored: undefined };
beforeAll(async () => {
  worlds.live = await startFaultWorld(false);
  worlds.stored = await startFaultWorld(true);
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  for (const x of Object.values(worlds)) {
    await x?.w.close();
    await x?.upstream.close();
  }
});

async function logIds(w: World): Promise<string[]> {
  return (await readdir(sessionsDir(w)).catch(() => [] as string[])).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -'.jsonl'.length));
}

/** The logs made since `before`, read as the replay reads them (a malformed line throws). */
async function logsSince(w: World, before: ReadonlySet<string>): Promise<Map<string, LogEvent[]>> {
  const out = new Map<string, LogEvent[]>();
  for (const id of await logIds(w)) {
    if (before.has(id)) continue;
    out.set(id, (await readLog(join(sessionsDir(w), `${id}.jsonl`))).events);
  }
  return out;
}

const replies = (events: readonly LogEvent[]) => events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp' && e.aborted !== true);

const cases = STEPS.flatMap((step) => (['named', 'unnamed'] as const).map((ids) => ({ ...step, ids, title: `${step.name} (${ids})` })));

describe.each(['live', 'stored'] as const)('%s sessions', (kind) => {
  it.each(cases.filter((s) => kind === 'stored' || s.storedOnly !== true))('$title', async (step) => {
    const { w, upstream } = worlds[kind]!;
    const t = tag(step.name.replace(/\W+/g, '-'));
    const headers: Record<string, string> = step.ids === 'named' ? { 'x-session-id': `conv-${t}` } : {};
    const before = new Set(await logIds(w));
    const history: Msg[] = [{ role: 'system', content: `You help with ${t}.` }];

    let sessionId: string | undefined;
    if (step.at === 'existing') {
      history.push({ role: 'user', content: `${t} first [[say one]]` });
      const first = await post(w.proxy.url, { model: 'ft', messages: history }, headers);
      expect(first.status, first.text).toBe(200);
      history.push({ role: 'assistant', content: contentOf(first) });
      [sessionId] = [...(await logsSince(w, before)).keys()];
    }

    const marker = `failing ${t}`;
    const failing: Msg[] = [...history, { role: 'user', content: `${marker} ${step.say ?? '[[say two]]'}` }];
    const body = { model: 'ft', messages: failing, ...(step.stream === true ? { stream: true } : {}) };
    const health = async () => (await fetch(`${w.proxy.url}/healthz`)).json() as Promise<{ status: string; damaged_sessions: number }>;
    const damagedBefore = (await health()).damaged_sessions;
    const c: Case = { w, upstream, marker, simBefore: w.sim.requests.length };
    step.arm?.(c);
    const got = step.send === undefined ? await post(w.proxy.url, body, headers) : await step.send(c, body, headers);
    vi.restoreAllMocks();

    if (step.expect === 'aborted') {
      expect(got).toBe('aborted');
    } else {
      expect(got).not.toBe('aborted');
      const answer = got as Posted;
      const error = errorOf(answer);
      expect(error, `${answer.status} ${answer.text}`).toEqual({ message: expect.any(String), type: expect.any(String), param: null, code: expect.any(String) });
      if (answer.contentType.startsWith('text/event-stream')) {
        // The stream had started: the error is its last frame, and no [DONE] follows it.
        expect(sseData(answer.text).at(-1)).toEqual({ error });
        expect(answer.text).not.toContain('[DONE]');
      } else {
        expect(answer.status).toBeGreaterThanOrEqual(400);
      }
    }

    // What the log says of the failed request (an aborted reply is logged after the client left).
    const failed = await until(async () => {
      const all = await logsSince(w, before);
      const events = [...all.values()].flat();
      return step.logged !== 'aborted' || events.some((e) => e.type === 'llm.resp' && e.aborted === true) ? all : undefined;
    }, 3000);
    const failedEvents = [...failed.values()].flat();
    const requests = failedEvents.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
    const errors = failedEvents.filter((e): e is EventOf<'llm.error'> => e.type === 'llm.error');
    const aborted = failedEvents.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp' && e.aborted === true);
    const answeredBefore = failedEvents.filter((e) => e.type === 'llm.resp' && e.aborted !== true);
    const turns = sessionId === undefined ? 0 : 1;
    if (step.logged === 'nothing') {
      // Nothing went upstream for it, and nothing says otherwise.
      expect(requests).toHaveLength(turns);
      expect(errors).toEqual([]);
    } else {
      expect(requests).toHaveLength(turns + 1);
      const last = requests.at(-1)!;
      expect(errors.map((e) => e.req)).toEqual(step.logged === 'llm.error' ? [last.seq] : []);
      expect(aborted.map((e) => e.req)).toEqual(step.logged === 'aborted' ? [last.seq] : []);
      // The reply the client never got in full is in the log only where the upstream finished it.
      expect(answeredBefore).toHaveLength(turns + (step.logged === 'reply' ? 1 : 0));
    }

    // The next request of the conversation runs at once: nothing holds its session.
    const next: Msg[] = step.next === 'same' ? failing : [...failing, { role: 'user', content: `${t} again [[say again]]` }];
    const expected = step.next === 'same' ? 'two' : 'again';
    const again = await post(w.proxy.url, { model: 'ft', messages: next }, headers, AbortSignal.timeout(5000));
    expect(again.status, again.text).toBe(200);
    expect(contentOf(again).startsWith(expected)).toBe(true);

    // A failed turn sets nothing aside.
    expect(await health()).toEqual({ status: 'ok', damaged_sessions: damagedBefore });

    // The session that answered it: the conversation's own (or, where the step says so, a fork of it).
    const logs = await logsSince(w, before);
    const grew = [...logs].filter(([id, events]) => replies(events).length > replies(failed.get(id) ?? []).length);
    expect(grew).toHaveLength(1);
    const [answeredId, events] = grew[0]!;
    expect(replies(events).at(-1)!.reply.content?.startsWith(expected)).toBe(true);
    if (sessionId !== undefined) {
      if (step.ids === 'unnamed' && step.nextForks === true) {
        expect((events[0] as EventOf<'session.start'>).parent?.session).toBe(sessionId);
      } else {
        expect(answeredId).toBe(sessionId);
      }
    }

    // Every log replays.
    for (const [id, evs] of logs) {
      const rebuilt = verifyEvents(evs, { file: id });
      expect(rebuilt.filter((r) => !r.ok)).toEqual([]);
    }
  });
});
