/**
 * A route's figures (pricing/figures.ts) and window sizes from its model id, its own config and
 * the catalogue: resolved at build for a `[models]` entry, and once per model for a
 * `provider/model` route (memoised; the catalogue is read at the time the config loaded).
 */
import { lookupCatalogue } from '../pricing/catalogue.js';
import { takesExplicitBreakpoints } from '../core/openai-family.js';
import { GPT56_WRITE_FACTOR, resolveFigures, type OwnFigures, type RouteFigures } from '../pricing/figures.js';
import { presetOf, type PresetName } from './presets.js';
import type { ProviderConfig, ProviderRouteFigures, WindowDefaults, WindowSizes } from './types.js';
import { computeSizes, fallbackContext, type SizeOverrides, type SizesResult } from './window-sizes.js';

/** `prefix`: the `[models]` entry's key path, for the errors its own values cause. */
export function sizeRoute(
  preset: PresetName, model: string, own: OwnFigures & SizeOverrides, window: WindowDefaults, at: Date, prefix?: string,
): { figures: RouteFigures; sizes: SizesResult } {
  const provider = presetOf(preset).catalogue;
  const entry = provider === undefined ? undefined : lookupCatalogue(provider, model, at);
  // GPT-5.6+ writes cost 1.25x input wherever the model is served (figures.ts); the catalogue may predate the family.
  const writeFactor = takesExplicitBreakpoints(model) ? GPT56_WRITE_FACTOR : undefined;
  const figures = resolveFigures(own, entry, fallbackContext(window), writeFactor);
  const sizes = computeSizes(own, window, figures.context, prefix);
  if (sizes.ok) {
    const from = own.output_reserve !== undefined && prefix !== undefined ? 'config' : window.output_reserve !== undefined ? 'window' : 'default';
    figures.outputReserve = { value: sizes.sizes.output_reserve, from };
  }
  return { figures, sizes };
}

/** Models a client may name are not bounded: past this many, figures are resolved per request. */
const MEMO_LIMIT = 1024;

export function providerRouteFigures(
  providers: Record<string, ProviderConfig>, window: WindowDefaults, defaultSizes: WindowSizes, at: Date,
): ProviderRouteFigures {
  const memo = new Map<string, { figures: RouteFigures; sizes: WindowSizes }>();
  return {
    get(providerName, model) {
      const key = `${providerName}\n${model}`;
      const known = memo.get(key);
      if (known !== undefined) return known;
      const provider = providers[providerName];
      const resolved = provider === undefined ? undefined : sizeRoute(provider.preset, model, {}, window, at);
      const fallback = fallbackContext(window);
      // A [window] water mark that does not fit the catalogue's context: the sizes checked at load.
      const out = resolved?.sizes.ok === true
        ? { figures: resolved.figures, sizes: resolved.sizes.sizes }
        : {
          figures: {
            ...(resolved?.figures ?? resolveFigures({}, undefined, fallback)),
            context: fallback,
            outputReserve: { value: defaultSizes.output_reserve, from: window.output_reserve === undefined ? 'default' as const : 'window' as const },
          },
          sizes: defaultSizes,
        };
      if (memo.size < MEMO_LIMIT) memo.set(key, out);
      return out;
    },
  };
}
