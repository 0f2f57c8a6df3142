import { describe, expect, it } from 'vitest';
import { randomHex } from '../../src/session/random-hex.js';

describe('randomHex', () => {
  it('gives hex of the length asked, across pool refills, without repeats', () => {
    const seen = new Set<string>();
    // 3,000 x 12 bytes crosses the 4 KB pool several times.
    for (let i = 0; i < 3000; i++) {
      const id = randomHex(12);
      expect(id).toMatch(/^[0-9a-f]{24}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(3000);
    expect(randomHex(4)).toMatch(/^[0-9a-f]{8}$/);
    expect(() => randomHex(5000)).toThrow(RangeError);
  });
});
