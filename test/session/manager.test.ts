/**
 * The session manager over a real log store in a temp dir: which session a request lands in,
 * what it appends, and the races around requests in flight.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ownFrom, type EventOf, type LogEvent, type Recipe } from '../../src/core/events.js';
import type { NeutralMessage, NeutralReply } from '../../src/core/types.js';
import { FileStore } from '../../src/store/files.js';
import { SessionManager, type Incoming, type Turn } from '../../src/session/manager.js';

const RECIPE: Recipe = {
  version: 'window-v1', route: 'm', context: 100_000, output_reserve: 4096, high_water: 70_000, low_water: 40_000,
  max_result_tokens: 4096, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
};
const ORIGIN = { provider: 'p', model: 'm' };

let dir: string;
let store: FileStore;
let managers: SessionManager[];
const clock = () => new Date('2026-03-04T05:06:07.000Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pp-session-'));
  store = new FileStore(dir);
  managers = [];
});
afterEach(async () => {
  for (const m of managers) await m.close();
  await rm(dir, { recursive: true, force: true });
});

async function manager(maxLive?: number): Promise<SessionManager> {
  const m = new SessionManager(store, { now: clock, ...(maxLive === undefined ? {} : { maxLive }) });
  await m.init();
  managers.push(m);
  return m;
}

const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const asAssistant = (r: NeutralReply): NeutralMessage => ({ role: 'assistant', content: r.content, ...(r.tool_calls === undefined ? {} : { tool_calls: r.tool_calls }) });

function incoming(messages: NeutralMessage[], extra: Partial<Incoming> = {}): Incoming {
  return { system: 'sys', tools: [], messages, recipe: RECIPE, ...extra };
}

/** What the proxy does for a request: its llm.req and llm.resp. */
function answer(turn: Turn, reply: NeutralReply, opts: { aborted?: boolean } = {}): void {
  const built = turn.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} });
  const req = turn.append({ type: 'llm.req', digest: built.digest, recipe_version: 'window-v1', route: 'm', model: 'm', origin: ORIGIN, params: {}, elided: built.elided, est_tokens: built.estTokens });
  turn.append({ type: 'llm.resp', req: req.seq, reply, origin: ORIGIN, timings: { total_ms: 1 }, ...(opts.aborted === true ? { aborted: true as const } : {}) });
}

/** An llm.req for the turn's session, eliding `elided`. */
function logRequest(turn: Turn, elided: number[]): EventOf<'llm.req'> {
  return turn.append({ type: 'llm.req', digest: 'd', recipe_version: 'window-v1', route: 'm', model: 'm', origin: ORIGIN, params: {}, elided, est_tokens: 1 }) as EventOf<'llm.req'>;
}

/** The turn answered, its reply made durable, and released. */
async function finish(turn: Turn, reply: NeutralReply): Promise<Turn> {
  answer(turn, reply);
  await turn.session.log.sync();
  turn.release();
  return turn;
}

async function run(m: SessionManager, messages: NeutralMessage[], reply: NeutralReply, extra: Partial<Incoming> = {}): Promise<Turn> {
  return finish(await m.begin(incoming(messages, extra)), reply);
}

const reply = (content: string, thinking?: string): NeutralReply => ({ content, finish_reason: 'stop', ...(thinking === undefined ? {} : { thinking }) });

async function events(id: string): Promise<LogEvent[]> {
  return (await store.read(id)).events;
}

describe('SessionManager', () => {
  it('a conversation sent again with one more message appends to its session', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1);
    const t2 = await run(m, [u('1'), asAssistant(r1), u('2')], reply('r2'));
    expect(t2.session.id).toBe(t1.session.id);
    expect(t2.plan.kind).toBe('append');
    expect((await events(t1.session.id)).filter((e) => e.type === 'client.msg').length).toBe(3);
  });

  it('two clients with one opening: each continues in a session of its own, no third one', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const a1 = await run(m, [u('1')], r1);
    const b1 = await run(m, [u('1')], r1);
    expect(b1.session.id).not.toBe(a1.session.id);
    const a2 = await run(m, [u('1'), asAssistant(r1), u('a')], reply('ra'));
    const b2 = await run(m, [u('1'), asAssistant(r1), u('b')], reply('rb'));
    expect(new Set([a1.session.id, b1.session.id])).toEqual(new Set([a2.session.id, b2.session.id]));
    expect(a2.session.id).not.toBe(b2.session.id);
    expect(a2.plan.kind).toBe('append');
    expect(b2.plan.kind).toBe('append');
  });

  it('two conversations ending on the same reply text: a request under a new head holding one of them is not drawn into the other', async () => {
    const m = await manager();
    const done = reply('Done.');
    const a = await run(m, [u('task a')], done, { system: 'sys a' });
    const b = await run(m, [u('task b')], done, { system: 'sys b' });
    // Conversation a again, its head changed (another system prompt): b's latest reply is the same
    // text, but it answered another message.
    const again = await run(m, [u('task a'), asAssistant(done), u('more a')], reply('ok'), { system: 'sys a, changed' });
    expect(again.session.id).not.toBe(b.session.id);
    expect((await events(b.session.id)).some((e) => e.type === 'client.rewrite')).toBe(false);
    expect((await events(b.session.id)).filter((e) => e.type === 'client.msg').map((e) => e.type === 'client.msg' && e.msg.content)).toStrictEqual(['sys b', 'task b']);
    void a;
  });

  it('a compacted history under an explicit id: a rewrite in the same session, the kept reply with its thinking', async () => {
    const m = await manager();
    const r1 = reply('r1', 'thought one');
    const r2: NeutralReply = { content: null, thinking: 'thought two', tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":1,"b":2}' }], finish_reason: 'tool_calls' };
    const id = { explicitId: 'sess-1' };
    const t1 = await run(m, [u('1')], r1, id);
    await run(m, [u('1'), asAssistant(r1), u('2')], r2, id);
    // The client keeps the last reply (its arguments re-serialised) and drops the rest.
    const kept: NeutralMessage = { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'f', arguments: '{"b": 2, "a": 1}' }] };
    const t3 = await m.begin(incoming([u('summary'), kept, { role: 'tool', tool_call_id: 'c1', content: 'x' }], id));
    expect(t3.session.id).toBe(t1.session.id);
    expect(t3.plan.kind).toBe('rewrite');
    const restored = t3.appended.find((e): e is EventOf<'client.msg'> => e.type === 'client.msg' && e.msg.role === 'assistant')!;
    // The log's own reply: its bytes and its thinking, not the client's echo.
    expect(restored.msg).toEqual({ role: 'assistant', content: null, tool_calls: r2.tool_calls, thinking: 'thought two' });
    const built = t3.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} });
    expect(built.request.messages.map((x) => x.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(built.request.messages[2]).toMatchObject({ thinking: 'thought two' });
    t3.release();
  });

  it('a side call under the conversation\'s id (another system prompt, nothing shared) gets a session of its own', async () => {
    const m = await manager();
    const id = { explicitId: 'sess-title' };
    const r1 = reply('r1');
    const main1 = await run(m, [u('fix the parser')], r1, id);
    const title = await run(m, [u('Write a 5-word title for: fix the parser')], reply('Parser fix'), { ...id, system: 'You write titles.' });
    expect(title.session.id).not.toBe(main1.session.id);
    expect(title.plan.kind).toBe('new');
    const main2 = await run(m, [u('fix the parser'), asAssistant(r1), u('go on')], reply('r2'), id);
    expect(main2.session.id).toBe(main1.session.id);
    expect(main2.plan.kind).toBe('append');
    expect((await events(main1.session.id)).some((e) => e.type === 'client.rewrite')).toBe(false);
  });

  it('a compaction prompt on the conversation: a side session holding the parent\'s events, never located, before or after a restart', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const main = await run(m, [u('fix the parser')], r1);
    const parentEvents = await events(main.session.id);
    const prompt = 'Provide a detailed prompt for continuing our conversation above.';
    const side = await run(m, [u('fix the parser'), asAssistant(r1), u(prompt)], reply('summary'));
    expect(side.plan).toMatchObject({ kind: 'side', job: { kind: 'compaction', client: 'opencode', instruction: prompt } });
    expect(side.session.id).not.toBe(main.session.id);
    expect(await events(main.session.id)).toStrictEqual(parentEvents);
    const sideEvents = await events(side.session.id);
    // The parent's events unchanged but for the start, which names the parent and the side job.
    expect(sideEvents.slice(1, parentEvents.length).map(({ seq, type }) => ({ seq, type }))).toStrictEqual(parentEvents.slice(1).map(({ seq, type }) => ({ seq, type })));
    expect(sideEvents[0]).toMatchObject({ type: 'session.start', ids: [], parent: { session: main.session.id, seq: parentEvents.length + 1 }, lineage: main.session.id, side: { kind: 'compaction' } });
    expect(sideEvents.slice(parentEvents.length).map((e) => e.type)).toStrictEqual(['client.msg', 'llm.req', 'llm.resp']);

    // A request that extends the side session's whole view extends the conversation's too: it lands
    // there, in memory and after a restart (the side session's sidecar locates nothing).
    const extending = (first: string, r: NeutralReply) => [u(first), asAssistant(r), u(prompt), { role: 'assistant', content: 'summary' } as NeutralMessage, u('go on')];
    const next = await m.begin(incoming(extending('fix the parser', r1)));
    expect(next.session.id).toBe(main.session.id);
    expect(next.plan).toEqual({ kind: 'append', from: 2 });
    next.release();
    // Another conversation and its side request, untouched until the restart.
    const r2 = reply('r2');
    const main2 = await run(m, [u('fix the lexer')], r2);
    const side2 = await run(m, [u('fix the lexer'), asAssistant(r2), u(prompt)], reply('summary'));
    expect(side2.plan.kind).toBe('side');
    await m.close();
    managers = [];
    const again = await manager();
    const later = await again.begin(incoming(extending('fix the lexer', r2)));
    expect(later.session.id).toBe(main2.session.id);
    expect(later.plan).toEqual({ kind: 'append', from: 2 });
    later.release();
  });

  it('a request diverging from one in flight forks: a new session naming its parent', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1);
    const base = [u('1'), asAssistant(r1)];
    const running = await m.begin(incoming([...base, u('slow')]));
    const fork = await m.begin(incoming([...base, u('fast')]));
    expect(fork.session.id).not.toBe(t1.session.id);
    await fork.session.log.sync();
    const start = (await events(fork.session.id))[0] as EventOf<'session.start'>;
    expect(start.parent).toEqual({ session: t1.session.id, seq: running.appended[0]!.seq });
    // The fork holds the parent's events before the divergence, then its own message.
    expect(fork.session.view.entries.map((e) => e.msg.content)).toEqual(['1', 'r1', 'fast']);
    expect(running.session.view.entries.map((e) => e.msg.content)).toEqual(['1', 'r1', 'slow']);
    fork.release();
    running.release();
  });

  it('a fork at a reply copies, of the parent\'s requests for that message, the last and those that elided', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1);
    const asked = [u('1'), asAssistant(r1), u('2')];
    // The parent's second turn: a failed try, one that elided the first message, the last, then its reply.
    const t2 = await m.begin(incoming(asked));
    const first = t1.appended.find((e) => e.type === 'client.msg')!.seq;
    const req = (elided: number[]) => logRequest(t2, elided);
    const failed = req([]);
    t2.append({ type: 'llm.error', req: failed.seq, status: 500 });
    const eliding = req([first]);
    const last = req([]);
    t2.append({ type: 'llm.resp', req: last.seq, reply: reply('r2'), origin: ORIGIN, timings: { total_ms: 1 } });
    await t2.session.log.sync();
    t2.release();

    // Another client asks the same, without r2: a fork at r2.
    const fork = await m.begin(incoming(asked, { recipe: RECIPE }));
    expect(fork.session.id).not.toBe(t1.session.id);
    await fork.session.log.sync();
    const log = await events(fork.session.id);
    const start = log[0] as EventOf<'session.start'>;
    const copied = log.filter((e) => e.seq < ownFrom(start));
    expect(copied.filter((e) => e.type === 'llm.req').map((e) => (e as EventOf<'llm.req'>).elided)).toStrictEqual([[], [first], []]);
    expect(copied.filter((e) => e.type === 'llm.error')).toStrictEqual([]);
    // Every copied event but the tail's requests keeps its seq; the tail's two follow on.
    const parentLog = await events(t1.session.id);
    expect(copied.slice(1, -2).map((e) => [e.seq, e.type])).toStrictEqual(parentLog.filter((e) => e.seq > 1 && e.seq < failed.seq).map((e) => [e.seq, e.type]));
    expect(start.parent).toEqual({ session: t1.session.id, seq: last.seq + 1 });
    expect(start.own_from).toBe(failed.seq + 2);
    // The elision the parent's request made holds in the fork's window.
    expect(fork.session.window.isElided(first)).toBe(true);
    expect(eliding.seq).toBeLessThan(last.seq);
    fork.release();
  });

  it('the same conversation as a request in flight runs beside it (a fork), without waiting', async () => {
    const m = await manager();
    const first = await m.begin(incoming([u('same opening')]));
    const twin = await m.begin(incoming([u('same opening')]));
    expect(twin.session.id).not.toBe(first.session.id);
    await twin.session.log.sync();
    const start = (await events(twin.session.id))[0] as EventOf<'session.start'>;
    expect(start.parent).toEqual({ session: first.session.id, seq: first.appended.at(-1)!.seq + 1 });
    expect(twin.session.view.entries.map((e) => e.msg.content)).toEqual(['same opening']);
    // Both build the same request.
    const build = (t: Turn) => t.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} }).digest;
    expect(build(twin)).toBe(build(first));
    twin.release();
    first.release();
  });

  it('a request diverging from one whose client left is its retry: it waits, then rewrites in the same session', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1);
    const base = [u('1'), asAssistant(r1)];
    const running = await m.begin(incoming([...base, u('slow')]));
    running.abandon();
    let settled = false;
    const retryPromise = m.begin(incoming([...base, u('retry')])).then((t) => {
      settled = true;
      return t;
    });
    await new Promise((r) => setTimeout(r, 10));
    // It waits for the abandoned request to log what it got.
    expect(settled).toBe(false);
    answer(running, reply('partial'), { aborted: true });
    running.release();
    const retry = await retryPromise;
    expect(retry.session.id).toBe(t1.session.id);
    expect(retry.plan.kind).toBe('rewrite');
    expect(retry.session.view.entries.map((e) => e.msg.content)).toEqual(['1', 'r1', 'retry']);
    retry.release();
  });

  it('a session with a request waiting for its turn is not evicted from memory', async () => {
    const m = await manager(1);
    const r1 = reply('r1');
    await run(m, [u('a')], r1);
    const first = await m.begin(incoming([u('a'), asAssistant(r1), u('a2')]));
    const waiting = m.begin(incoming([u('a'), asAssistant(r1), u('a2'), u('a3')]));
    const other = await m.begin(incoming([u('another conversation')], { system: 'other' }));
    first.release();
    const second = await waiting;
    expect(second.session).toBe(first.session);
    // Its log is still open for writing.
    expect(() => answer(second, reply('r2'))).not.toThrow();
    await second.session.log.sync();
    second.release();
    other.release();
  });

  it('a session evicted from memory is back at once when its next request comes', async () => {
    const m = await manager(1);
    const r1 = reply('r1');
    const a = await run(m, [u('a')], r1);
    // A second session pushes the first out of memory (its log closing in the background)...
    await run(m, [u('b')], reply('rb'), { system: 'other' });
    // ... and the first one's next request, right away, reopens it.
    const again = await run(m, [u('a'), asAssistant(r1), u('a2')], reply('r2'));
    expect(again.session.id).toBe(a.session.id);
    expect(again.session).not.toBe(a.session);
    expect(again.plan.kind).toBe('append');
    expect((await events(a.session.id)).filter((e) => e.type === 'llm.resp')).toHaveLength(2);
  });

  it('an idle session leaves memory after idle_minutes, and comes back on its next request', async () => {
    let t = Date.parse('2026-03-04T05:06:07.000Z');
    // A conversation without tools would leave at its first answer (the next test): kept here.
    const m = new SessionManager(store, { now: () => new Date(t), idleMs: 60_000, oneShotsLeave: false });
    await m.init();
    managers.push(m);
    const r1 = reply('r1');
    const first = await run(m, [u('1')], r1);
    expect(m.liveCount).toBe(1);
    t += 30_000;
    expect(await m.evictIdle()).toBe(0);
    t += 31_000;
    expect(await m.evictIdle()).toBe(1);
    expect(m.liveCount).toBe(0);
    const second = await run(m, [u('1'), asAssistant(r1), u('2')], reply('r2'));
    expect(second.session.id).toBe(first.session.id);
    expect(second.plan.kind).toBe('append');
  });

  describe('a new conversation without tools (a one-shot call) leaves memory at its first answer', () => {
    const TOOLS = [{ type: 'function' as const, function: { name: 'read', parameters: { type: 'object' } } }];

    it('its log is closed and its entry saved; its next request reads it back and appends', async () => {
      const m = await manager();
      const r1 = reply('r1');
      const first = await run(m, [u('title this')], r1);
      expect(m.liveCount).toBe(0);
      expect(m.sessionIds()).toEqual([first.session.id]);
      // Its entry is saved as its log closes, in the background: the sidecar names what tells its
      // reply from another of the same text.
      let saved: { entry: { latestReply?: string; replyTo?: string } } | undefined;
      for (let i = 0; i < 100 && saved === undefined; i++) {
        saved = await store.readIndex(first.session.id);
        if (saved === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(saved?.entry.latestReply).toMatch(/^[0-9a-f]{64}$/);
      expect(saved?.entry.replyTo).toMatch(/^[0-9a-f]{64}$/);
      const second = await run(m, [u('title this'), asAssistant(r1), u('and this')], reply('r2'));
      expect(second.session.id).toBe(first.session.id);
      expect(second.session).not.toBe(first.session);
      expect(second.plan.kind).toBe('append');
      // A second turn: a conversation now, kept.
      expect(m.liveCount).toBe(1);
      expect((await events(first.session.id)).map((e) => e.type)).toEqual([
        'session.start', 'client.msg', 'client.msg', 'llm.req', 'llm.resp', 'client.msg', 'llm.req', 'llm.resp',
      ]);
    });

    it('one that sent tools, or named its session, stays live', async () => {
      const m = await manager();
      const withTools = await run(m, [u('fix the bug')], reply('ok'), { tools: TOOLS });
      const named = await run(m, [u('hello')], reply('hi'), { explicitId: 'chat-1' });
      expect(m.liveCount).toBe(2);
      const next = await run(m, [u('fix the bug'), asAssistant(reply('ok')), u('go on')], reply('done'), { tools: TOOLS });
      expect(next.session).toBe(withTools.session);
      void named;
    });

    /** A one-shot call's first turn, answered and synced, still held. */
    async function answeredAndHeld(m: SessionManager): Promise<{ first: Turn; r1: NeutralReply }> {
      const r1 = reply('r1');
      const first = await m.begin(incoming([u('q')]));
      answer(first, r1);
      await first.session.log.sync();
      return { first, r1 };
    }

    it('one whose second request came before its first was answered stays live', async () => {
      const m = await manager();
      const { first, r1 } = await answeredAndHeld(m);
      // The client's next request, while the first turn still holds the session: it waits for it.
      const waiting = m.begin(incoming([u('q'), asAssistant(r1), u('q2')]));
      await new Promise((resolve) => setTimeout(resolve, 20));
      first.release();
      const second = await finish(await waiting, reply('r2'));
      expect(second.session).toBe(first.session);
      expect(m.liveCount).toBe(1);
    });

    it('a request that found it live just as its first answer sent it out reads it back', async () => {
      const m = await manager();
      const { first, r1 } = await answeredAndHeld(m);
      // The next request has found the live session and waits for it to be handed over ...
      const next = m.begin(incoming([u('q'), asAssistant(r1), u('q2')]));
      // ... when the first turn is released and the session leaves memory.
      first.release();
      const second = await finish(await next, reply('r2'));
      expect(second.session.id).toBe(first.session.id);
      expect(second.session).not.toBe(first.session);
      expect((await events(first.session.id)).filter((e) => e.type === 'llm.resp')).toHaveLength(2);
    });

    it('a side request\'s session leaves too, tools or not: it is never located', async () => {
      const m = await manager();
      const r1 = reply('r1');
      const main = await run(m, [u('fix the parser')], r1, { tools: TOOLS });
      const prompt = 'Provide a detailed prompt for continuing our conversation above.';
      const side = await run(m, [u('fix the parser'), asAssistant(r1), u(prompt)], reply('summary'), { tools: TOOLS });
      expect(side.plan.kind).toBe('side');
      expect(m.liveCount).toBe(1);
      const next = await run(m, [u('fix the parser'), asAssistant(r1), u('go on')], reply('r2'), { tools: TOOLS });
      expect(next.session).toBe(main.session);
    });

    it('kept, with oneShotsLeave false', async () => {
      const m = new SessionManager(store, { now: clock, oneShotsLeave: false });
      await m.init();
      managers.push(m);
      await run(m, [u('title this')], reply('r1'));
      expect(m.liveCount).toBe(1);
    });
  });

  it('a stored session is found for locate_days after its last request: past them its continuation starts a session, and its log stays', async () => {
    const DAY = 86_400_000;
    let t = Date.parse('2026-03-04T05:06:07.000Z');
    const horizon = { now: () => new Date(t), forgetAfterMs: 30 * DAY };
    const first = new SessionManager(store, horizon);
    await first.init();
    const r1 = reply('r1');
    const old = await run(first, [u('old task')], r1, { explicitId: 'named-old' });
    t += 20 * DAY;
    const r2 = reply('r2');
    const recent = await run(first, [u('recent task')], r2);
    await first.close();
    // A start 31 days after the first session's request and 11 after the second's.
    t += 11 * DAY;
    const m = new SessionManager(store, horizon);
    await m.init();
    managers.push(m);
    const goOn = await run(m, [u('recent task'), asAssistant(r2), u('more')], reply('r3'));
    expect(goOn.session.id).toBe(recent.session.id);
    const resumed = await run(m, [u('old task'), asAssistant(r1), u('more')], reply('r4'));
    expect(resumed.session.id).not.toBe(old.session.id);
    expect(resumed.plan.kind).toBe('new');
    expect((await events(old.session.id)).filter((e) => e.type === 'llm.resp')).toHaveLength(1);
    // While it runs too: 20 days on, the second session (31 days idle) goes the same way.
    t += 20 * DAY;
    await run(m, [u('a third task')], reply('r5'));
    const late = await run(m, [u('recent task'), asAssistant(r2), u('more')], reply('r6'));
    expect(late.session.id).not.toBe(recent.session.id);
  });

  it('a live session leaves memory by locate_days at the latest, whatever idle_minutes says: past them it is not continued', async () => {
    const DAY = 86_400_000;
    let t = Date.parse('2026-03-04T05:06:07.000Z');
    const m = new SessionManager(store, { now: () => new Date(t), idleMs: 365 * DAY, forgetAfterMs: 30 * DAY, oneShotsLeave: false });
    await m.init();
    managers.push(m);
    const r1 = reply('r1');
    const first = await run(m, [u('a long task')], r1);
    t += 10 * DAY;
    expect(await m.evictIdle()).toBe(0);
    expect((await run(m, [u('a long task'), asAssistant(r1), u('more')], reply('r2'))).session.id).toBe(first.session.id);
    t += 31 * DAY;
    expect(await m.evictIdle()).toBe(1);
    const late = await run(m, [u('a long task'), asAssistant(r1), u('more'), asAssistant(reply('r2')), u('and more')], reply('r3'));
    expect(late.session.id).not.toBe(first.session.id);
    expect(late.plan.kind).toBe('new');
  });

  it('a stored session is found by its latest reply only where that reply answered the same message', async () => {
    const m = await manager();
    const done = reply('Done.');
    // Both leave memory at their answer (one-shot calls), so both are found as stored sessions.
    await run(m, [u('task a')], done, { system: 'sys a' });
    const b = await run(m, [u('task b')], done, { system: 'sys b' });
    expect(m.liveCount).toBe(0);
    // b's history under another head: found by b's reply, which answered 'task b'.
    const intoB = await run(m, [u('task b'), asAssistant(done), u('more b')], reply('ok'), { system: 'sys b, changed' });
    expect(intoB.session.id).toBe(b.session.id);
  });

  it('a restarted manager continues every session where its log ends', async () => {
    const m = await manager();
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1);
    const r2 = reply('r2');
    await run(m, [u('1'), asAssistant(r1), u('2')], r2);
    await m.close();
    managers = [];
    const again = await manager();
    const t3 = await again.begin(incoming([u('1'), asAssistant(r1), u('2'), asAssistant(r2), u('3')]));
    expect(t3.session.id).toBe(t1.session.id);
    expect(t3.plan).toEqual({ kind: 'append', from: 4 });
    t3.release();
  });

  it('a stored session whose log cannot be opened for a moment (EMFILE) fails that request only, and is not set aside', async () => {
    const m = await manager(0);
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1);
    expect(m.liveCount).toBe(0);
    const emfile = Object.assign(new Error('EMFILE: too many open files, open'), { code: 'EMFILE', syscall: 'open' });
    vi.spyOn(store, 'open').mockRejectedValueOnce(emfile);
    await expect(m.begin(incoming([u('1'), asAssistant(r1), u('2')]))).rejects.toBe(emfile);
    expect(m.damaged.size).toBe(0);
    const t2 = await run(m, [u('1'), asAssistant(r1), u('2')], reply('r2'));
    expect(t2.session.id).toBe(t1.session.id);
    expect(t2.plan).toEqual({ kind: 'append', from: 2 });
  });

  it('a stored session whose log turned out malformed is set aside: the request starts a new session', async () => {
    const warnings: string[] = [];
    const m = new SessionManager(store, { now: clock, maxLive: 0, warn: (line) => warnings.push(line) });
    await m.init();
    managers.push(m);
    const r1 = reply('r1');
    const t1 = await run(m, [u('1')], r1, { explicitId: 'conv' });
    // A line in the middle is damaged after the session left memory.
    const lines = (await readFile(store.file(t1.session.id), 'utf8')).split('\n');
    lines[1] = '{"seq":2,' + 'x'.repeat(Math.max(0, lines[1]!.length - 9));
    await writeFile(store.file(t1.session.id), lines.join('\n'));
    const t2 = await run(m, [u('1'), asAssistant(r1), u('2')], reply('r2'), { explicitId: 'conv' });
    expect(t2.session.id).not.toBe(t1.session.id);
    expect(t2.plan.kind).toBe('new');
    expect([...m.damaged.keys()]).toEqual([t1.session.id]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(t1.session.id);
  });
});
