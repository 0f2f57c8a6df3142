import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatPath } from '../../src/core/json-depth.js';
import { hasNonFinite, nonFinitePath } from '../../src/core/json-numbers.js';

describe('numbers JSON.parse reads as Infinity', () => {
  it('finds 1e400 and -1e400 wherever JSON.parse put them, and names the first in document order', () => {
    const body = JSON.parse('{"a":1,"b":[0,{"c":-0,"d":1e308}],"e":{"f":[1,2,{"g":-1e400}]},"h":1e400}') as unknown;
    expect(hasNonFinite(body)).toBe(true);
    expect(formatPath(nonFinitePath(body)!)).toBe('e.f[2].g');
    expect(hasNonFinite(JSON.parse('1e400'))).toBe(true);
    expect(nonFinitePath(JSON.parse('1e400'))).toEqual([]);
  });

  it('finite numbers, -0, the largest doubles and huge integers are fine', () => {
    const body = JSON.parse('{"a":[-0,1e308,-1e308,5e-324,123456789012345678901234567890,0e-400],"b":"1e400"}') as unknown;
    expect(hasNonFinite(body)).toBe(false);
    expect(nonFinitePath(body)).toBeUndefined();
  });

  it('reads nesting deeper than any stack', () => {
    const deep = JSON.parse('['.repeat(100_000) + '1e400' + ']'.repeat(100_000)) as unknown;
    expect(hasNonFinite(deep)).toBe(true);
    expect(nonFinitePath(deep)).toHaveLength(100_000);
  });

  it('finds a number put anywhere in any JSON value exactly when it is not finite, and names where', () => {
    const number = fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(Infinity, -Infinity));
    fc.assert(fc.property(fc.jsonValue(), number, fc.nat(), (value, n, at) => {
      const root = [value];
      const containers: (unknown[] | Record<string, unknown>)[] = [];
      const walk = (v: unknown) => {
        if (v === null || typeof v !== 'object') return;
        containers.push(v as unknown[]);
        for (const child of Object.values(v)) walk(child);
      };
      walk(root);
      const into = containers[at % containers.length]!;
      if (Array.isArray(into)) into.push(n);
      else into['\u0000n'] = n;
      expect(hasNonFinite(root)).toBe(!Number.isFinite(n));
      const path = nonFinitePath(root);
      if (Number.isFinite(n)) expect(path).toBeUndefined();
      else expect(path!.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], root)).toBe(n);
    }));
  });
});
