/**
 * The model catalogue: a model's context window and prices from @pydantic/genai-prices, the data
 * shipped in the package (its remote update is never called: the proxy fetches nothing at run
 * time). The matching rule is in docs/decisions.md (A maintained model catalogue). Pure: the time
 * a price holds at is passed in.
 */
import { calcPrice, type ModelInfo, type ModelPrice } from '@pydantic/genai-prices';
import type { Price } from './price.js';

/** Name and version of the catalogue's package; a test holds it to the installed one. */
export const CATALOGUE = { name: '@pydantic/genai-prices', version: '0.1.8' } as const;

export interface CatalogueEntry {
  /** The catalogue's provider and model id that matched. */
  provider: string;
  model: string;
  context?: number;
  price: Partial<Price>;
}

// `-20250929` or `-2025-09-29` at the end: a dated snapshot of the model the catalogue lists undated.
const DATE_SUFFIX = /-20\d{2}-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$/;

/**
 * The entry for an upstream model id at one of the catalogue's providers: the id as the
 * catalogue's own rules match it, then without a date suffix, then without an `org/` prefix.
 */
export function lookupCatalogue(provider: string, model: string, at: Date): CatalogueEntry | undefined {
  const tried = new Set<string>();
  for (const id of candidates(model)) {
    if (tried.has(id)) continue;
    tried.add(id);
    const found = calcPrice({}, id, { providerId: provider, timestamp: at });
    if (found !== null) return entryOf(found.provider.id, found.model, at);
  }
  return undefined;
}

function candidates(model: string): string[] {
  const id = model.trim();
  const undated = id.replace(DATE_SUFFIX, '');
  const slash = undated.lastIndexOf('/');
  return slash < 0 ? [id, undated] : [id, undated, undated.slice(slash + 1)];
}

function entryOf(provider: string, model: ModelInfo, at: Date): CatalogueEntry {
  const prices = pricesAt(model, at);
  const price: Partial<Price> = {};
  const set = (kind: keyof Price, value: ModelPrice[string]) => {
    const base = baseOf(value);
    if (base !== undefined) price[kind] = base;
  };
  set('input', prices.input_mtok);
  set('cache_read', prices.cache_read_mtok);
  set('cache_write', prices.cache_write_mtok);
  set('cache_write_1h', prices.cache_write_1h_mtok);
  set('output', prices.output_mtok);
  return { provider, model: model.id, ...(model.context_window === undefined ? {} : { context: model.context_window }), price };
}

/**
 * The prices in force at `at` by date. Time-of-day prices (DeepSeek's off-peak discounts) are
 * skipped: a route's prices are fixed when the config loads, so the standard price is the one kept.
 */
function pricesAt(model: ModelInfo, at: Date): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  for (let i = model.prices.length - 1; i >= 0; i--) {
    const { constraint, prices } = model.prices[i]!;
    if (constraint === undefined) return prices;
    if (constraint.type === 'start_date' && at >= new Date(constraint.start_date)) return prices;
  }
  return model.prices[0]!.prices;
}

/** A tiered price (more above a prompt size) is taken at its base: the price below the first tier. */
function baseOf(value: ModelPrice[string]): number | undefined {
  if (typeof value === 'number') return value;
  return value === undefined ? undefined : value.base;
}
