import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { messageKey } from '../../src/session/fingerprint.js';
import { IncomingMessage, matchLength, sameMessage } from '../../src/session/incoming.js';

const entry = (msg: NeutralMessage) => ({ msg, key: messageKey(msg) });

describe('comparing incoming messages with the view', () => {
  it('decides equal strings without computing the canonical form', () => {
    class Counting extends IncomingMessage {
      reads = 0;
      override get key(): string {
        this.reads++;
        return super.key;
      }
    }
    const same = new Counting({ role: 'user', content: 'hello' });
    expect(sameMessage(entry({ role: 'user', content: 'hello' }), same)).toBe(true);
    expect(same.reads).toBe(0);
    const other = new Counting({ role: 'user', content: 'hello!' });
    expect(sameMessage(entry({ role: 'user', content: 'hello' }), other)).toBe(false);
    expect(other.reads).toBe(1);
  });

  it('falls back to the canonical form where strings differ but the message is the same', () => {
    const logged: NeutralMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":1,"b":2}' }] };
    const echoed: NeutralMessage = { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'f', arguments: '{"b": 2, "a": 1}' }] };
    expect(sameMessage(entry(logged), new IncomingMessage(echoed))).toBe(true);
    expect(sameMessage(entry(logged), new IncomingMessage({ ...echoed, tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":2}' }] }))).toBe(false);
    expect(sameMessage(entry({ role: 'tool', tool_call_id: 'c1', content: 'x' }), new IncomingMessage({ role: 'tool', tool_call_id: 'c2', content: 'x' }))).toBe(false);
  });

  it('matchLength counts the leading messages the view holds', () => {
    const view = [entry({ role: 'user', content: 'a' }), entry({ role: 'assistant', content: 'b' }), entry({ role: 'user', content: 'c' })];
    const req = (...texts: [string, string][]) => texts.map(([role, content]) => new IncomingMessage({ role, content } as NeutralMessage));
    expect(matchLength(view, req(['user', 'a'], ['assistant', 'b'], ['user', 'c'], ['user', 'd']))).toBe(3);
    expect(matchLength(view, req(['user', 'a'], ['assistant', 'B']))).toBe(1);
    expect(matchLength(view, [])).toBe(0);
  });
});
