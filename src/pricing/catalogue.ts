/**
 * The model catalogue: a model's context window and prices from @pydantic/genai-prices, as the
 * trimmed copy scripts/catalogue-data.mjs writes (catalogue-data.ts): the package's own bundle
 * held ~11 MiB of a running proxy for data it mostly never reads. Matching follows the package's
 * `calcPrice` rules (provider by id, then a model's match rule, then the provider's fallbacks,
 * then with a compact date written out); test/pricing/catalogue-data.test.ts holds every
 * model id to the package's own answer. The proxy's own rule on top is in docs/decisions.md (A
 * maintained model catalogue). Pure: the time a price holds at is passed in.
 */
import type { Price } from './price.js';
import { CATALOGUE_DATA_VERSION, CATALOGUE_JSON } from './catalogue-data.js';

/** Name and version of the catalogue's package; a test holds it to the installed one. */
export const CATALOGUE = { name: '@pydantic/genai-prices', version: CATALOGUE_DATA_VERSION } as const;

export interface CatalogueEntry {
  /** The catalogue's provider and model id that matched. */
  provider: string;
  model: string;
  context?: number;
  price: Partial<Price>;
}

export type MatchLogic =
  | { and: MatchLogic[] } | { or: MatchLogic[] } | { equals: string } | { starts_with: string }
  | { ends_with: string } | { contains: string } | { regex: string };

type Tiered = { base: number };
type ModelPrice = Partial<Record<'input_mtok' | 'cache_read_mtok' | 'cache_write_mtok' | 'cache_write_1h_mtok' | 'output_mtok', number | Tiered>>;
type Constraint = { type: 'start_date'; start_date: string } | { type: 'time_of_date' };

interface ModelInfo {
  id: string;
  match: MatchLogic;
  context_window?: number;
  prices: ModelPrice | { constraint?: Constraint; prices: ModelPrice }[];
}

interface Provider {
  id: string;
  provider_match?: MatchLogic;
  fallback_model_providers?: string[];
  models: ModelInfo[];
}

let providers: Provider[] | undefined;

/** Parsed on first use: a proxy whose routes name no catalogue provider never holds it. */
function catalogue(): Provider[] {
  providers ??= JSON.parse(CATALOGUE_JSON) as Provider[];
  return providers;
}

// `-20250929` or `-2025-09-29` at the end: a dated snapshot of the model the catalogue lists undated.
const DATE_SUFFIX = /-20\d{2}-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$/;

/**
 * The entry for an upstream model id at one of the catalogue's providers: the id as the
 * catalogue's own rules match it, then without a date suffix, then without an `org/` prefix.
 */
export function lookupCatalogue(provider: string, model: string, at: Date): CatalogueEntry | undefined {
  const all = catalogue();
  const seller = findProvider(all, provider);
  if (seller === undefined) return undefined;
  const tried = new Set<string>();
  for (const id of candidates(model)) {
    if (tried.has(id)) continue;
    tried.add(id);
    const found = findModel(all, seller, id);
    if (found !== undefined) return entryOf(seller.id, found, at);
  }
  return undefined;
}

/** The package's provider lookup by id: the id itself, else the first provider whose rule matches it. */
function findProvider(all: Provider[], id: string): Provider | undefined {
  const key = id.trim().toLowerCase();
  return all.find((p) => p.id === key) ?? all.find((p) => p.provider_match !== undefined && matches(p.provider_match, key));
}

/** The provider's first model whose rule matches, then its fallbacks'; then the same with `-YYYYMMDD` written `-YYYY-MM-DD`. */
function findModel(all: Provider[], provider: Provider, id: string): ModelInfo | undefined {
  const found = modelAt(all, provider, id, true);
  if (found !== undefined) return found;
  const dated = expandDates(id);
  return dated === id ? undefined : modelAt(all, provider, dated, true);
}

function modelAt(all: Provider[], provider: Provider, id: string, fallbacks: boolean): ModelInfo | undefined {
  const own = provider.models.find((m) => matches(m.match, id));
  if (own !== undefined || !fallbacks) return own;
  for (const name of provider.fallback_model_providers ?? []) {
    const other = all.find((p) => p.id === name);
    const found = other === undefined ? undefined : modelAt(all, other, id, false);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The package's match rules: case-insensitive but for `regex`. */
export function matches(rule: MatchLogic, id: string): boolean {
  if ('or' in rule) return rule.or.some((r) => matches(r, id));
  if ('and' in rule) return rule.and.every((r) => matches(r, id));
  const lower = id.toLowerCase();
  if ('equals' in rule) return lower === rule.equals.toLowerCase();
  if ('starts_with' in rule) return lower.startsWith(rule.starts_with.toLowerCase());
  if ('ends_with' in rule) return lower.endsWith(rule.ends_with.toLowerCase());
  if ('contains' in rule) return lower.includes(rule.contains.toLowerCase());
  return new RegExp(rule.regex).test(id);
}

const COMPACT_DATE = /(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)/g;

/** `-20250929` as `-2025-09-29`, where it is a real date. */
function expandDates(id: string): string {
  return id.replace(COMPACT_DATE, (whole: string, dash: string, y: string, m: string, d: string) => {
    const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
    return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d) ? `${dash}${y}-${m}-${d}` : whole;
  });
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
  const set = (kind: keyof Price, value: ModelPrice[keyof ModelPrice]) => {
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
function baseOf(value: ModelPrice[keyof ModelPrice]): number | undefined {
  if (typeof value === 'number') return value;
  return value === undefined ? undefined : value.base;
}
