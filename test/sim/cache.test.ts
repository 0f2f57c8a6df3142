import { describe, expect, it } from 'vitest';
import { ReplicaCache } from '../../src/sim/cache.js';
import { mulberry32 } from '../../src/core/prng.js';
import { Router } from '../../src/sim/routing.js';
import { TokenSeq } from '../../src/sim/tokens.js';

describe('ReplicaCache', () => {
  it('reads leading blocks only, stopping at the first miss', () => {
    const cache = new ReplicaCache(100);
    cache.write(['a', 'b', 'd'], 0, 1000);
    expect(cache.read(['a', 'b', 'c', 'd'], 1, 1000)).toBe(2);
    expect(cache.read(['x', 'a'], 1, 1000)).toBe(0);
  });

  it('expires blocks after the TTL, and a read refreshes it', () => {
    const cache = new ReplicaCache(100);
    cache.write(['a', 'b'], 0, 1000);
    expect(cache.read(['a'], 900, 1000)).toBe(1); // a now lives until 1900
    expect(cache.read(['a', 'b'], 1500, 1000)).toBe(1); // b expired at 1000; a lives until 2500
    expect(cache.read(['a'], 2499, 1000)).toBe(1); // until 3499
    expect(cache.read(['a'], 3499, 1000)).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used blocks beyond its bound', () => {
    const cache = new ReplicaCache(3);
    cache.write(['a', 'b', 'c'], 0, 1000);
    cache.read(['a'], 1, 1000);
    cache.write(['d'], 2, 1000);
    expect(cache.size).toBe(3);
    expect(cache.read(['b'], 3, 1000)).toBe(0);
    expect(cache.read(['a'], 3, 1000)).toBe(1);
    expect(cache.read(['c'], 3, 1000)).toBe(1);
  });
});

describe('Router', () => {
  const tokens = new TokenSeq('some prompt');

  it('routes a session key to the same replica whatever the policy', () => {
    for (const routing of ['session', 'prefix', 'random'] as const) {
      const router = new Router(8, routing, 1);
      const first = router.pick('key-1', tokens);
      for (let i = 0; i < 5; i++) expect(router.pick('key-1', tokens)).toBe(first);
    }
  });

  it('spreads random routing over replicas, reproducibly from the seed', () => {
    const draw = (seed: number) => {
      const router = new Router(4, 'random', seed);
      return Array.from({ length: 40 }, () => router.pick(null, tokens));
    };
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(6));
    expect(new Set(draw(5)).size).toBe(4);
    const router = new Router(4, 'random', 5);
    const before = Array.from({ length: 10 }, () => router.pick(null, tokens));
    router.reset();
    expect(Array.from({ length: 10 }, () => router.pick(null, tokens))).toEqual(before);
  });

  it('mulberry32 stays in [0, 1)', () => {
    const next = mulberry32(123);
    for (let i = 0; i < 1000; i++) {
      const x = next();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});
