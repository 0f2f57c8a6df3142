import { describe, expect, it } from 'vitest';
import type { NeutralMessage, ToolSpec } from '../../src/core/types.js';
import { canonicalMessage, catalogKey, chainHashes, chainStart, messageKey, NO_CATALOG_KEY, replyFingerprint } from '../../src/session/fingerprint.js';

const call = (id: string, args: string) => ({ id, name: 'read_file', arguments: args });

describe('canonicalMessage', () => {
  it('ignores the reasoning fields of an assistant message (thinking, opaque blocks)', () => {
    const plain: NeutralMessage = { role: 'assistant', content: 'answer', tool_calls: [call('c1', '{"path":"a"}')] };
    const withReasoning: NeutralMessage = {
      ...plain,
      thinking: 'I thought hard',
      blocks: [{ kind: 'anthropic.thinking', origin: { provider: 'p', model: 'm' }, data: { signature: 'sig' } }],
    };
    expect(canonicalMessage(withReasoning)).toBe(canonicalMessage(plain));
    expect(replyFingerprint(withReasoning)).toBe(replyFingerprint(plain));
  });

  it('treats null and empty content alike', () => {
    const a: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{}')] };
    const b: NeutralMessage = { role: 'assistant', content: '', tool_calls: [call('c1', '{}')] };
    expect(canonicalMessage(a)).toBe(canonicalMessage(b));
    expect(replyFingerprint(a)).toBe(replyFingerprint(b));
  });

  it('compares tool call arguments as JSON: key order and whitespace do not count, values do', () => {
    const a: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{"path":"a","lines":[1,2],"opt":{"x":1,"y":2}}')] };
    const b: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{ "opt": {"y":2, "x":1}, "lines": [1, 2], "path": "a" }')] };
    const c: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{"path":"b","lines":[1,2],"opt":{"x":1,"y":2}}')] };
    const d: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{"path":"a","lines":[2,1],"opt":{"x":1,"y":2}}')] };
    expect(canonicalMessage(a)).toBe(canonicalMessage(b));
    expect(canonicalMessage(a)).not.toBe(canonicalMessage(c));
    // Array order is data, not layout.
    expect(canonicalMessage(a)).not.toBe(canonicalMessage(d));
  });

  it('keeps arguments that are not JSON as text', () => {
    const a: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{not json')] };
    const b: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{not  json')] };
    expect(canonicalMessage(a)).not.toBe(canonicalMessage(b));
    expect(canonicalMessage(a)).toBe(canonicalMessage({ ...a }));
  });

  it('keeps arguments holding a number past the double range (1e400 parses as Infinity) as text, not a 500', () => {
    const a: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{"n":1e400}')] };
    const b: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '{"n": 1e400}')] };
    const c: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('c1', '-1e400')] };
    expect(canonicalMessage(a)).toContain(JSON.stringify('{"n":1e400}'));
    // Text, so layout counts here, as it does for arguments that are not JSON.
    expect(canonicalMessage(a)).not.toBe(canonicalMessage(b));
    expect(canonicalMessage(c)).toContain('"-1e400"');
    expect(replyFingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tells roles, texts, tool call ids and tool_call_id apart', () => {
    const msgs: NeutralMessage[] = [
      { role: 'user', content: 'x' },
      { role: 'system', content: 'x' },
      { role: 'assistant', content: 'x' },
      { role: 'tool', tool_call_id: 'c1', content: 'x' },
      { role: 'tool', tool_call_id: 'c2', content: 'x' },
      { role: 'user', content: 'y' },
      { role: 'assistant', content: null, tool_calls: [call('c1', '{}')] },
      { role: 'assistant', content: null, tool_calls: [call('c2', '{}')] },
    ];
    expect(new Set(msgs.map(canonicalMessage)).size).toBe(msgs.length);
  });

  it('reads a user message given as text parts as its text', () => {
    const parts: NeutralMessage = { role: 'user', content: [{ type: 'text', text: 'hello ' }, { type: 'text', text: 'world' }] };
    expect(canonicalMessage(parts)).toBe(canonicalMessage({ role: 'user', content: 'hello world' }));
    const image: NeutralMessage = { role: 'user', content: [{ type: 'image', sha256: 'ab', mime: 'image/png', tokens: 85 }] };
    const other: NeutralMessage = { role: 'user', content: [{ type: 'image', sha256: 'cd', mime: 'image/png', tokens: 85 }] };
    expect(canonicalMessage(image)).not.toBe(canonicalMessage(other));
  });
});

describe('replyFingerprint', () => {
  it('ignores tool call ids (clients rewrite them) but not names or arguments', () => {
    const a: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('call_long_id_1', '{"a":1,"b":2}')] };
    const b: NeutralMessage = { role: 'assistant', content: null, tool_calls: [call('short', '{"b":2,"a":1}')] };
    expect(replyFingerprint(a)).toBe(replyFingerprint(b));
    expect(canonicalMessage(a)).not.toBe(canonicalMessage(b));
    expect(replyFingerprint({ role: 'assistant', content: null, tool_calls: [{ ...call('x', '{"a":1,"b":2}'), name: 'other' }] })).not.toBe(replyFingerprint(a));
  });

  it('is undefined for anything but a non-empty assistant message', () => {
    expect(replyFingerprint({ role: 'user', content: 'x' })).toBeUndefined();
    expect(replyFingerprint({ role: 'assistant', content: '' })).toBeUndefined();
    expect(replyFingerprint({ role: 'assistant', content: null })).toBeUndefined();
    expect(replyFingerprint({ role: 'assistant', content: 'x' })).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('keys by the message object', () => {
  /** A message whose text counts how often it is read. */
  const counted = (role: 'user' | 'assistant', text: string) => {
    const reads = { n: 0 };
    const msg = { role } as Record<string, unknown>;
    Object.defineProperty(msg, 'content', { enumerable: true, get: () => (reads.n++, text) });
    return { msg: msg as unknown as NeutralMessage, reads };
  };

  it.each([
    ['a key', 'user', messageKey],
    ['a fingerprint', 'assistant', replyFingerprint],
  ] as const)('takes %s once per message object; an equal message of its own gets the same', (_, role, of) => {
    const message = counted(role, 'done');
    const value = of(message.msg);
    const reads = message.reads.n;
    expect(of(message.msg)).toBe(value);
    expect(message.reads.n).toBe(reads);
    expect(of({ role, content: 'done' } as NeutralMessage)).toBe(value);
  });

  it('an empty reply has no fingerprint, and the empty catalog its constant key', () => {
    expect(replyFingerprint({ role: 'assistant', content: '' })).toBeUndefined();
    expect(NO_CATALOG_KEY).toBe(catalogKey([]));
  });
});

describe('chain hashes', () => {
  const tool = (name: string, params: unknown): ToolSpec => ({ type: 'function', function: { name, parameters: params } });

  it('h0 does not change with tool order or a schema re-serialised with other key order', () => {
    const a = [tool('read', { type: 'object', properties: { path: { type: 'string' } } }), tool('list', { type: 'object' })];
    const b = [tool('list', { type: 'object' }), { type: 'function' as const, function: { parameters: { properties: { path: { type: 'string' } }, type: 'object' }, name: 'read' } }];
    expect(chainStart('sys', a)).toBe(chainStart('sys', b));
    expect(catalogKey(a)).toBe(catalogKey(b));
    expect(catalogKey(a)).not.toBe(catalogKey([a[0]!]));
    expect(chainStart('sys', a)).not.toBe(chainStart('sys2', a));
    expect(chainStart('sys', a)).not.toBe(chainStart('sys', [a[0]!]));
    expect(chainStart(undefined, [])).not.toBe(chainStart('', []));
  });

  it('each hash covers everything before it: one changed message changes it and every later one', () => {
    const h0 = chainStart('s', []);
    const one = chainHashes(h0, ['a', 'b', 'c']);
    const two = chainHashes(h0, ['a', 'B', 'c']);
    expect(one).toHaveLength(3);
    expect(one[0]).toBe(two[0]);
    expect(one[1]).not.toBe(two[1]);
    expect(one[2]).not.toBe(two[2]);
    // Incremental: continuing from h2 gives the same h3.
    expect(chainHashes(one[1]!, ['c'])[0]).toBe(one[2]);
  });
});
