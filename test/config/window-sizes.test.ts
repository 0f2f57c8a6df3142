import { describe, expect, it } from 'vitest';
import { computeSizes } from '../../src/config/window-sizes.js';
import type { WindowDefaults } from '../../src/config/types.js';
import type { Figure } from '../../src/pricing/price.js';

const window: WindowDefaults = { context: 131072, output_reserve: 8192, protected_entries: 4 };
const shared: Figure = { value: 131072, from: 'window' };
const own = (value: number): Figure => ({ value, from: 'config' });

describe('water-mark math', () => {
  it('defaults to 80% / 50% of (context - output_reserve) and a 48th of high water for the cap', () => {
    const out = computeSizes({}, window, shared);
    expect(out).toEqual({ ok: true, sizes: { context: 131072, output_reserve: 8192, high_water: 98304, low_water: 61440, max_result_tokens: 2048, protected_entries: 4 } });
  });

  it('caps the result limit at 16384 and follows a large context', () => {
    const million = computeSizes({ output_reserve: 32_000 }, window, own(1_000_000), 'models.big');
    expect(million.ok && million.sizes).toMatchObject({ high_water: 774_400, low_water: 484_000, max_result_tokens: 16_133 });
    const two = computeSizes({ output_reserve: 32_000 }, window, own(2_000_000), 'models.big');
    expect(two.ok && two.sizes).toMatchObject({ high_water: 1_574_400, low_water: 984_000, max_result_tokens: 16_384 });
  });

  it('keeps values that are set, the model over [window]', () => {
    const marks = { ...window, high_water: 50_000, low_water: 20_000, max_result_tokens: 1000 };
    expect(computeSizes({ low_water: 30_000 }, marks, shared, 'models.m')).toMatchObject({ ok: true, sizes: { high_water: 50_000, low_water: 30_000, max_result_tokens: 1000 } });
  });

  it('names the model key for a high water that does not fit', () => {
    const out = computeSizes({ high_water: 30_000 }, window, own(32_000), 'models.m');
    expect(out).toEqual({ ok: false, problems: [{ key: 'models.m.high_water', detail: 'high_water 30000 does not fit models.m: context 32000 - output_reserve 8192 = 23808' }] });
  });

  it('names the [window] key when a shared water mark does not fit a model', () => {
    const out = computeSizes({}, { ...window, high_water: 100_000 }, own(16_000), 'models.small');
    expect(!out.ok && out.problems[0]?.key).toBe('window.high_water');
  });

  it('refuses low water at or above high water, naming the low key', () => {
    const out = computeSizes({ high_water: 1000, low_water: 1000 }, window, shared, 'models.m');
    expect(out).toEqual({ ok: false, problems: [{ key: 'models.m.low_water', detail: 'low_water 1000 must be below high_water 1000' }] });
    const defaulted = computeSizes({ low_water: 15_000 }, window, own(20_000), 'models.m');
    expect(!defaulted.ok && defaulted.problems[0]).toEqual({
      key: 'models.m.low_water',
      detail: 'low_water 15000 must be below high_water 9446 (80% of context 20000 - output_reserve 8192)',
    });
  });

  it('refuses an output reserve that fills the context', () => {
    const out = computeSizes({}, window, own(8192), 'models.m');
    expect(!out.ok && out.problems[0]).toEqual({ key: 'window.output_reserve', detail: 'output_reserve 8192 leaves no room for a prompt in a context of 8192' });
  });

  it('ignores a model override without a model prefix (provider/model routes use [window] and their context only)', () => {
    expect(computeSizes({ high_water: 10 }, window, shared)).toMatchObject({ ok: true, sizes: { context: 131072, high_water: 98304 } });
  });

  it('sizes the window for a catalogue context, and names it when the reserve does not fit it', () => {
    const big = computeSizes({}, window, { value: 1_000_000, from: 'catalogue' }, 'models.m');
    expect(big.ok && big.sizes).toMatchObject({ context: 1_000_000, high_water: Math.floor((1_000_000 - 8192) * 0.8), low_water: Math.floor((1_000_000 - 8192) * 0.5) });
    const small = computeSizes({}, window, { value: 4096, from: 'catalogue' }, 'models.m');
    expect(!small.ok && small.problems[0]).toEqual({
      key: 'window.output_reserve',
      detail: 'output_reserve 8192 leaves no room for a prompt in a context of 4096 (the catalogue\'s; set context to override it)',
    });
  });
});
