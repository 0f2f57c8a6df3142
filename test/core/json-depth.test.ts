import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatPath, pathDeeperThan, scanValue, textDepth } from '../../src/core/json-depth.js';

const valueDepth = (v: unknown, stopAbove?: number): number => scanValue(v, stopAbove).depth;

/** Depth by its recursive definition, for values shallow enough to recurse over. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

// Strings full of what could confuse a scanner: brackets, quotes, backslashes, unicode.
const TRICKY = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ':', ',', 'a', 'é', '\u2028', '\ud83d\ude00'), maxLength: 12 });
const { value: VALUES } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(TRICKY, fc.integer(), fc.constant(null), fc.boolean()),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(TRICKY, tie('value'), { maxKeys: 4 }),
  ),
}));

describe('textDepth: bracket depth of JSON text, without parsing', () => {
  it('counts arrays and objects', () => {
    expect(textDepth('')).toBe(0);
    expect(textDepth('12')).toBe(0);
    expect(textDepth('[]')).toBe(1);
    expect(textDepth('{"a":[1,{"b":2}],"c":[]}')).toBe(3);
    expect(textDepth(' [ [ ] , { } ] ')).toBe(2);
  });

  it('does not count brackets inside strings', () => {
    expect(textDepth('"[[[{{{"')).toBe(0);
    expect(textDepth('{"a":"]]]}}}[[[","[[":1}')).toBe(1);
    expect(textDepth('["{", "}", "[", "]"]')).toBe(1);
  });

  it('an escaped quote does not end a string; an escaped backslash before a quote does not escape it', () => {
    expect(textDepth(String.raw`["a\"[[[", 1]`)).toBe(1);
    expect(textDepth(String.raw`["a\\", [[1]]]`)).toBe(3);
    expect(textDepth(String.raw`["\\\"[[[[", 1]`)).toBe(1);
    expect(textDepth(String.raw`["\\\\", [1]]`)).toBe(2);
    expect(textDepth(String.raw`["\u0022[[", 1]`)).toBe(1);
  });

  it('reads text that is not JSON by its brackets: stray closers ignored, an open string ends the count', () => {
    expect(textDepth(']]][[')).toBe(2);
    expect(textDepth('[["abc [[[[')).toBe(2);
    expect(textDepth('not json at all')).toBe(0);
  });

  it('stops once past the limit', () => {
    expect(textDepth('['.repeat(1_000_000), 128)).toBe(129);
    expect(textDepth('['.repeat(50_000) + ']'.repeat(50_000))).toBe(50_000);
  });

  it('equals the depth of the parsed value, for any JSON text, compact or indented', () => {
    fc.assert(fc.property(VALUES, (v) => {
      const depth = depthOf(v);
      expect(textDepth(JSON.stringify(v))).toBe(depth);
      expect(textDepth(JSON.stringify(v, null, 2))).toBe(depth);
      expect(valueDepth(v)).toBe(depth);
    }), { numRuns: 1000 });
  });
});

describe('scanValue and pathDeeperThan', () => {
  it('measure parsed values without recursing', () => {
    expect(valueDepth('x')).toBe(0);
    expect(valueDepth({})).toBe(1);
    expect(valueDepth({ a: [1, { b: [] }], c: {} })).toBe(4);
    expect(valueDepth(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)))).toBe(200_000);
    expect(valueDepth(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)), 10)).toBe(11);
  });

  it('find a number that is not finite in the same pass, anywhere', () => {
    expect(scanValue({ a: [1, { b: 2 }] }).nonFinite).toBe(false);
    expect(scanValue(JSON.parse('{"a":[1,{"b":[1e400]}]}'))).toEqual({ depth: 4, nonFinite: true });
    expect(scanValue(JSON.parse('-1e400')).nonFinite).toBe(true);
    expect(scanValue({ s: 'Infinity', n: null }).nonFinite).toBe(false);
  });

  it('name the first container too deep, in document order', () => {
    const value = { a: [[1]], b: { c: [{ d: [] }], e: [[[2]]] } };
    expect(pathDeeperThan(value, 4)).toEqual(['b', 'c', 0, 'd']);
    expect(pathDeeperThan(value, 3)).toEqual(['b', 'c', 0]);
    expect(pathDeeperThan(value, 2)).toEqual(['a', 0]);
    expect(pathDeeperThan(value, 5)).toBeUndefined();
    expect(pathDeeperThan(value, 0)).toEqual([]);
    expect(pathDeeperThan(JSON.parse('{"x":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}'), 3)).toEqual(['x', 0, 0]);
  });

  it('find a path exactly when the value is deeper than the limit, and the path leads to a container', () => {
    fc.assert(fc.property(VALUES, fc.nat(6), (v, limit) => {
      const path = pathDeeperThan(v, limit);
      expect(path !== undefined).toBe(depthOf(v) > limit);
      if (path === undefined) return;
      expect(path).toHaveLength(limit);
      const at = path.reduce<unknown>((node, step) => (node as Record<string | number, unknown>)[step], v);
      expect(typeof at === 'object' && at !== null).toBe(true);
    }), { numRuns: 1000 });
  });

  it('formatPath writes a param as OpenAI does', () => {
    expect(formatPath(['messages', 3, 'tool_calls', 0, 'function'])).toBe('messages[3].tool_calls[0].function');
    expect(formatPath([0, 'a'])).toBe('[0].a');
    expect(formatPath([])).toBe('');
  });
});
