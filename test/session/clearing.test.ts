/**
 * Client-side clearing (docs/decisions/0005-client-clearing.md): a tool result the client sends
 * with its content replaced by its clearing marker is the same entry, cleared, not a divergence.
 * Under window-v4 the first message the request adds names the cleared entries and nothing else is
 * written again; under window-v3 the request is an append and the log gains no new field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, Recipe, WindowVersion } from '../../src/core/events.js';
import type { NeutralMessage, NeutralReply, ToolCall } from '../../src/core/types.js';
import { messageKey } from '../../src/session/fingerprint.js';
import { IncomingMessage } from '../../src/session/incoming.js';
import { SessionManager, type Turn } from '../../src/session/manager.js';
import { planRequest } from '../../src/session/plan.js';
import type { ViewEntry } from '../../src/session/view.js';
import { FileStore } from '../../src/store/files.js';

const MARKER = '[Old tool result content cleared]';
const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const calls = (id: string): ToolCall[] => [{ id, name: 'Read', arguments: `{"file_path":"src/${id}.ts"}` }];
const asks = (id: string): NeutralMessage => ({ role: 'assistant', content: null, tool_calls: calls(id) });
const result = (id: string, content = `contents of ${id} `.repeat(40)): NeutralMessage => ({ role: 'tool', tool_call_id: id, content });
const HISTORY = [u('read the files'), asks('a'), result('a'), asks('b'), result('b'), asks('c'), result('c')];

describe('planRequest with cleared tool results', () => {
  const view = HISTORY.map((msg, i): ViewEntry => ({ seq: i + 2, msg, key: messageKey(msg) }));
  const plan = (messages: NeutralMessage[]) => planRequest(view, messages.map((m) => new IncomingMessage(m)), { explicit: true, clientDrops: 'follow' });

  it('a result replaced by the marker, same call id, is its entry cleared: an append naming it', () => {
    const sent = [...HISTORY.slice(0, 2), result('a', MARKER), HISTORY[3]!, result('b', MARKER), ...HISTORY.slice(5), u('go on')];
    expect(plan(sent)).toEqual({ kind: 'append', from: 7, cleared: [{ seq: 4, text: MARKER }, { seq: 6, text: MARKER }] });
    // Nothing cleared: no field.
    expect(plan([...HISTORY, u('go on')])).toEqual({ kind: 'append', from: 7 });
  });

  it('another text, or the marker under another call id, is a divergence as before', () => {
    expect(plan([...HISTORY.slice(0, 2), result('a', '[gone]'), ...HISTORY.slice(3)])).toEqual({ kind: 'rewrite', fromSeq: 4, from: 2 });
    expect(plan([...HISTORY.slice(0, 2), result('z', MARKER), ...HISTORY.slice(3)])).toEqual({ kind: 'rewrite', fromSeq: 4, from: 2 });
    // A cleared result before a real edit: the rewrite starts at the edit, and the clearing before it is named.
    expect(plan([...HISTORY.slice(0, 2), result('a', MARKER), HISTORY[3]!, result('b', 'edited')])).toEqual({ kind: 'rewrite', fromSeq: 6, from: 4, cleared: [{ seq: 4, text: MARKER }] });
  });
});

describe('SessionManager and a client that clears old tool results', () => {
  let dir: string;
  let store: FileStore;
  let m: SessionManager;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pp-clearing-'));
    store = new FileStore(dir);
    m = new SessionManager(store, { now: () => new Date('2026-03-04T05:06:07.000Z') });
    await m.init();
  });
  afterEach(async () => {
    await m.close();
    await rm(dir, { recursive: true, force: true });
  });

  const recipe = (version: WindowVersion): Recipe => ({
    version, route: 'm', context: 100_000, output_reserve: 4096, high_water: 70_000, low_water: 40_000,
    max_result_tokens: 4096, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
  });
  const ORIGIN = { provider: 'p', model: 'm' };

  async function run(version: WindowVersion, messages: NeutralMessage[], reply: NeutralReply, explicitId?: string): Promise<Turn> {
    const turn = await m.begin({ system: 'sys', tools: [], messages, recipe: recipe(version), ...(explicitId === undefined ? {} : { explicitId }) });
    const built = turn.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} });
    const req = turn.append({ type: 'llm.req', digest: built.digest, recipe_version: version, route: 'm', model: 'm', origin: ORIGIN, params: {}, elided: built.elided, est_tokens: built.estTokens });
    turn.append({ type: 'llm.resp', req: req.seq, reply, origin: ORIGIN, timings: { total_ms: 1 } });
    await turn.session.log.sync();
    turn.release();
    return turn;
  }

  /** A conversation of three reads, then the same with the first two results cleared and a new message. */
  async function clearing(version: WindowVersion, explicitId?: string) {
    const history: NeutralMessage[] = [u('read the files')];
    let first: Turn | undefined;
    for (const id of ['a', 'b', 'c']) {
      const t = await run(version, history, { content: null, tool_calls: calls(id), finish_reason: 'tool_calls' }, explicitId);
      first ??= t;
      history.push(asks(id), result(id));
    }
    await run(version, history, { content: 'read', finish_reason: 'stop' }, explicitId);
    history.push({ role: 'assistant', content: 'read' });
    const before = (await store.read(first!.session.id)).events.length;
    const cleared = history.map((msg) => (msg.role === 'tool' && msg.tool_call_id !== 'c' ? { ...msg, content: MARKER } : msg));
    const turn = await run(version, [...cleared, u('now the lexer')], { content: 'ok', finish_reason: 'stop' }, explicitId);
    // And the next request, sent as the client now holds its history.
    const again = await run(version, [...cleared, u('now the lexer'), { role: 'assistant', content: 'ok' }, u('and the tests')], { content: 'done', finish_reason: 'stop' }, explicitId);
    const events = (await store.read(first!.session.id)).events;
    return { first: first!, turn, again, added: events.slice(before), events };
  }

  for (const explicitId of ['conv-1', undefined]) {
    it(`window-v4, ${explicitId === undefined ? 'found by prefix' : 'named by an id'}: the same session, no rewrite, the new message names the cleared entries, and the next request matches as sent`, async () => {
      const { first, turn, again, added, events } = await clearing('window-v4', explicitId);
      // The same session (read back when its first answer sent it out of memory: no tools, no id).
      expect(turn.session.id).toBe(first.session.id);
      expect(again.session).toBe(turn.session);
      expect(added.filter((e) => e.type === 'client.rewrite')).toEqual([]);
      const msgs = added.filter((e): e is EventOf<'client.msg'> => e.type === 'client.msg');
      expect(msgs.map((e) => e.msg)).toEqual([u('now the lexer'), u('and the tests')]);
      const results = events.filter((e): e is EventOf<'client.msg'> => e.type === 'client.msg' && e.msg.role === 'tool').map((e) => e.seq);
      expect(msgs[0]!.cleared).toEqual([{ text: MARKER, seqs: results.slice(0, 2) }]);
      expect(msgs[1]!.cleared).toBeUndefined();
      // The window still sends the log's copies: the upstream's cached bytes.
      const built = again.session.window.build({ route: 'm', model: 'm', origin: ORIGIN, params: {} });
      expect(built.request.messages.filter((x) => x.role === 'tool').map((x) => x.content)).toEqual(['a', 'b', 'c'].map((id) => result(id).content));
    });
  }

  it('window-v3: an append as well, with nothing new in the log', async () => {
    const { first, turn, added } = await clearing('window-v3', 'conv-3');
    expect(turn.session).toBe(first.session);
    expect(added.filter((e) => e.type === 'client.rewrite')).toEqual([]);
    expect(added.filter((e) => e.type === 'client.msg').map((e) => Object.keys(e).sort())).toEqual([
      ['msg', 'seq', 'ts', 'type'], ['msg', 'seq', 'ts', 'type'],
    ]);
  });
});
