/**
 * A request is compared with its session in the log's own terms: what the log redacted, the
 * client resends as it has it, and that is the same message. And what a real rewrite does.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventOf, LogEvent, Recipe } from '../../src/core/events.js';
import type { NeutralMessage, NeutralReply } from '../../src/core/types.js';
import { SessionLog } from '../../src/log/store.js';
import { FileStore } from '../../src/store/files.js';
import { SessionManager, answerKey, type Incoming, type Turn } from '../../src/session/manager.js';

const RECIPE: Recipe = {
  version: 'window-v1', route: 'm', context: 100_000, output_reserve: 4096, high_water: 70_000, low_water: 40_000,
  max_result_tokens: 4096, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
};
const ORIGIN = { provider: 'p', model: 'm' };
const KEY = 'sk-proj-' + 'Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5pR7tV9xZ1bD3';
const AWS = 'AKIAIOSFODNN7EXAMPLE';

let dir: string;
let store: FileStore;
let m: SessionManager;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pp-terms-'));
  store = new FileStore(dir);
  m = new SessionManager(store, { now: () => new Date('2026-03-04T05:06:07.000Z') });
  await m.init();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await m.close();
  await rm(dir, { recursive: true, force: true });
});

const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const incoming = (messages: NeutralMessage[], extra: Partial<Incoming> = {}): Incoming => ({ system: 'sys', tools: [], messages, recipe: RECIPE, ...extra });
const asAssistant = (r: NeutralReply): NeutralMessage => ({ role: 'assistant', content: r.content, ...(r.tool_calls === undefined ? {} : { tool_calls: r.tool_calls }) });

function answer(turn: Turn, reply: NeutralReply, elided: number[] = [], idempotency?: string): void {
  const built = turn.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} });
  const req = turn.append({
    type: 'llm.req', digest: built.digest, recipe_version: 'window-v1', route: 'm', model: 'm', origin: ORIGIN, params: {}, elided: [...built.elided, ...elided], est_tokens: built.estTokens,
    ...(idempotency === undefined ? {} : { idempotency }),
  });
  turn.append({ type: 'llm.resp', req: req.seq, reply, origin: ORIGIN, timings: { total_ms: 1 } });
}

async function run(messages: NeutralMessage[], reply: NeutralReply, extra: Partial<Incoming> = {}, elided: number[] = [], idempotency?: string): Promise<Turn> {
  const turn = await m.begin(incoming(messages, extra));
  answer(turn, reply, elided, idempotency);
  await turn.session.log.sync();
  turn.release();
  return turn;
}

async function events(id: string): Promise<LogEvent[]> {
  return (await store.read(id)).events;
}

describe('matching in the log\'s own terms', () => {
  it('a credential in a tool result, in a user message, in the system prompt and in a reply, resent as the client has it: no rewrite, each message logged once', async () => {
    const sys = `You are an agent. Deploy key: ${KEY}`;
    const call: NeutralReply = { content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{"path":".env","lines":10}' }], finish_reason: 'tool_calls' };
    const env: NeutralMessage = { role: 'tool', tool_call_id: 'c1', content: `OPENAI_API_KEY=${KEY}\nAWS_ACCESS_KEY_ID=${AWS}\n` };
    const echo: NeutralReply = { content: `Found the key ${KEY} in .env.`, finish_reason: 'stop' };
    let history: NeutralMessage[] = [u(`my token is ${KEY}, read .env`)];
    const t1 = await run(history, call, { system: sys });
    // The client re-serialises the call's arguments.
    history = [...history, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{ "lines": 10, "path": ".env" }' }] }, env];
    await run(history, echo, { system: sys });
    for (let i = 0; i < 5; i++) {
      history = [...history, asAssistant(i === 0 ? echo : { content: `ok ${i - 1}`, finish_reason: 'stop' }), u(`next ${i}`)];
      const t = await run(history, { content: `ok ${i}`, finish_reason: 'stop' }, { system: sys });
      expect(t.session.id).toBe(t1.session.id);
      expect(t.plan.kind).toBe('append');
    }
    const log = await events(t1.session.id);
    expect(log.filter((e) => e.type === 'client.rewrite')).toEqual([]);
    // The system prompt once, the first user message, the tool result, 5 user messages; no reply re-logged.
    expect(log.filter((e) => e.type === 'client.msg').length).toBe(1 + 1 + 1 + 5);
    const text = await readFile(store.file(t1.session.id), 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(AWS);
  });

  it('a real rewrite logs the changed suffix once, and an entry elided before comes back elided', async () => {
    const id = { explicitId: 'edit-1' };
    const big: NeutralMessage = { role: 'tool', tool_call_id: 'c1', content: 'line\n'.repeat(500) };
    const call: NeutralReply = { content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{}' }], finish_reason: 'tool_calls' };
    const t1 = await run([u('first')], call, id);
    const t2 = await run([u('first'), asAssistant(call), big], { content: 'read it', finish_reason: 'stop' }, id);
    const resultSeq = t2.appended.find((e) => e.type === 'client.msg' && e.msg.role === 'tool')!.seq;
    // A trim elides the big result.
    await run([u('first'), asAssistant(call), big, { role: 'assistant', content: 'read it' }, u('more')], { content: 'done', finish_reason: 'stop' }, id, [resultSeq]);
    // The client edits its first message and resends the rest.
    const t4 = await m.begin(incoming([u('first, edited'), asAssistant(call), big, { role: 'assistant', content: 'read it' }, u('more'), { role: 'assistant', content: 'done' }, u('again')], id));
    expect(t4.session.id).toBe(t1.session.id);
    expect(t4.plan.kind).toBe('rewrite');
    const added = t4.appended.filter((e): e is EventOf<'client.msg'> => e.type === 'client.msg');
    expect(added.length).toBe(7);
    const resent = added.find((e) => e.msg.role === 'tool')!;
    expect(resent.elided_as).toBe(resultSeq);
    const built = t4.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} });
    const tool = built.request.messages.find((x) => x.role === 'tool')!;
    expect(tool.content).toBe(`[elided seq=${resent.seq}]`);
    t4.release();
  });
});

describe('turns that cannot leak', () => {
  it('a failure while begin appends releases the turn: the next request runs', async () => {
    const t1 = await run([u('1')], { content: 'r1', finish_reason: 'stop' }, { explicitId: 'x' });
    const spy = vi.spyOn(SessionLog.prototype, 'append').mockImplementationOnce(() => {
      throw new Error('injected');
    });
    await expect(m.begin(incoming([u('1'), { role: 'assistant', content: 'r1' }, u('2')], { explicitId: 'x' }))).rejects.toThrow('injected');
    spy.mockRestore();
    const next = await Promise.race([
      m.begin(incoming([u('1'), { role: 'assistant', content: 'r1' }, u('2')], { explicitId: 'x' })),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('wedged')), 2000)),
    ]);
    expect(next.session.id).toBe(t1.session.id);
    expect(next.plan.kind).toBe('append');
    next.release();
  });
});

describe('retries answered from the log', () => {
  const key = answerKey('m', 'm', {});
  const marked = { marked: true, key };

  it('a marked retry of the last answered request gets that reply and appends nothing', async () => {
    const r1: NeutralReply = { content: 'r1', finish_reason: 'stop' };
    const t1 = await run([u('1')], r1, { explicitId: 'r' });
    const before = (await events(t1.session.id)).length;
    const retry = await m.begin(incoming([u('1')], { explicitId: 'r', retry: marked }));
    const asked = (await events(t1.session.id)).findLast((e) => e.type === 'llm.req')!;
    expect(retry.plan).toEqual({ kind: 'answered', reply: r1, req: asked.seq });
    retry.release();
    expect((await events(t1.session.id)).length).toBe(before);
  });

  // Found by its history alone (no explicit id): the retry lacks the session's latest reply, so
  // neither the stored tip nor the reply's fingerprint finds it; a new session would fork it.
  it.each(['a restart', 'a restart that wrote no sidecar (killed)', 'leaving memory'])('after %s, a retry of the last answered request is answered in its session', async (how) => {
    if (how === 'leaving memory') {
      await m.close();
      m = new SessionManager(store, { now: () => new Date('2026-03-04T05:06:07.000Z'), maxLive: 0 });
      await m.init();
    }
    const r1: NeutralReply = { content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }], finish_reason: 'tool_calls' };
    const asked = [u('1')];
    const id = (await run(asked, r1)).session.id;
    if (how !== 'leaving memory') {
      await m.close();
      if (how !== 'a restart') await rm(store.indexJournalFile);
      m = new SessionManager(store, { now: () => new Date('2026-03-04T05:06:07.000Z') });
      await m.init();
    }
    const before = (await events(id)).length;
    const retry = await m.begin(incoming(asked, { retry: marked }));
    expect(retry.session.id).toBe(id);
    expect(retry.plan).toMatchObject({ kind: 'answered', reply: r1 });
    retry.release();
    expect((await events(id)).length).toBe(before);
    expect(await store.listSessions()).toEqual([id]);
  });

  it('not marked, other parameters, or something logged since: not a retry', async () => {
    const r1: NeutralReply = { content: 'r1', finish_reason: 'stop' };
    await run([u('1')], r1, { explicitId: 'r' });
    const plain = await m.begin(incoming([u('1')], { explicitId: 'r' }));
    expect(plain.plan.kind).not.toBe('answered');
    plain.release();
    const other = await m.begin(incoming([u('1')], { explicitId: 'r', retry: { marked: true, key: answerKey('m', 'm', { temperature: 0.5 }) } }));
    expect(other.plan.kind).not.toBe('answered');
    other.release();
  });

  // The key's digest is in the answered request's llm.req: read back, the log alone decides.
  it.each(['this process', 'a restart'])('an idempotency key is a retry only of the answered request that carried it (%s)', async (how) => {
    const r1: NeutralReply = { content: 'r1', finish_reason: 'stop' };
    const keyed = (await run([u('1')], r1, { explicitId: 'k' }, [], 'digest-1')).session.id;
    const unkeyed = (await run([u('2')], r1, { explicitId: 'n' })).session.id;
    if (how === 'a restart') {
      await m.close();
      m = new SessionManager(store, { now: () => new Date('2026-03-04T05:06:07.000Z') });
      await m.init();
    }
    const ask = async (messages: NeutralMessage[], explicitId: string, idempotency: string) => {
      const turn = await m.begin(incoming(messages, { explicitId, retry: { marked: false, idempotency, key } }));
      const kind = turn.plan.kind;
      turn.release();
      return { kind, session: turn.session.id };
    };
    expect(await ask([u('1')], 'k', 'digest-1')).toEqual({ kind: 'answered', session: keyed });
    expect(await ask([u('1')], 'k', 'digest-1')).toEqual({ kind: 'answered', session: keyed }); // asked a third time
    expect((await ask([u('1')], 'k', 'digest-2')).kind).not.toBe('answered');
    expect((await ask([u('2')], 'n', 'digest-1')).kind).not.toBe('answered');
    expect((await events(unkeyed)).filter((e) => e.type === 'llm.req')).toHaveLength(1);
  });
});
