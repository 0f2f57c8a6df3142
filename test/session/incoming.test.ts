import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { messageKey } from '../../src/session/fingerprint.js';
import fc from 'fast-check';
import { IncomingMessage, matchLength, sameMessage } from '../../src/session/incoming.js';
import { planRequest } from '../../src/session/plan.js';
import { redactDeep } from '../../src/log/redact.js';

const entry = (msg: NeutralMessage) => ({ msg, key: messageKey(msg) });

/** Counts how often a message's canonical key is asked for. */
class Counting extends IncomingMessage {
  reads = 0;
  override get key(): string {
    this.reads++;
    return super.key;
  }
}

describe('comparing incoming messages with the view', () => {
  it('decides equal strings without computing the canonical form', () => {
    const same = new Counting({ role: 'user', content: 'hello' });
    expect(sameMessage(entry({ role: 'user', content: 'hello' }), same)).toBe(true);
    expect(same.reads).toBe(0);
    const other = new Counting({ role: 'user', content: 'hello!' });
    expect(sameMessage(entry({ role: 'user', content: 'hello' }), other)).toBe(false);
    expect(other.reads).toBe(1);
  });

  it('decides equal content parts (the Responses and Anthropic wires) without computing the canonical form', () => {
    const parts = (text: string, sha = 'abc'): NeutralMessage => ({ role: 'user', content: [{ type: 'text', text }, { type: 'image', sha256: sha, mime: 'image/png', tokens: 85 }] });
    const same = new Counting(parts('hello'));
    expect(sameMessage(entry(parts('hello')), same)).toBe(true);
    expect(same.reads).toBe(0);
    for (const other of [parts('hello!'), parts('hello', 'abd'), { role: 'user', content: [{ type: 'text', text: 'hello' }] } as NeutralMessage]) {
      const incoming = new Counting(other);
      expect(sameMessage(entry(parts('hello')), incoming)).toBe(false);
      expect(incoming.reads).toBe(1);
    }
    // Parts against a string of the same text: not equal as they stand, equal canonically.
    const asString = new Counting({ role: 'user', content: 'hello' });
    expect(sameMessage(entry({ role: 'user', content: [{ type: 'text', text: 'hello' }] }), asString)).toBe(true);
    expect(asString.reads).toBe(1);
  });

  it('falls back to the canonical form where strings differ but the message is the same', () => {
    const logged: NeutralMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":1,"b":2}' }] };
    const echoed: NeutralMessage = { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'f', arguments: '{"b": 2, "a": 1}' }] };
    expect(sameMessage(entry(logged), new IncomingMessage(echoed))).toBe(true);
    expect(sameMessage(entry(logged), new IncomingMessage({ ...echoed, tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":2}' }] }))).toBe(false);
    expect(sameMessage(entry({ role: 'tool', tool_call_id: 'c1', content: 'x' }), new IncomingMessage({ role: 'tool', tool_call_id: 'c2', content: 'x' }))).toBe(false);
  });

  it('a reply whose arguments were not JSON, sent back repaired under the same calls, is the logged reply; nothing else is', () => {
    const call = (id: string, name: string, args: string) => ({ id, name, arguments: args });
    const logged: NeutralMessage = { role: 'assistant', content: 'Reading.', tool_calls: [call('c1', 'read', '{path:"a"}'), call('c2', 'ls', '{"dir":"."}')] };
    // What Cline sends back: the first call's arguments parsed leniently and serialised again.
    const repaired: NeutralMessage = { ...logged, tool_calls: [call('c1', 'read', '{"path":"a"}'), call('c2', 'ls', '{"dir":"."}')] };
    const e = entry(logged);
    expect(sameMessage(e, new IncomingMessage(repaired))).toBe(true);
    // Remembered as the client's copy: its next resend is compared as it stands.
    expect(e).toMatchObject({ sent: repaired });
    const unlike: NeutralMessage[] = [
      { ...repaired, tool_calls: [call('c9', 'read', '{"path":"a"}'), call('c2', 'ls', '{"dir":"."}')] },
      { ...repaired, tool_calls: [call('c1', 'cat', '{"path":"a"}'), call('c2', 'ls', '{"dir":"."}')] },
      { ...repaired, content: 'Reading it.' },
      // A call whose logged arguments were JSON is compared as any: its edit is an edit.
      { ...repaired, tool_calls: [call('c1', 'read', '{"path":"a"}'), call('c2', 'ls', '{"dir":"/"}')] },
      { ...repaired, tool_calls: [call('c1', 'read', '{"path":"a"}')] },
    ];
    for (const other of unlike) expect(sameMessage(entry(logged), new IncomingMessage(other)), JSON.stringify(other)).toBe(false);
    // Every argument JSON in the log: only canonical equality counts, as before.
    const valid: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', 'read', '{"path":"a"}')] };
    expect(sameMessage(entry(valid), new IncomingMessage({ ...valid, tool_calls: [call('c1', 'read', '{"path":"b"}')] }))).toBe(false);
    // The text is compared as the log holds it: a credential the log removed from it is the same text.
    const secret = 'sk-proj-' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0';
    const withKey: NeutralMessage = { role: 'assistant', content: `Using ${secret}.`, tool_calls: [call('c1', 'read', '{path:"a"}')] };
    const loggedKey = redactDeep(withKey).value;
    expect(loggedKey.content).not.toContain(secret);
    expect(sameMessage(entry(loggedKey), new IncomingMessage({ ...withKey, tool_calls: [call('c1', 'read', '{"path":"a"}')] }))).toBe(true);
  });

  it('a request resending a repaired reply extends the session: planned as an append, not a fork', () => {
    const view = [
      entry({ role: 'user', content: 'go' }),
      entry({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{path:"a"}' }] }),
      entry({ role: 'tool', tool_call_id: 'c1', content: 'A' }),
    ].map((e, i) => ({ ...e, seq: i + 2 }));
    const incoming = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }] },
      { role: 'tool', tool_call_id: 'c1', content: 'A' },
      { role: 'user', content: 'next' },
    ].map((m) => new IncomingMessage(m as NeutralMessage));
    expect(planRequest(view, incoming, { explicit: false, clientDrops: 'follow' })).toEqual({ kind: 'append', from: 3 });
  });

  it('matchLength counts the leading messages the view holds', () => {
    const view = [entry({ role: 'user', content: 'a' }), entry({ role: 'assistant', content: 'b' }), entry({ role: 'user', content: 'c' })];
    const req = (...texts: [string, string][]) => texts.map(([role, content]) => new IncomingMessage({ role, content } as NeutralMessage));
    expect(matchLength(view, req(['user', 'a'], ['assistant', 'b'], ['user', 'c'], ['user', 'd']))).toBe(3);
    expect(matchLength(view, req(['user', 'a'], ['assistant', 'B']))).toBe(1);
    expect(matchLength(view, [])).toBe(0);
  });
});

describe('a request compared twice with its session (locator, then plan)', () => {
  /** An incoming message with no text to compare, so each comparison reads its key once. */
  const counted = (keys: string[]) => {
    let reads = 0;
    const list = keys.map((k) => ({ get key() { reads++; return k; } }));
    return { list, reads: () => reads };
  };
  const view = (n: number, tag = '') => Array.from({ length: n }, (_, i) => ({ seq: i + 1, msg: { role: 'user' as const, content: `${tag}${i}` }, key: `k${i}` }));

  it('compares each message once while the view keeps the entries compared', () => {
    const v = view(100);
    const inc = counted([...v.map((e) => e.key), 'new']);
    expect(matchLength(v, inc.list)).toBe(100);
    expect(inc.reads()).toBe(100);
    expect(planRequest(v, inc.list, { explicit: false, clientDrops: 'follow' })).toEqual({ kind: 'append', from: 100 });
    expect(inc.reads()).toBe(100);
    // The view grew meanwhile (a turn before this one): only the new entry is compared.
    v.push({ seq: 101, msg: { role: 'user', content: 'new' }, key: 'new' });
    expect(matchLength(v, inc.list)).toBe(101);
    expect(inc.reads()).toBe(101);
  });

  it('compares again from the start once an entry it vouched for has left', () => {
    const v = view(10);
    const inc = counted(v.map((e) => e.key));
    expect(matchLength(v, inc.list)).toBe(10);
    // A rewrite: the view is cut at 4 and refilled with other entries under the same keys.
    v.length = 4;
    v.push(...view(10, 'other ').slice(4));
    const before = inc.reads();
    expect(matchLength(v, inc.list)).toBe(10);
    expect(inc.reads() - before).toBe(10);
    // Cut below what was compared and refilled with entries that differ: the match stops there.
    v.length = 2;
    v.push({ seq: 3, msg: { role: 'user', content: 'x' }, key: 'x' });
    expect(matchLength(v, inc.list)).toBe(2);
  });

  it('gives what a fresh comparison gives, whatever the view went through (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('cut', 'push', 'match'), fc.nat(12)), { maxLength: 40 }), (ops) => {
        const v = view(12);
        const keys = v.map((e) => e.key);
        const inc = counted(keys);
        for (const [op, n] of ops) {
          if (op === 'cut') v.length = Math.min(v.length, n);
          else if (op === 'push') v.push({ seq: v.length + 1, msg: { role: 'user', content: `p${n}` }, key: n % 2 === 0 ? `k${v.length}` : `p${n}` });
          const fresh = counted(keys);
          expect(matchLength(v, inc.list)).toBe(matchLength(v, fresh.list));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('the key of a request\'s first message', () => {
  it('is the key of the message as logged, kept by role and text: a credential in it is keyed redacted, every time', () => {
    const secret = 'sk-proj-' + 'A1b2C3d4E5f6G7h8'.repeat(3);
    const text = `context files follow. OPENAI_API_KEY=${secret}\n` + 'more context '.repeat(2000);
    const asLogged = messageKey(redactDeep({ role: 'user', content: text }).value as NeutralMessage);
    expect(asLogged).not.toBe(messageKey({ role: 'user', content: text }));
    // First computed, then found by its text (a new object each time, as each request parses it):
    // the later ones are not redacted again.
    class Redacting extends IncomingMessage {
      redactions = 0;
      override get logged(): NeutralMessage {
        this.redactions++;
        return super.logged;
      }
    }
    const requests = [0, 1, 2].map(() => new Redacting({ role: 'user', content: `${text} ` }));
    for (const m of requests) expect(m.openerKey).toBe(messageKey(redactDeep({ role: 'user', content: `${text} ` }).value as NeutralMessage));
    expect(requests.map((m) => m.redactions)).toEqual([1, 0, 0]);
    expect(new IncomingMessage({ role: 'user', content: text.slice(0) }).openerKey).toBe(asLogged);
    // The same text under another role is another message; content parts are keyed as before.
    expect(new IncomingMessage({ role: 'system', content: text }).openerKey).toBe(messageKey(redactDeep({ role: 'system', content: text }).value as NeutralMessage));
    const parts: NeutralMessage = { role: 'user', content: [{ type: 'text', text }] };
    expect(new IncomingMessage(parts).openerKey).toBe(messageKey(redactDeep(parts).value as NeutralMessage));
    expect(new IncomingMessage(parts).key).toBe(new IncomingMessage(parts).openerKey);
  });
});
