/**
 * Water-mark math (docs/architecture.md section 4.2): unless set, high water is 80% and low water 50% of
 * (context - output reserve), and the result cap a 48th of high water, at most 16,384. Values
 * that do not fit are config errors naming the key that set them. The context is resolved before
 * (pricing/figures.ts: the model's own, the catalogue's, `[window]`'s or the default).
 */
import type { Figure } from '../pricing/price.js';
import type { ConfigProblem } from './format-issues.js';
import type { WindowDefaults, WindowSizes } from './types.js';

export const DEFAULT_CONTEXT = 131_072;
export const DEFAULT_OUTPUT_RESERVE = 8192;
export const DEFAULT_PROTECTED_ENTRIES = 4;
export const MAX_RESULT_CAP = 16_384;
const HIGH_SHARE = 0.8;
const LOW_SHARE = 0.5;
const RESULT_DIVISOR = 48;

type SizeKey = 'output_reserve' | 'high_water' | 'low_water' | 'max_result_tokens';

/** A model's own values; absent ones fall back to `[window]`, then to the defaults. */
export type SizeOverrides = Partial<Record<SizeKey, number>>;

/** The context a route has when nothing more specific names one: `[window] context`, else the default. */
export function fallbackContext(window: WindowDefaults): Figure {
  return window.context === undefined ? { value: DEFAULT_CONTEXT, from: 'default' } : { value: window.context, from: 'window' };
}

export type SizesResult = { ok: true; sizes: WindowSizes } | { ok: false; problems: ConfigProblem[] };

/**
 * `prefix` is the model's key path (`models.claude`), or undefined for the sizes of a
 * `provider/model` route, which only `[window]` sets besides its context.
 */
export function computeSizes(own: SizeOverrides, window: WindowDefaults, context: Figure, prefix?: string): SizesResult {
  const pick = (key: SizeKey): { value: number | undefined; key: string | undefined } => {
    const mine = own[key];
    if (mine !== undefined && prefix !== undefined) return { value: mine, key: `${prefix}.${key}` };
    const shared = window[key];
    return { value: shared, key: shared === undefined ? undefined : `window.${key}` };
  };
  const contextKey = context.from === 'config' ? `${prefix}.context` : context.from === 'window' ? 'window.context' : undefined;
  const reserve = pick('output_reserve');
  const contextValue = context.value;
  const reserveValue = reserve.value ?? DEFAULT_OUTPUT_RESERVE;
  const where = prefix === undefined ? 'a provider/model route' : prefix;
  const budget = contextValue - reserveValue;
  if (budget <= 0) {
    const said = context.from === 'catalogue' ? ' (the catalogue\'s; set context to override it)' : '';
    return fail(reserve.key ?? contextKey ?? `${where}.context`,
      `output_reserve ${reserveValue} leaves no room for a prompt in a context of ${contextValue}${said}`);
  }

  const high = pick('high_water');
  const low = pick('low_water');
  const highValue = high.value ?? Math.floor(budget * HIGH_SHARE);
  const lowValue = low.value ?? Math.floor(budget * LOW_SHARE);
  const problems: ConfigProblem[] = [];
  if (high.key !== undefined && highValue > budget) {
    problems.push({
      key: high.key,
      detail: `high_water ${highValue} does not fit ${where}: context ${contextValue} - output_reserve ${reserveValue} = ${budget}`,
    });
  } else if (lowValue >= highValue) {
    const highSays = high.key === undefined ? ` (80% of context ${contextValue} - output_reserve ${reserveValue})` : '';
    problems.push({
      key: low.key ?? high.key ?? `${where}.low_water`,
      detail: `low_water ${lowValue} must be below high_water ${highValue}${highSays}`,
    });
  }
  if (problems.length > 0) return { ok: false, problems };

  const cap = pick('max_result_tokens');
  return {
    ok: true,
    sizes: {
      context: contextValue,
      output_reserve: reserveValue,
      high_water: highValue,
      low_water: lowValue,
      max_result_tokens: cap.value ?? Math.max(1, Math.min(MAX_RESULT_CAP, Math.floor(highValue / RESULT_DIVISOR))),
      protected_entries: window.protected_entries,
    },
  };
}

function fail(key: string, detail: string): SizesResult {
  return { ok: false, problems: [{ key, detail }] };
}
