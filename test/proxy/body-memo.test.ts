/**
 * Client bodies parsed past what an earlier body shares: whatever the client does between
 * requests (appends, edits deep in the history, truncations, other spacing, other key order,
 * repeated keys, invalid JSON), the value is JSON.parse's of the whole body, key order included,
 * and an error is JSON.parse's own.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayLayout } from '../../src/core/json-scan.js';
import { expectParsedAsJson } from './parsed-as-json.js';
import { BodyMemo } from '../../src/proxy/body-memo.js';

/** Past the memo's lower bound, so every body here takes the shortcut's path. */
const SYSTEM = { role: 'system', content: `You are an agent. ${'Follow the rules. '.repeat(15000)}` };

/** Texts that a scanner could mistake for structure. */
const tricky = fc.constantFrom('"', '\\', '\\"', '],"x":[', '},{', ',', '\u0000', 'é', '😀', '\n', '[[', '"]', '\\\\"', '{"messages":[1]}');
const text = fc.array(fc.oneof(fc.string(), tricky), { maxLength: 4 }).map((xs) => xs.join(''));
const message: fc.Arbitrary<unknown> = fc.oneof<fc.Arbitrary<unknown>[]>(
  fc.record({ role: fc.constant('user'), content: text }),
  fc.record({ role: fc.constant('assistant'), content: fc.constant(null), tool_calls: fc.array(fc.record({ id: text, type: fc.constant('function'), function: fc.record({ name: text, arguments: text }) }), { minLength: 1, maxLength: 2 }) }),
  fc.record({ role: fc.constant('tool'), tool_call_id: text, content: fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 }) }),
  fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 })),
);

type Step =
  | { kind: 'append'; messages: unknown[] }
  | { kind: 'edit'; at: number; message: unknown }
  | { kind: 'truncate'; to: number }
  | { kind: 'param'; value: unknown }
  | { kind: 'spacing'; indent: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), messages: fc.array(message, { minLength: 0, maxLength: 3 }) }) },
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), message }),
  fc.record({ kind: fc.constant('truncate' as const), to: fc.nat() }),
  fc.record({ kind: fc.constant('param' as const), value: fc.oneof(fc.integer(), text, fc.constant(undefined)) }),
  fc.record({ kind: fc.constant('spacing' as const), indent: fc.constantFrom(0, 0, 1, 2) }),
);

/** Top-level key orders a client may use: the list first, last or between. */
const orders: fc.Arbitrary<readonly string[]> = fc.constantFrom<readonly string[]>(
  ['model', 'messages', 'stream', 'temperature'],
  ['messages', 'model', 'temperature', 'stream'],
  ['model', 'stream', 'temperature', 'messages'],
);

function bodyOf(order: readonly string[], state: { messages: unknown[]; param: unknown }, indent: number): Buffer {
  const fields: Record<string, unknown> = { model: 'm', messages: state.messages, stream: true, temperature: state.param };
  const obj: Record<string, unknown> = {};
  for (const k of order) obj[k] = fields[k];
  return Buffer.from(JSON.stringify(obj, null, indent));
}

function expectSame(memo: BodyMemo, body: Buffer): unknown {
  return expectParsedAsJson((b) => memo.parse(b, 'messages'), body);
}

describe('BodyMemo', () => {
  it('gives JSON.parse of the whole body whatever the client does between requests', () => {
    fc.assert(
      // 600 KB: two bodies at most, so the arena is written round and over what is kept.
      fc.property(orders, fc.array(message, { maxLength: 4 }), fc.array(step, { minLength: 1, maxLength: 12 }), fc.constantFrom(1 << 21, 600 * 1024), (order, first, steps, bound) => {
        const memo = new BodyMemo(bound);
        const state: { messages: unknown[]; param: unknown } = { messages: [SYSTEM, ...first], param: 0.5 };
        let indent = 0;
        expectSame(memo, bodyOf(order, state, indent));
        for (const s of steps) {
          if (s.kind === 'append') state.messages = [...state.messages, ...s.messages];
          else if (s.kind === 'edit') state.messages = state.messages.map((m, i) => (i === s.at % state.messages.length ? s.message : m));
          else if (s.kind === 'truncate') state.messages = state.messages.slice(0, Math.max(1, s.to % (state.messages.length + 1)));
          else if (s.kind === 'param') state.param = s.value;
          else indent = s.indent;
          expectSame(memo, bodyOf(order, state, indent));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('takes the shared messages from the earlier body and parses only the new ones', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }];
    const first = memo.parse(bodyOf(['model', 'messages'], { messages, param: 1 }, 0), 'messages') as { messages: unknown[] };
    messages.push({ role: 'assistant', content: 'two' }, { role: 'user', content: 'three' });
    const second = memo.parse(bodyOf(['model', 'messages'], { messages, param: 1 }, 0), 'messages') as { messages: unknown[] };
    expect(second.messages).toHaveLength(4);
    expect(second.messages[0]).toBe(first.messages[0]);
    expect(second.messages[1]).toBe(first.messages[1]);
    // Shared between requests, so nothing may change them in place.
    expect(Object.isFrozen(second.messages[3])).toBe(true);
    expect(() => {
      (second.messages[1] as { content: string }).content = 'changed';
    }).toThrow(TypeError);
  });

  it('a conversation that shares only the prompt with a kept body leaves that body kept', () => {
    const memo = new BodyMemo(1 << 21);
    // The same first messages, then each its own: the second borrows the first's prompt.
    const a: unknown[] = [SYSTEM, { role: 'user', content: 'same start' }, { role: 'assistant', content: 'same reply' }, { role: 'user', content: 'task a' }];
    const b: unknown[] = [SYSTEM, { role: 'user', content: 'same start' }, { role: 'assistant', content: 'same reply' }, { role: 'user', content: 'task b' }];
    const firstA = memo.parse(bodyOf(['model', 'messages'], { messages: a, param: 1 }, 0), 'messages') as { messages: unknown[] };
    const firstB = memo.parse(bodyOf(['model', 'messages'], { messages: b, param: 1 }, 0), 'messages') as { messages: unknown[] };
    expect(firstB.messages[0]).toBe(firstA.messages[0]);
    a.push({ role: 'assistant', content: 'on a' });
    const nextA = memo.parse(bodyOf(['model', 'messages'], { messages: a, param: 1 }, 0), 'messages') as { messages: unknown[] };
    expect(nextA.messages[3]).toBe(firstA.messages[3]);
  });

  it('conversations under one system prompt, interleaved, each find their own earlier body', () => {
    const memo = new BodyMemo(1 << 23);
    const histories = Array.from({ length: 10 }, (_, c) => [SYSTEM, { role: 'user', content: `task ${c}` }, { role: 'assistant', content: `plan ${c}` }]);
    const firsts = histories.map((messages) => memo.parse(bodyOf(['model', 'messages'], { messages, param: 1 }, 0), 'messages') as { messages: unknown[] });
    histories.forEach((messages, c) => {
      messages.push({ role: 'user', content: `go on ${c}` });
      const next = memo.parse(bodyOf(['model', 'messages'], { messages, param: 1 }, 0), 'messages') as { messages: unknown[] };
      expect(next.messages[1]).toBe(firsts[c]!.messages[1]);
      expect(next.messages[2]).toBe(firsts[c]!.messages[2]);
      expect(next.messages[3]).toEqual({ role: 'user', content: `go on ${c}` });
    });
  });

  it('what the caller does to the body object it got does not reach the next request', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }];
    const first = memo.parse(bodyOf(['model', 'messages', 'stream'], { messages, param: 1 }, 0), 'messages') as Record<string, unknown>;
    first.model = 'changed';
    delete first.stream;
    // A kept body's members are frozen, the first one's (parsed whole) too.
    expect(() => (first.messages as unknown[]).push('x')).toThrow(TypeError);
    expect(Object.isFrozen((first.messages as object[])[1])).toBe(true);
    messages.push({ role: 'assistant', content: 'two' });
    const second = memo.parse(bodyOf(['model', 'messages', 'stream'], { messages, param: 1 }, 0), 'messages') as Record<string, unknown>;
    expect(second).toEqual({ model: 'm', messages, stream: true });
    expect(() => (second.messages as unknown[]).push('x')).toThrow(TypeError);
    second.model = 'changed again';
    messages.push({ role: 'user', content: 'three' });
    expect(memo.parse(bodyOf(['model', 'messages', 'stream'], { messages, param: 1 }, 0), 'messages')).toEqual({ model: 'm', messages, stream: true });
  });

  it('takes the members after the list as they were when their bytes repeat (tools after the messages), and parses them when not', () => {
    const memo = new BodyMemo(1 << 21);
    const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }];
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }];
    const body = (extra: Record<string, unknown> = {}) => Buffer.from(JSON.stringify({ model: 'm', messages, tools, ...extra }));
    const seen: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      messages.push({ role: 'user', content: `turn ${i}` });
      const value = memo.parse(body(), 'messages') as Record<string, unknown>;
      expect(value).toEqual({ model: 'm', messages, tools });
      expect(Object.isFrozen(value.tools)).toBe(true);
      seen.push(value.tools);
    }
    // The first body is parsed whole and the second parses what follows its list; the third on take the second's.
    expect(seen[3]).toBe(seen[1]);
    expect(seen[2]).toBe(seen[1]);
    expect(seen[1]).not.toBe(seen[0]);
    messages.push({ role: 'user', content: 'changed tail' });
    const changed = memo.parse(body({ temperature: 0.5 }), 'messages') as Record<string, unknown>;
    expect(changed).toEqual({ model: 'm', messages, tools, temperature: 0.5 });
    expect(changed.tools).not.toBe(seen[3]);
  });

  it('leaves a body under its floor as JSON.parse gives it, not frozen', () => {
    const memo = new BodyMemo(1 << 21);
    const small = memo.parse(Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })), 'messages') as { messages: object[] };
    expect(Object.isFrozen(small.messages)).toBe(false);
    expect(Object.isFrozen(small.messages[0])).toBe(false);
    expect(memo.size).toBe(0);
  });

  it('a large body with an empty list is parsed, and not kept', () => {
    const memo = new BodyMemo(1 << 21);
    const body = Buffer.from(JSON.stringify({ model: 'm', tools: [SYSTEM], messages: [] }));
    expect(memo.parse(body, 'messages')).toEqual(JSON.parse(body.toString()));
    expect(memo.size).toBe(0);
    expect(memo.parse(body, 'messages')).toEqual(JSON.parse(body.toString()));
  });

  it('an edit deep in the history shares only what comes before it', () => {
    // (An edit among the first three messages is parsed whole: that is where conversations are told apart.)
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }, { role: 'assistant', content: 'd' }];
    const first = memo.parse(bodyOf(['messages', 'model'], { messages, param: 1 }, 0), 'messages') as { messages: unknown[] };
    const edited = [...messages.slice(0, 3), { role: 'user', content: 'C' }, ...messages.slice(4)];
    const second = memo.parse(bodyOf(['messages', 'model'], { messages: edited, param: 1 }, 0), 'messages') as { messages: unknown[] };
    expect(second.messages[2]).toBe(first.messages[2]);
    expect(second.messages[3]).not.toBe(first.messages[3]);
    expect(second.messages[3]).toEqual({ role: 'user', content: 'C' });
    expect(second.messages[4]).toEqual({ role: 'assistant', content: 'd' });
  });

  it('repeated keys, escaped key names and __proto__ read as JSON.parse reads them', () => {
    const head = `{"model":"m","messages":[${JSON.stringify(SYSTEM)},{"role":"user","content":"x"}`;
    const cases = [
      `${head}],"model":"again"}`,
      `${head}],"messages":[]}`,
      `${head},{"role":"user","content":"y"}],"m\\u006fdel":"escaped"}`,
      `${head},{"role":"user","content":"y"}],"__proto__":{"polluted":true}}`,
      `${head},{"role":"user","content":"y"}],"7":1,"stream":true}`,
      `${head},{"role":"user","content":"y"}] , "stream" : true }  `,
      `${head},{"role":"user","content":"y"}],"stream":true}garbage`,
      `${head},{"role":"user","content":"y}],"stream":true}`,
      `${head},{"role":"user","content":"y"},],"stream":true}`,
      `${head}{"role":"user","content":"y"}],"stream":true}`,
      `${head},{"role":"user","content":1e400}],"stream":true}`,
    ];
    for (const text of cases) {
      const memo = new BodyMemo(1 << 21);
      expectSame(memo, Buffer.from(`${head}]}`));
      expectSame(memo, Buffer.from(text));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it('what follows the list must be JSON too: a trailing comma, a missing comma or other spaces are JSON.parse errors', () => {
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }];
    const kept = Buffer.from(`{"model":"m","messages":${JSON.stringify(messages)},"stream":true}`);
    const next = JSON.stringify([...messages, { role: 'assistant', content: 'two' }]);
    for (const after of [',}', '"stream":true}', '\u00a0,"stream":true}', ',\u00a0"stream":true}', ', }']) {
      const memo = new BodyMemo(1 << 21);
      memo.parse(kept, 'messages');
      expectSame(memo, Buffer.from(`{"model":"m","messages":${next}${after}`));
    }
    const memo = new BodyMemo(1 << 21);
    memo.parse(kept, 'messages');
    expect(expectSame(memo, Buffer.from(`{"model":"m","messages":${next} \r\n\t, "stream" : false }`))).toMatchObject({ stream: false });
  });

  it('a kept body written over in its arena is not used again', () => {
    // Room for two ~270 KB bodies: the third conversation's body goes over the first's.
    const memo = new BodyMemo(600 * 1024);
    const histories = [0, 1, 2].map((c) => [SYSTEM, { role: 'user', content: `task ${c}` }, { role: 'assistant', content: `plan ${c}` }]);
    const firsts = histories.map((messages) => memo.parse(bodyOf(['model', 'messages'], { messages, param: 1 }, 0), 'messages') as { messages: unknown[] });
    const next = (c: number) => {
      histories[c]!.push({ role: 'user', content: `go on ${c}` });
      return memo.parse(bodyOf(['model', 'messages'], { messages: histories[c]!, param: 1 }, 0), 'messages') as { messages: unknown[] };
    };
    expect(next(2).messages[1]).toBe(firsts[2]!.messages[1]);
    const zero = next(0);
    expect(zero.messages[1]).not.toBe(firsts[0]!.messages[1]);
    expect(zero).toEqual(JSON.parse(bodyOf(['model', 'messages'], { messages: histories[0]!, param: 1 }, 0).toString()));
  });

  it('keeps within its bound in bytes and drops what is small', () => {
    const memo = new BodyMemo(700 * 1024);
    for (let i = 0; i < 20; i++) memo.parse(bodyOf(['model', 'messages'], { messages: [SYSTEM, { role: 'user', content: `conversation ${i}` }], param: 1 }, 0), 'messages');
    expect(memo.size).toBeGreaterThan(0);
    expect(memo.size).toBeLessThanOrEqual(700 * 1024);
    const small = new BodyMemo(1 << 21);
    small.parse(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}'), 'messages');
    expect(small.size).toBe(0);
  });
});

describe('arrayLayout', () => {
  it('finds where each element of the named list ends, whatever the spacing', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), fc.constantFrom(0, 1, 2), orders, (messages, indent, order) => {
        const body = bodyOf(order, { messages, param: 'p' }, indent);
        const layout = arrayLayout(body, 'messages');
        expect(layout).toBeDefined();
        expect(layout!.ends).toHaveLength(messages.length);
        expect(layout!.before).toEqual(order.slice(0, order.indexOf('messages')));
        let start = layout!.open;
        layout!.ends.forEach((end, i) => {
          const piece = body.toString('utf8', start, end).replace(/^[\s,]+/, '');
          // As JSON carries it (-0 reads back as 0).
          expect(JSON.parse(piece)).toEqual(JSON.parse(JSON.stringify(messages[i])));
          start = end;
        });
        expect(body[layout!.close]).toBe(0x5d);
      }),
      { numRuns: 200 },
    );
  });
});
