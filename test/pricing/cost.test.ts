/** The one cost function: each kind at its price, a cache kind without a price billed as input, unknown never 0. */
import { describe, expect, it } from 'vitest';
import { costOf, totalCost } from '../../src/pricing/cost.js';

const usage = { prompt_tokens: 1_000_000, cached_tokens: 600_000, cache_write_tokens: 300_000, cache_write_1h_tokens: 100_000, completion_tokens: 10_000 };

describe('costOf', () => {
  it('prices each kind: uncached input, cache read, 5-minute and 1-hour writes, output', () => {
    const split = costOf({ input: 3, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6, output: 15 }, usage)!;
    expect(split.input).toBeCloseTo(0.1 * 3, 12);
    expect(split.cache_read).toBeCloseTo(0.6 * 0.3, 12);
    expect(split.cache_write).toBeCloseTo(0.2 * 3.75 + 0.1 * 6, 12);
    expect(split.output).toBeCloseTo(0.01 * 15, 12);
  });

  it('bills a cache kind the prices do not name at the input price (1-hour writes at the 5-minute price)', () => {
    const split = costOf({ input: 2, output: 8 }, usage)!;
    expect(split.cache_read).toBeCloseTo(0.6 * 2, 12);
    expect(split.cache_write).toBeCloseTo(0.3 * 2, 12);
    expect(costOf({ input: 2, cache_write: 4, output: 8 }, usage)!.cache_write).toBeCloseTo(0.3 * 4, 12);
  });

  it('is unknown without prices or usage, and the provider\'s figure is the fallback', () => {
    expect(costOf(undefined, usage)).toBeUndefined();
    expect(costOf({ input: 1, output: 1 }, { completion_tokens: 5 })).toBeUndefined();
    expect(totalCost(undefined, usage)).toBeUndefined();
    expect(totalCost(undefined, { ...usage, cost_usd: 0.5 })).toEqual({ usd: 0.5, source: 'provider' });
    expect(totalCost({ input: 1, output: 1 }, { prompt_tokens: 1_000_000 })).toEqual({ usd: 1, source: 'prices' });
  });
});
