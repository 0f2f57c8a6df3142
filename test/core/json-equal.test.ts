import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameJson } from '../../src/core/json-equal.js';

/** The same value with each object's keys in reverse order. */
function reordered(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reordered);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)]));
}

describe('sameJson', () => {
  it('is true exactly when the two values serialise to the same JSON text', () => {
    const pair = fc.jsonValue().chain((a) => fc.tuple(fc.constant(a), fc.oneof(fc.constant(structuredClone(a)), fc.constant(reordered(a)), fc.jsonValue())));
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
      { numRuns: 1000 },
    );
  });

  it('tells apart what JSON text tells apart', () => {
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson([1, [2]], [1, [2]])).toBe(true);
    expect(sameJson({ 0: 'x' }, ['x'])).toBe(false);
    expect(sameJson({ a: null }, { a: {} })).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
  });
});
