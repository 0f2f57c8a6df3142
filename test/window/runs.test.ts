/**
 * window-v2: adjacent elided replies render as one placeholder naming their span.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { estimateMessageTokens } from '../../src/core/estimate.js';
import type { Recipe, WindowVersion } from '../../src/core/events.js';
import type { NeutralMessage } from '../../src/core/types.js';
import { buildAt, firstDifference, foldEvents } from '../../src/window/index.js';
import { checkPairs } from './checks.js';
import { ORIGIN_A, smallRecipe } from './gen-session.js';
import { contents, LogBuilder } from './log-builder.js';

const big = (n: number) => 'x'.repeat(n * 3); // n tokens
const V2: Partial<Recipe> = { version: 'window-v2' };
const text = (m: NeutralMessage): string => (typeof m.content === 'string' ? m.content : '');

/** Two user turns of tool rounds and a reply, then a request that elides all it may. */
function twoTurns(version: WindowVersion) {
  const log = new LogBuilder({ version, high_water: 400, low_water: 10, max_result_tokens: 10_000, protected_entries: 2 });
  const seqs: Record<string, number> = {};
  log.user('u1');
  seqs.a1 = log.reply({ calls: ['c1'], content: big(80) });
  seqs.t1 = log.tool('c1', big(80));
  seqs.a2 = log.reply({ calls: ['c2', 'c3'], content: null });
  seqs.t2 = log.tool('c2', big(80));
  seqs.t3 = log.tool('c3', big(80));
  seqs.a3 = log.reply({ content: big(80) });
  log.user('u2');
  seqs.a4 = log.reply({ calls: ['c4'], content: big(80) });
  seqs.t4 = log.tool('c4', big(80));
  log.user('u3');
  log.reply({ content: 'short' });
  return { log, seqs, r: log.send() };
}

describe('merged placeholders (window-v2)', () => {
  it('renders a run of elided replies as one assistant placeholder; a run of one keeps [elided seq=N]; a user message ends a run', () => {
    const v2 = twoTurns('window-v2');
    const v1 = twoTurns('window-v1');
    const { a1, a3, a4 } = v2.seqs;
    expect(v2.r.trimmed).toBe(true);
    // The same entries leave under both versions; only their placeholders differ.
    expect(v2.r.elided).toEqual(v1.r.elided);
    expect(v2.r.elided).toEqual(Object.values(v2.seqs).sort((a, b) => a - b));
    expect(contents(v1.r)).toEqual(['u1', `[elided seq=${a1}]`, `[elided seq=${v1.seqs.a2}]`, `[elided seq=${a3}]`, 'u2', `[elided seq=${a4}]`, 'u3', 'short']);
    expect(contents(v2.r)).toEqual(['u1', `[elided seq=${a1}-${a3}]`, 'u2', `[elided seq=${a4}]`, 'u3', 'short']);
    expect(v2.r.request.messages[1]).toEqual({ role: 'assistant', content: `[elided seq=${a1}-${a3}]` });
    expect(v2.r.request.messages[3]).toEqual({ role: 'assistant', content: `[elided seq=${a4}]` });
    // The estimate is of the request as sent.
    const sum = (ms: typeof v2.r.request.messages) => ms.reduce((n, m) => n + estimateMessageTokens(m), 0);
    expect(v1.r.estTokens - v2.r.estTokens).toBe(sum(v1.r.request.messages) - sum(v2.r.request.messages));
    expect(v2.r.estTokens).toBeLessThan(v1.r.estTokens);
    expect(buildAt(v2.log.events, v2.r.seq).digest).toBe(v2.r.digest);
  });

  it('a reply or a tool result still shown ends a run', () => {
    const log = new LogBuilder(V2);
    log.user('u1');
    const a1 = log.reply({ content: 'one' });
    const a2 = log.reply({ calls: ['c2'], content: 'two' });
    const t2 = log.tool('c2', 'result two');
    const a3 = log.reply({ content: 'three' });
    const a4 = log.reply({ content: 'four' });
    const a5 = log.reply({ content: 'five' });
    log.user('u2');
    // Elisions the log recorded (the log is the truth): the batch stays, its result is elided in place.
    log.add({ type: 'llm.req', digest: 'x', recipe_version: 'window-v2', route: 'r', model: 'm', origin: ORIGIN_A, params: {}, elided: [a1, t2, a3, a5], est_tokens: 0 });
    const r = log.peek();
    expect(r.trimmed).toBe(false);
    expect(r.request.messages).toEqual([
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: `[elided seq=${a1}]` },
      { role: 'assistant', content: 'two', tool_calls: [{ id: 'c2', name: 'read', arguments: '{"id":"c2"}' }] },
      { role: 'tool', tool_call_id: 'c2', content: `[elided seq=${t2}]` },
      { role: 'assistant', content: `[elided seq=${a3}]` },
      { role: 'assistant', content: 'four' },
      { role: 'assistant', content: `[elided seq=${a5}]` },
      { role: 'user', content: 'u2' },
    ]);
    expect([a2, a4]).toEqual([a1 + 1, a3 + 1]);
  });

  it('keeps tool-call pairs whole across merged runs, with orphans and a summary about', () => {
    const log = new LogBuilder({ ...V2, high_water: 300, low_water: 20, max_result_tokens: 10_000, protected_entries: 3 });
    log.user('u1');
    const a = log.reply({ calls: ['a', 'b'], content: null });
    log.tool('a', big(60));
    log.tool('zz', 'orphan');
    log.tool('b', big(60));
    log.reply({ content: big(60) });
    log.tool('yy', 'orphan after a reply without calls');
    const c = log.reply({ calls: ['c'], content: big(10) });
    log.tool('c', big(60));
    const summarised = log.reply({ content: big(60) });
    const d = log.reply({ calls: ['d'], content: null });
    log.tool('d', big(60));
    log.user('u2');
    log.reply({ content: 'e' });
    log.user('u3');
    log.add({ type: 'summary.add', from: summarised, to: summarised, text: 'S', source_digest: 'd' });
    log.reply({ calls: ['f'], content: null });
    log.tool('f', big(5));
    log.user('u4');
    const r = log.send();
    expect(r.trimmed).toBe(true);
    // The summary splits the elided replies in two runs; the last round is protected.
    expect(contents(r)).toEqual(['u1', `[elided seq=${a}-${c}]`, 'S', `[elided seq=${d}]`, 'u2', 'e', 'u3', null, big(5), 'u4']);
    const session = { events: log.events, requests: [{ seq: r.seq, input: { route: 'r', model: 'm', origin: ORIGIN_A, params: {} }, result: r, partial: false }] };
    expect(checkPairs(session)).toBe(1);
    expect(foldEvents(log.events).build({ route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {} }).request).toEqual(log.peek().request);
  });

  it('a later trim changes the request first at the run it extends; between trims the bytes hold', () => {
    const log = new LogBuilder({ ...V2, high_water: 900, low_water: 450, max_result_tokens: 10_000, protected_entries: 4 });
    log.user('task');
    let prev = log.send();
    let extended = 0;
    let appends = 0;
    for (let i = 0; i < 60; i++) {
      log.reply({ calls: [`c${i}`], content: `step ${i}` });
      log.tool(`c${i}`, big(40 + (i % 5) * 10));
      const next = log.send();
      const diff = firstDifference(prev.request, next.request, log.events.filter((e) => e.seq > prev.seq && e.seq < next.seq));
      if (!next.trimmed) {
        expect(diff?.cause).toBe('none');
        expect(canonicalJson(next.request.messages).startsWith(canonicalJson(prev.request.messages).slice(0, -1))).toBe(true);
        appends++;
      } else {
        expect(diff?.cause).toBe('trim');
        const before = text(prev.request.messages[diff!.index]!);
        const after = text(next.request.messages[diff!.index]!);
        const grew = /^\[elided seq=(\d+)(?:-(\d+))?\]$/.exec(before);
        if (grew !== null) {
          // The run kept its first seq and now names a later last one.
          const now = new RegExp(`^\\[elided seq=${grew[1]}-(\\d+)\\]$`).exec(after);
          expect(now, `${before} -> ${after}`).not.toBeNull();
          expect(Number(now![1])).toBeGreaterThan(Number(grew[2] ?? grew[1]));
          extended++;
        }
        expect(next.request.messages.slice(0, diff!.index)).toEqual(prev.request.messages.slice(0, diff!.index));
      }
      prev = next;
    }
    expect(extended).toBeGreaterThan(3);
    expect(appends).toBeGreaterThan(30);
    // One user turn: its elided rounds stay one message however many trims there were.
    expect(prev.request.messages.filter((m) => m.role === 'assistant' && m.content?.startsWith('[elided'))).toHaveLength(1);
  });

  it('a trim elides no more than it needs: joining a run costs only the longer name', () => {
    const log = new LogBuilder({ ...V2, high_water: 900, low_water: 450, max_result_tokens: 10_000, protected_entries: 4 });
    log.user('task');
    const replies = new Set<number>();
    const trims: { seq: number; elided: number[]; est: number }[] = [];
    for (let i = 0; i < 60; i++) {
      replies.add(log.reply({ calls: [`c${i}`], content: `step ${i}` }));
      log.tool(`c${i}`, big(40 + (i % 7) * 10));
      const r = log.send();
      if (r.trimmed) trims.push({ seq: r.seq, elided: r.elided, est: r.estTokens });
    }
    let joined = 0;
    for (const t of trims) {
      expect(t.est).toBeLessThanOrEqual(450);
      // The trim's last step: its newest reply (results were elided in place before any reply).
      const lastReply = Math.max(...t.elided.filter((seq) => replies.has(seq)));
      const last = lastReply > 0 ? lastReply : Math.max(...t.elided);
      if (lastReply > 0) joined++;
      const fewer = t.elided.filter((seq) => seq !== last);
      const before = log.events.filter((e) => e.seq < t.seq);
      const state = foldEvents([...before, { type: 'llm.req', digest: 'x', recipe_version: 'window-v2', route: 'r', model: 'm', origin: ORIGIN_A, params: {}, elided: fewer, est_tokens: 0, seq: t.seq, ts: 't' }]);
      const without = state.build({ route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {} });
      expect(without.trimmed).toBe(false);
      expect(without.estTokens, `trim at seq ${t.seq} without seq ${last}`).toBeGreaterThan(450);
    }
    expect(joined).toBeGreaterThan(3);
  });

  it('a resume under window-v2 merges the runs of a window-v1 session, and replies after the first elision lose their blocks', () => {
    const log = new LogBuilder({ high_water: 400, low_water: 100, max_result_tokens: 10_000, protected_entries: 2 });
    log.user('u1');
    const a1 = log.reply({ calls: ['c1'], content: big(100) });
    log.tool('c1', big(100));
    const a2 = log.reply({ calls: ['c2'], content: big(100) });
    log.tool('c2', big(100));
    log.reply({ content: 'done' });
    log.user('u2');
    const trim = log.send();
    expect(contents(trim)).toEqual(['u1', `[elided seq=${a1}]`, `[elided seq=${a2}]`, 'done', 'u2']);
    log.reply({ content: 'kept', blocks: true });
    log.user('u3');
    const v1 = log.send();
    // Made after the elision: its block goes back.
    expect(v1.request.messages[5]).toHaveProperty('blocks');
    log.add({ type: 'session.resume', recipe: smallRecipe({ version: 'window-v2', high_water: 400, low_water: 100, max_result_tokens: 10_000, protected_entries: 2 }) });
    const v2 = log.send();
    expect(v2.trimmed).toBe(false);
    expect(contents(v2)).toEqual(['u1', `[elided seq=${a1}-${a2}]`, 'done', 'u2', 'kept', 'u3']);
    // Its prefix changed at the run: a provider would refuse the signed block now.
    expect(v2.request.messages[4]).not.toHaveProperty('blocks');
    for (const r of [trim, v1, v2]) expect(buildAt(log.events, r.seq).digest).toBe(r.digest);
  });

  it('a run at the end of the window is extended by a later build exactly as a fresh fold renders it', () => {
    const log = new LogBuilder({ ...V2, protected_entries: 0 });
    log.user('u1');
    const a1 = log.reply({ content: 'one' });
    const a2 = log.reply({ content: 'two' });
    log.add({ type: 'llm.req', digest: 'x', recipe_version: 'window-v2', route: 'r', model: 'm', origin: ORIGIN_A, params: {}, elided: [a1, a2], est_tokens: 0 });
    expect(contents(log.peek())).toEqual(['u1', `[elided seq=${a1}-${a2}]`]);
    log.tool('zz', 'an orphan: shown nowhere');
    expect(contents(log.peek())).toEqual(['u1', `[elided seq=${a1}-${a2}]`]);
    // A resent entry that was elided comes back elided as it is appended, and joins the run.
    const again = log.add({ type: 'client.msg', msg: { role: 'assistant', content: 'two' }, elided_as: a2 }).seq;
    const fresh = () => foldEvents(log.events).build({ route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {} });
    expect(contents(log.peek())).toEqual(['u1', `[elided seq=${a1}-${again}]`]);
    expect(log.peek()).toEqual(fresh());
    log.user('u2');
    expect(contents(log.peek())).toEqual(['u1', `[elided seq=${a1}-${again}]`, 'u2']);
    expect(log.peek()).toEqual(fresh());
  });
});
