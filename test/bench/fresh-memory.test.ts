/** The bench's fresh-memory figure (bench/peers/fresh-memory.ts): what it counts. */
import { describe, expect, it } from 'vitest';
import { freshMemoryCost } from '../../bench/peers/fresh-memory.js';

describe('freshMemoryCost', () => {
  it('counts the CPU and page faults of writing fresh MiBs, a MiB at most 256 pages of 4 KiB', () => {
    const cost = freshMemoryCost(8);
    // Writing a MiB takes some CPU on any machine; the clock's resolution is a microsecond.
    expect(cost.usPerMib).toBeGreaterThan(0);
    expect(cost.faultsPerMib).toBeGreaterThanOrEqual(0);
    expect(cost.faultsPerMib).toBeLessThanOrEqual(256 + 16);
  });
});
