import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import type { NeutralMessage, NeutralReply } from '../../src/core/types.js';
import { mergeCatalog, restoreReply } from '../../src/session/additions.js';
import { messageKey, chainHashes, chainStart, replyFingerprint } from '../../src/session/fingerprint.js';
import { PrefixIndex } from '../../src/session/prefix-index.js';
import { ClientView } from '../../src/session/view.js';

const TS = '2026-01-01T00:00:00.000Z';
const ORIGIN = { provider: 'p', model: 'm' };

/** A view folded from client messages and replies, in that order. */
function viewOf(items: (NeutralMessage | NeutralReply)[]): ClientView {
  const view = new ClientView();
  items.forEach((item, i) => {
    const seq = i + 1;
    const event: LogEvent = 'role' in item
      ? { seq, ts: TS, type: 'client.msg', msg: item }
      : { seq, ts: TS, type: 'llm.resp', req: seq, reply: item, origin: ORIGIN, timings: { total_ms: 1 } };
    view.apply(event);
  });
  return view;
}

const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const r = (text: string, thinking?: string): NeutralReply => ({ content: text, finish_reason: 'stop', ...(thinking === undefined ? {} : { thinking }) });
const hashesOf = (msgs: NeutralMessage[]) => chainHashes(chainStart(undefined, []), msgs.map(messageKey));
const asMsg = (x: NeutralReply): NeutralMessage => ({ role: 'assistant', content: x.content });

describe('PrefixIndex', () => {
  it('finds the session holding the longest prefix', () => {
    const index = new PrefixIndex();
    index.index('short', viewOf([u('1')]));
    index.index('long', viewOf([u('1'), r('a'), u('2')]));
    expect(index.longest(hashesOf([u('1'), asMsg(r('a')), u('2'), asMsg(r('b'))]))).toBe('long');
    expect(index.longest(hashesOf([u('other')]))).toBeUndefined();
    expect(index.matchLength('long', hashesOf([u('1'), asMsg(r('a')), u('x')]))).toBe(2);
    expect(index.matchLength('short', hashesOf([u('1'), asMsg(r('a'))]))).toBe(1);
    expect(index.matchLength('short', hashesOf([u('x')]))).toBe(0);
  });

  it('among sessions sharing the prefix, prefers one the request extends whole, then the latest', () => {
    const index = new PrefixIndex();
    index.index('a', viewOf([u('1'), r('a')]));
    index.index('b', viewOf([u('1'), r('a')]));
    const request = hashesOf([u('1'), asMsg(r('a')), u('next')]);
    expect(index.longest(request)).toBe('b');
    // b moves on: the next request with the same opening goes to a, which it extends whole.
    index.index('b', viewOf([u('1'), r('a'), u('b1'), r('rb')]));
    expect(index.longest(request)).toBe('a');
  });

  it('finds a session by the fingerprint of its latest reply', () => {
    const index = new PrefixIndex();
    index.index('s', viewOf([u('1'), r('first'), u('2'), r('latest')]));
    expect(index.byLatestReply(replyFingerprint(asMsg(r('latest')))!)).toBe('s');
    expect(index.byLatestReply(replyFingerprint(asMsg(r('first')))!)).toBeUndefined();
  });

  // The map held every reply's fingerprint a session ever had: it grew with each request served.
  it('holds one reply per session: the one before is forgotten as the session moves on', () => {
    const index = new PrefixIndex();
    const fp = (text: string) => replyFingerprint(asMsg(r(text)))!;
    index.index('s', viewOf([u('1'), r('first')]));
    index.index('t', viewOf([u('x'), r('shared')]));
    index.index('s', viewOf([u('1'), r('first'), u('2'), r('latest')]));
    expect(index.byLatestReply(fp('first'))).toBeUndefined();
    expect(index.byLatestReply(fp('latest'))).toBe('s');
    // A fork holding the same latest reply takes it over; the first session moving on leaves it with the fork.
    index.index('fork', viewOf([u('1'), r('first'), u('2'), r('latest')]));
    index.index('s', viewOf([u('1'), r('first'), u('2'), r('latest'), u('3'), r('third')]));
    expect(index.byLatestReply(fp('latest'))).toBe('fork');
    index.rememberReply(fp('later'), 't');
    expect(index.byLatestReply(fp('shared'))).toBeUndefined();
    index.forget('s', []);
    expect(index.byLatestReply(fp('third'))).toBeUndefined();
  });
});

describe('restoreReply', () => {
  const calls = [{ id: 'call_abc', name: 'f', arguments: '{"a":1,"b":2}' }];
  const view = viewOf([u('1'), { content: null, tool_calls: calls, thinking: 'why', finish_reason: 'tool_calls' }]);

  it('an echo with the same ids: the logged reply, its bytes and its thinking', () => {
    const echo: NeutralMessage = { role: 'assistant', content: '', tool_calls: [{ id: 'call_abc', name: 'f', arguments: '{"b":2,"a":1}' }] };
    expect(restoreReply(view, echo)).toEqual({ role: 'assistant', content: null, tool_calls: calls, thinking: 'why' });
  });

  it('an echo with ids the client rewrote: its own message, with the thinking', () => {
    const echo: NeutralMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'f', arguments: '{"b":2,"a":1}' }] };
    expect(restoreReply(view, echo)).toEqual({ ...echo, thinking: 'why' });
  });

  it('anything else is left as it is', () => {
    const other: NeutralMessage = { role: 'assistant', content: 'something the client wrote' };
    expect(restoreReply(view, other)).toBe(other);
    expect(restoreReply(view, u('1'))).toEqual(u('1'));
  });
});

describe('mergeCatalog', () => {
  const tool = (name: string, description: string) => ({ type: 'function' as const, function: { name, description } });

  it('keeps unchanged tools as first seen and in first-seen order; changed and new ones follow', () => {
    const current = [tool('a', 'A'), tool('b', 'B'), tool('c', 'C')];
    const merged = mergeCatalog(current, [tool('c', 'C'), tool('b', 'B2'), tool('d', 'D'), tool('a', 'A')]);
    expect(merged.map((t) => `${t.function.name}:${t.function.description}`)).toEqual(['a:A', 'c:C', 'b:B2', 'd:D']);
    expect(merged[0]).toBe(current[0]);
  });

  it('gives back the request\'s own array when the merge is that array, so sessions under one head share it', () => {
    const incoming = [tool('a', 'A'), tool('b', 'B')];
    expect(mergeCatalog([], incoming)).toBe(incoming);
    expect(mergeCatalog([tool('x', 'X')], incoming)).toBe(incoming);
    // An unchanged tool kept from the session's own catalog is its first serialisation: another array.
    const kept = mergeCatalog([tool('a', 'A')], incoming);
    expect(kept).not.toBe(incoming);
    expect(kept).toEqual(incoming);
  });

  it('a view that grew is indexed from where it was; one that was rewritten, again from its start', () => {
    const index = new PrefixIndex();
    const grown = [u('1'), r('a'), u('2')];
    index.index('s', viewOf([u('1')]));
    // Every prefix the session holds now is found, whichever way the index took to get there.
    index.index('s', viewOf(grown));
    expect(index.matchLength('s', hashesOf([u('1'), asMsg(r('a')), u('2')]))).toBe(3);
    // Rewritten: the same length, another opening. The new prefixes are found from the first.
    index.index('s', viewOf([u('x'), r('y'), u('z')]));
    expect(index.matchLength('s', hashesOf([u('x')]))).toBe(1);
    expect(index.longest(hashesOf([u('x'), asMsg(r('y')), u('z')]))).toBe('s');
  });

  it('costs a grown view its new entries only', () => {
    const index = new PrefixIndex();
    const items: (NeutralMessage | NeutralReply)[] = [];
    for (let i = 0; i < 200; i++) items.push(u(`q${i}`), r(`a${i}`));
    index.index('s', viewOf(items.slice(0, 398)));
    const view = viewOf(items);
    const hashes = view.hashes();
    // Count the positions read: a whole re-index reads all 400.
    let read = 0;
    const counting = new Proxy(hashes, { get: (t, k) => (typeof k === 'string' && /^[0-9]+$/.test(k) ? (read++, t[Number(k)]) : Reflect.get(t, k)) });
    index.index('s', { hashes: () => counting, latestReply: () => view.latestReply() } as unknown as ClientView);
    expect(read).toBeLessThan(10);
    expect(index.matchLength('s', hashes)).toBe(400);
  });
});

