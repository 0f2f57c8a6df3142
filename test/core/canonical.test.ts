import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DigestChain, canonicalDigest, canonicalJson, canonicalJsonWith } from '../../src/core/canonical.js';

/** The recursive definition canonicalJson had before it became iterative: its bytes are the contract. */
function reference(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = value[i];
          out += item === undefined ? 'null' : reference(item);
        }
        return out + ']';
      }
      const obj = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const key of Object.keys(obj).sort()) {
        const member = obj[key];
        if (member === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += JSON.stringify(key) + ':' + reference(member);
      }
      return out + '}';
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
}

/** The text, or the error's class and message: both must match the reference. */
function outcome(f: (v: unknown) => string, value: unknown): string {
  try {
    return f(value);
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
}

/** An object with these members in this order; defineProperty keeps a "__proto__" key a plain member. */
function objectOf(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, member] of entries) Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  return out;
}

const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 1e-6, 123456789012345680000, 5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1.5e300, -2.5e-300];
// Integer-like keys enumerate first in ascending order, other keys in insertion order: sorting must undo both.
const KEYS = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', 'a', 'A', 'b', '1', '10', '2', '01', '-1', '__proto__', 'constructor', 'é', 'e\u0301', '\ud83d\ude00', '\uffff', '\ud800', 'a\udc00', '"', 'a"b', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028'),
);
const SCALARS = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(...NUMBERS),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', '"', '\\', '\u2028\u2029', '\ud800', 'x\udc00y', '</script>', '\u0000\u001f\u007f'),
);
const { value: JSON_VALUES } = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, SCALARS, tie('array'), tie('object')),
  array: fc.array(fc.oneof({ weight: 9, arbitrary: tie('value') }, { weight: 1, arbitrary: fc.constant(undefined) }), { maxLength: 6 }),
  object: fc.array(fc.tuple(KEYS, fc.oneof({ weight: 9, arbitrary: tie('value') }, { weight: 1, arbitrary: fc.constant(undefined) })), { maxLength: 6 }).map(objectOf),
}));
/** What JSON cannot hold, for the error paths. */
const BAD = fc.constantFrom<unknown>(NaN, Infinity, -Infinity, () => 1, Symbol('s'), 10n);
const { value: VALUES_WITH_BAD } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, { weight: 8, arbitrary: SCALARS }, { weight: 1, arbitrary: BAD }, fc.array(tie('value'), { maxLength: 4 }), fc.array(fc.tuple(KEYS, tie('value')), { maxLength: 4 }).map(objectOf)),
}));

/** The same value with every object's members inserted in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return objectOf(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)] as const));
}

describe('canonical JSON', () => {
  it('sorts keys at every depth, writes no whitespace, drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: true, y: null }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}');
  });

  it('is the same for any key order, and round-trips through JSON.parse', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      const text = canonicalJson(v);
      const reordered = JSON.parse(JSON.stringify(v, (_k, x: unknown) => (x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).reverse()) : x))) as unknown;
      expect(canonicalJson(reordered)).toBe(text);
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    }), { numRuns: 300 });
  });

  it('writes exactly what the recursive definition writes: unicode, key orders, numbers, undefined', () => {
    fc.assert(fc.property(JSON_VALUES, (v) => {
      const text = reference(v);
      expect(canonicalJson(v)).toBe(text);
      expect(canonicalJson(reversed(v))).toBe(text);
    }), { numRuns: 2000 });
  });

  it('sorts objects of many keys as the recursive definition does', () => {
    fc.assert(fc.property(fc.uniqueArray(KEYS, { minLength: 10, maxLength: 40 }), (keys) => {
      const v = objectOf(keys.map((k, i) => [k, i] as const));
      expect(canonicalJson(v)).toBe(reference(v));
    }), { numRuns: 300 });
  });

  it('fails where the recursive definition fails, with the same error', () => {
    fc.assert(fc.property(VALUES_WITH_BAD, (v) => {
      expect(outcome(canonicalJson, v)).toBe(outcome(reference, v));
    }), { numRuns: 1000 });
  });

  it('writes numbers as JSON.stringify does (-0 as 0, 1e21 with an exponent)', () => {
    expect(canonicalJson([-0, 1e21, 1e-7, 0.000001, 5e-324, 2 ** 53 + 2])).toBe('[0,1e+21,1e-7,0.000001,5e-324,9007199254740994]');
  });

  it('handles nesting far past any stack: 100,000 levels of arrays and objects', () => {
    const levels = 100_000;
    let v: unknown = 'leaf';
    for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
    const text = canonicalJson(v);
    expect(text).toBe('{"k":['.repeat(levels / 2) + '"leaf"' + ']}'.repeat(levels / 2));
    expect(() => reference(v)).toThrow(RangeError);
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalJson({ x: NaN })).toThrow(/NaN/);
    expect(() => canonicalJson({ x: () => 1 })).toThrow(/function/);
    const cycle: Record<string, unknown> = { a: [1] };
    (cycle.a as unknown[]).push({ back: cycle });
    expect(() => canonicalJson(cycle)).toThrow(new TypeError('canonical JSON cannot hold a cycle'));
    // The same object twice, not in a cycle, is written twice: near the top, and 2,000 levels down.
    const shared = { s: 1 };
    expect(canonicalJson([shared, { t: shared }])).toBe('[{"s":1},{"t":{"s":1}}]');
    let deep: unknown = [shared, { t: shared }];
    for (let i = 0; i < 2000; i++) deep = [deep];
    expect(canonicalJson(deep)).toBe('['.repeat(2000) + '[{"s":1},{"t":{"s":1}}]' + ']'.repeat(2000));
  });

  it('DigestChain equals canonicalDigest of the whole object, across appends and edits', () => {
    const chain = new DigestChain('messages');
    const msgs: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      msgs.push({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` });
      if (i === 12) msgs[3] = { role: 'assistant', content: 'edited' };
      const rest = { model: 'm', params: { max_tokens: i }, tools: [] };
      expect(chain.digest(msgs.map((m) => canonicalJson(m)), rest)).toBe(canonicalDigest({ messages: msgs, ...rest }));
    }
  });

  it('canonicalJsonWith writes the given texts where canonicalJson would write the members', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue(), { maxKeys: 8 }), fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }), (obj, named) => {
        const texts: Record<string, string> = {};
        for (const k of named) if (Object.hasOwn(obj, k)) Object.defineProperty(texts, k, { value: canonicalJson(obj[k]), enumerable: true });
        expect(canonicalJsonWith(obj, texts)).toBe(canonicalJson(obj));
      }),
      { numRuns: 300 },
    );
    // The text is trusted: what is given is what is written (the caller's to keep right).
    expect(canonicalJsonWith({ b: 1, a: [2] }, { a: '"kept"' })).toBe('{"a":"kept","b":1}');
    expect(canonicalJsonWith({ a: undefined, b: 1 }, { a: '"never"' })).toBe('{"b":1}');
  });

  it('DigestChain with the tools given as text equals canonicalDigest of the whole object', () => {
    const chain = new DigestChain('messages');
    const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
    const msgs = [canonicalJson({ role: 'user', content: 'hi' })];
    const rest = { model: 'm', params: { max_tokens: 9 }, tools };
    expect(chain.digest(msgs, rest, { tools: canonicalJson(tools) })).toBe(canonicalDigest({ messages: [{ role: 'user', content: 'hi' }], ...rest }));
  });
});
