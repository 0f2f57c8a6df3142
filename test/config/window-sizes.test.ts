import { describe, expect, it } from 'vitest';
import { computeSizes } from '../../src/config/window-sizes.js';
import type { WindowDefaults } from '../../src/config/types.js';

const window: WindowDefaults = { context: 131072, output_reserve: 8192, protected_entries: 4 };

describe('water-mark math', () => {
  it('defaults to 80% / 50% of (context - output_reserve) and a 48th of high water for the cap', () => {
    const out = computeSizes({}, window);
    expect(out).toEqual({ ok: true, sizes: { context: 131072, output_reserve: 8192, high_water: 98304, low_water: 61440, max_result_tokens: 2048, protected_entries: 4 } });
  });

  it('caps the result limit at 16384 and follows a large context', () => {
    const million = computeSizes({ context: 1_000_000, output_reserve: 32_000 }, window, 'models.big');
    expect(million.ok && million.sizes).toMatchObject({ high_water: 774_400, low_water: 484_000, max_result_tokens: 16_133 });
    const two = computeSizes({ context: 2_000_000, output_reserve: 32_000 }, window, 'models.big');
    expect(two.ok && two.sizes).toMatchObject({ high_water: 1_574_400, low_water: 984_000, max_result_tokens: 16_384 });
  });

  it('keeps values that are set, the model over [window]', () => {
    const shared = { ...window, high_water: 50_000, low_water: 20_000, max_result_tokens: 1000 };
    expect(computeSizes({ low_water: 30_000 }, shared, 'models.m')).toMatchObject({ ok: true, sizes: { high_water: 50_000, low_water: 30_000, max_result_tokens: 1000 } });
  });

  it('names the model key for a high water that does not fit', () => {
    const out = computeSizes({ context: 32_000, high_water: 30_000 }, window, 'models.m');
    expect(out).toEqual({ ok: false, problems: [{ key: 'models.m.high_water', detail: 'high_water 30000 does not fit models.m: context 32000 - output_reserve 8192 = 23808' }] });
  });

  it('names the [window] key when a shared water mark does not fit a model', () => {
    const out = computeSizes({ context: 16_000 }, { ...window, high_water: 100_000 }, 'models.small');
    expect(!out.ok && out.problems[0]?.key).toBe('window.high_water');
  });

  it('refuses low water at or above high water, naming the low key', () => {
    const out = computeSizes({ high_water: 1000, low_water: 1000 }, window, 'models.m');
    expect(out).toEqual({ ok: false, problems: [{ key: 'models.m.low_water', detail: 'low_water 1000 must be below high_water 1000' }] });
    const defaulted = computeSizes({ context: 20_000, low_water: 15_000 }, window, 'models.m');
    expect(!defaulted.ok && defaulted.problems[0]).toEqual({
      key: 'models.m.low_water',
      detail: 'low_water 15000 must be below high_water 9446 (80% of context 20000 - output_reserve 8192)',
    });
  });

  it('refuses an output reserve that fills the context', () => {
    const out = computeSizes({ context: 8192 }, window, 'models.m');
    expect(!out.ok && out.problems[0]).toEqual({ key: 'window.output_reserve', detail: 'output_reserve 8192 leaves no room for a prompt in a context of 8192' });
  });

  it('ignores a model override without a model prefix (provider/model routes use [window] only)', () => {
    expect(computeSizes({ context: 10 }, window)).toMatchObject({ ok: true, sizes: { context: 131072 } });
  });
});
