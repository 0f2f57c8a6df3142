/**
 * A client's repeated head parsed once: whatever bodies come (other heads, other conversations,
 * other spacing and key orders, repeated and unsafe keys, a number the head ends on, invalid
 * JSON), the value is JSON.parse's of the whole body, key order included, and an error is
 * JSON.parse's own; and a head met twice is taken as kept, not parsed again.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectParsedAsJson } from './parsed-as-json.js';
import { HeadMemo } from '../../src/proxy/head-memo.js';

/** Texts that a scanner could mistake for structure. */
const tricky = fc.constantFrom('"', '\\', '\\"', '],"x":[', '},{', ',', '\u0000', 'é', '😀', '\n', '[[', '"]', '\\\\"', '{"messages":[1]}', ']}', '.5');
const text = fc.array(fc.oneof(fc.string({ maxLength: 8 }), tricky), { maxLength: 4 }).map((xs) => xs.join(''));
const message: fc.Arbitrary<unknown> = fc.oneof<fc.Arbitrary<unknown>[]>(
  fc.record({ role: fc.constant('user'), content: text }),
  fc.record({ role: fc.constant('assistant'), content: fc.constant(null), tool_calls: fc.array(fc.record({ id: text, function: fc.record({ name: text, arguments: text }) }), { minLength: 1, maxLength: 2 }) }),
  fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
);

/** A catalogue of ~9 KB: past the memo's lower bound on its own. */
function toolsOf(variant: number, extra: string): unknown[] {
  return Array.from({ length: 12 }, (_, i) => ({ type: 'function', function: { name: `tool_${variant}_${i}`, description: `${extra}${'Reads a file. '.repeat(50)}`, parameters: { type: 'object', properties: { path: { type: 'string' } } } } }));
}
const SYSTEM = { role: 'system', content: `You are an agent. ${'Follow the rules. '.repeat(600)}` };

/** The top-level orders clients use: tools before the list (chat clients), after it (Claude Code, Codex), both. */
const orders = fc.constantFrom<readonly string[]>(
  ['model', 'tools', 'messages'],
  ['model', 'messages', 'tools', 'stream'],
  ['messages', 'tools'],
  ['tools', 'messages', 'metadata', 'tools'],
  ['model', 'messages', 'stream'],
  ['model', '__proto__', 'tools', 'messages', '7'],
  ['model', 'tools', 'messages', '__proto__'],
  // A member of each request's own after the shared ones (Codex's client_metadata), or between them.
  ['model', 'messages', 'tools', 'turn'],
  ['model', 'messages', 'tools', 'turn', 'tools'],
  ['model', 'messages', 'tools', 'stream', 'turn', '__proto__'],
  ['model', 'system', 'messages', 'tools', 'turn', 'messages'],
);

interface Shape {
  order: readonly string[];
  tools: unknown[];
  system: boolean;
  indent: number;
}

function bodyOf(shape: Shape, messages: readonly unknown[], turn = 0): Buffer {
  const list = shape.system ? [SYSTEM, ...messages] : [...messages];
  const parts = shape.order.map((k) => {
    const v = k === 'messages' ? list : k === 'tools' ? shape.tools : k === 'model' ? 'm' : k === 'stream' ? true : k === 'turn' ? { id: `turn-${turn}`, at: turn } : { user: 'u' };
    return `${JSON.stringify(k)}:${JSON.stringify(v, null, shape.indent)}`;
  });
  return Buffer.from(`{${parts.join(',')}}`);
}

function expectSame(memo: HeadMemo, body: Buffer): unknown {
  return expectParsedAsJson((b) => memo.parse(b, 'messages'), body);
}

/** What a body may have done to it on the way: nothing, or bytes that make it another body or no JSON. */
const damage = fc.oneof(
  { weight: 6, arbitrary: fc.constant<{ kind: 'none' }>({ kind: 'none' }) },
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.constantFrom('.5', 'e3', ',', ']', '}', ' ', '"', 'null', ',"messages":[]', ',"__proto__":{}', ',"0":1') }),
);

function damaged(body: Buffer, d: { kind: 'none' } | { kind: 'cut'; at: number } | { kind: 'insert'; at: number; bytes: string }): Buffer {
  if (d.kind === 'none') return body;
  const at = d.at % (body.length + 1);
  if (d.kind === 'cut') return body.subarray(0, at);
  return Buffer.concat([body.subarray(0, at), Buffer.from(d.bytes), body.subarray(at)]);
}

describe('HeadMemo', () => {
  it('gives JSON.parse of the whole body whatever bodies come', () => {
    const shape = fc.record({ order: orders, tools: fc.tuple(fc.nat(2), text).map(([v, t]) => toolsOf(v, t)), system: fc.boolean(), indent: fc.constantFrom(0, 0, 0, 1) });
    // Bodies whose head came from the memo (the same objects as an earlier body's): the path under test was taken.
    let fromMemo = 0;
    // Of them, bodies with a member of their own after the suffix.
    let withOwnMembers = 0;
    fc.assert(
      fc.property(fc.array(shape, { minLength: 1, maxLength: 3 }), fc.array(fc.tuple(fc.nat(), fc.array(message, { maxLength: 4 }), damage), { minLength: 2, maxLength: 14 }), (shapes, requests) => {
        const memo = new HeadMemo();
        const seen = new Set<unknown>();
        for (const [n, [which, messages, d]] of requests.entries()) {
          const got = expectSame(memo, damaged(bodyOf(shapes[which % shapes.length]!, messages, n), d)) as { tools?: unknown } | undefined;
          if (typeof got?.tools !== 'object') continue;
          if (seen.has(got.tools)) {
            fromMemo++;
            if (shapes[which % shapes.length]!.order.includes('turn')) withOwnMembers++;
          }
          seen.add(got.tools);
        }
      }),
      { numRuns: 300 },
    );
    // Random bodies: 193-305 in twelve runs of 300 (200 failed one run in twelve). Far above none.
    expect(fromMemo).toBeGreaterThan(120);
    expect(withOwnMembers).toBeGreaterThan(5);
  });

  it('a head met in two bodies in a row is kept, and later bodies take its values as they are', () => {
    for (const order of [['model', 'tools', 'messages'], ['model', 'messages', 'tools', 'stream']]) {
      const memo = new HeadMemo();
      const shape: Shape = { order, tools: toolsOf(0, ''), system: true, indent: 0 };
      const a = memo.parse(bodyOf(shape, [{ role: 'user', content: 'task a' }]), 'messages') as { tools: unknown; messages: unknown[] };
      const b = memo.parse(bodyOf(shape, [{ role: 'user', content: 'task b' }]), 'messages') as { tools: unknown; messages: unknown[] };
      expect(memo.size).toBe(1);
      const c = memo.parse(bodyOf(shape, [{ role: 'user', content: 'task c' }, { role: 'assistant', content: 'done' }]), 'messages') as { tools: unknown; messages: unknown[] };
      // Kept from the second body: the third's head is the same objects, frozen; its own messages are its own.
      expect(c.tools).toBe(b.tools);
      expect(c.tools).not.toBe(a.tools);
      expect(c.messages[0]).toBe(b.messages[0]);
      expect(Object.isFrozen(c.tools)).toBe(true);
      expect(c.messages.slice(1)).toEqual([{ role: 'user', content: 'task c' }, { role: 'assistant', content: 'done' }]);
      expect(Object.isFrozen(c.messages[1])).toBe(false);
    }
  });

  it('a member of each request\'s own after the shared ones is parsed, the shared ones are taken as kept', () => {
    // Codex's shape: its first input item the instructions, tools after the list, client_metadata new each time.
    const instructions = { role: 'developer', content: `Be precise. ${'Read the code first. '.repeat(400)}` };
    const tools = toolsOf(0, '');
    const bodyOf = (n: number, input: unknown[]): Buffer =>
      Buffer.from(JSON.stringify({ model: 'm', stream: true, input: [instructions, ...input], tools, store: false, prompt_cache_key: 'conv-1', client_metadata: { turn_id: `t-${n}`, ...(n % 2 === 0 ? { a: 1 } : { b: [n] }) } }));
    const memo = new HeadMemo();
    const input: unknown[] = [];
    const got: { tools: unknown; input: unknown[]; client_metadata: unknown }[] = [];
    for (let n = 0; n < 6; n++) {
      input.push({ role: 'user', content: `step ${n}` });
      got.push(expectParsedAsJson((b) => memo.parse(b, 'input'), bodyOf(n, input)) as (typeof got)[number]);
    }
    expect(memo.size).toBe(1);
    for (const later of got.slice(2)) {
      expect(later.tools).toBe(got[1]!.tools);
      expect(later.input[0]).toBe(got[1]!.input[0]);
    }
    expect(got[5]!.client_metadata).toEqual({ turn_id: 't-5', b: [5] });
    // A catalogue that differs only far into it (its last tool): another head, parsed whole.
    const changed = JSON.parse(JSON.stringify(tools)) as { function: { description: string } }[];
    changed.at(-1)!.function.description = changed.at(-1)!.function.description.replace('Reads', 'Write');
    const other = expectParsedAsJson((b) => memo.parse(b, 'input'), Buffer.from(bodyOf(6, input).toString('utf8').replace(JSON.stringify(tools), JSON.stringify(changed)))) as { tools: unknown };
    expect(other.tools).not.toBe(got[1]!.tools);
    // A body whose own members after the suffix are not an object's end is JSON.parse's error.
    const good = bodyOf(6, input).toString('utf8');
    for (const bad of [good.slice(0, -1), `${good.slice(0, -1)},}`, `${good} x`, good.replace('"client_metadata"', '"client_metadata":1,"x"'), good.replace(',"client_metadata"', ' x,"client_metadata"'), good.replace(',"client_metadata"', ',,"client_metadata"')]) {
      expectParsedAsJson((b) => memo.parse(b, 'input'), Buffer.from(bad));
    }
  });

  it('keeps a head per client, and a body with another one parses whole', () => {
    const memo = new HeadMemo();
    const one: Shape = { order: ['model', 'tools', 'messages'], tools: toolsOf(1, ''), system: true, indent: 0 };
    const two: Shape = { order: ['model', 'messages', 'tools'], tools: toolsOf(2, ''), system: false, indent: 0 };
    for (const s of [one, one, two, two]) memo.parse(bodyOf(s, [{ role: 'user', content: 'x' }]), 'messages');
    expect(memo.size).toBe(2);
    const first = memo.parse(bodyOf(one, [{ role: 'user', content: 'y' }]), 'messages') as { tools: unknown };
    const again = memo.parse(bodyOf(one, [{ role: 'user', content: 'z' }]), 'messages') as { tools: unknown };
    expect(again.tools).toBe(first.tools);
    // A changed catalogue is another head (one of the same length too): parsed whole, equal to JSON.parse, not the kept objects.
    for (const tools of [toolsOf(1, 'new '), toolsOf(3, '')]) {
      const other = expectSame(memo, bodyOf({ ...one, tools }, [{ role: 'user', content: 'y' }])) as { tools: unknown };
      expect(other.tools).not.toBe(first.tools);
    }
  });

  it('bytes after the kept first element that would extend it are JSON.parse\'s error, not a list', () => {
    const shape: Shape = { order: ['model', 'tools', 'messages'], tools: toolsOf(0, ''), system: true, indent: 0 };
    for (const extra of ['.5', 'e5', '5', ' .5', ',', '']) {
      const memo = new HeadMemo();
      for (let i = 0; i < 3; i++) memo.parse(bodyOf(shape, [{ role: 'user', content: `${i}` }]), 'messages');
      expect(memo.size).toBe(1);
      const body = bodyOf(shape, []);
      const at = body.lastIndexOf(']}');
      expectSame(memo, Buffer.concat([body.subarray(0, at), Buffer.from(extra), body.subarray(at)]));
    }
  });

  it('conversations whose heads differ by a field after their tools share one head with the members they have the same', () => {
    // Codex's shape: instructions before the list, tools and a per-conversation prompt_cache_key after it.
    const instructions = `Be precise. ${'Read the code first. '.repeat(500)}`;
    const bodyOf = (c: number, turn: number): Buffer =>
      Buffer.from(JSON.stringify({ model: 'm', instructions, input: [{ role: 'user', content: `task ${c} turn ${turn}` }], tools: toolsOf(0, ''), prompt_cache_key: `conv-${c}` }));
    // Round robin, or each conversation's requests two in a row (its first head is then its own).
    for (const reps of [1, 2]) {
      const memo = new HeadMemo();
      const seen = new Set<unknown>();
      let fromMemo = 0;
      let bodies = 0;
      for (let turn = 0; turn < 10; turn++) {
        for (let c = 0; c < 12; c++) {
          for (let r = 0; r < reps; r++, bodies++) {
            const got = expectParsedAsJson((b) => memo.parse(b, 'input'), bodyOf(c, turn * 2 + r)) as { tools: unknown };
            if (seen.has(got.tools)) fromMemo++;
            seen.add(got.tools);
          }
        }
      }
      expect(memo.size).toBe(1);
      expect(memo.learned).toBeLessThanOrEqual(2);
      expect(fromMemo).toBeGreaterThan(bodies - 5);
    }
  });

  it('bodies that look alike but make no head, or make heads that go unused, do not make it scan every body', () => {
    const instructions = `Be precise. ${'Read the code first. '.repeat(500)}`;
    const output = { role: 'tool', content: 'x'.repeat(10_000) };
    const loads = {
      // A field of each conversation's own before the list: a head per conversation, more of them than are kept.
      'heads given up unused': (c: number, turn: number) => ({ model: 'm', instructions, user: `user-${c}`, input: [{ role: 'user', content: `task ${c} turn ${turn}` }] }),
      // 8 KB in common at the end, inside the list: no head there to keep.
      'no head to keep': (c: number, turn: number) => ({ model: 'm', input: [{ role: 'user', content: `task ${c} turn ${turn}` }, output] }),
    };
    for (const [name, make] of Object.entries(loads)) {
      const memo = new HeadMemo();
      let bodies = 0;
      for (let turn = 0; turn < 20; turn++) {
        for (let c = 0; c < 12; c++) {
          for (let r = 0; r < 2; r++, bodies++) expectParsedAsJson((b) => memo.parse(b, 'input'), Buffer.from(JSON.stringify(make(c, turn * 2 + r))));
        }
      }
      expect(memo.learned, name).toBeLessThan(bodies / 8);
    }
  });

  it('what the caller does to its body object does not reach the next request', () => {
    const memo = new HeadMemo();
    const shape: Shape = { order: ['model', 'tools', 'messages', 'stream'], tools: toolsOf(0, ''), system: true, indent: 0 };
    for (let i = 0; i < 2; i++) memo.parse(bodyOf(shape, [{ role: 'user', content: `${i}` }]), 'messages');
    const got = memo.parse(bodyOf(shape, [{ role: 'user', content: 'x' }]), 'messages') as Record<string, unknown> & { messages: unknown[] };
    got.model = 'changed';
    delete got.stream;
    got.messages.push({ role: 'user', content: 'added' });
    expect(() => {
      (got.tools as unknown[]).push(1);
    }).toThrow(TypeError);
    expectSame(memo, bodyOf(shape, [{ role: 'user', content: 'x' }]));
  });

  it('a small head, or a body under the bound, is parsed whole and nothing is kept', () => {
    const memo = new HeadMemo();
    const small: Shape = { order: ['model', 'messages'], tools: [], system: false, indent: 0 };
    // Long bodies whose shared bytes are a conversation's own, not a head.
    for (let i = 0; i < 3; i++) expectSame(memo, bodyOf(small, [{ role: 'user', content: `task ${i}` }, { role: 'user', content: 'x'.repeat(20_000) }]));
    expectSame(memo, Buffer.from('{"model":"m","messages":[]}'));
    expect(memo.size).toBe(0);
  });
});
