/**
 * A route's figures, each with its source: the `[models]` entry's own value wins, then the
 * catalogue's, then `[window]`, then the built-in default (context only; a price has no default:
 * what neither config nor catalogue gives stays unknown, never 0). Pure.
 */
import type { CatalogueEntry } from './catalogue.js';
import { PRICE_KINDS, type Figure, type Price, type PriceKind } from './price.js';

export interface RouteFigures {
  /** The catalogue entry the route matched. */
  catalogue?: { provider: string; model: string };
  /** The context the window is sized for. */
  context: Figure;
  /** What every request caps the reply at (the catalogue gives no output limit); set with the sizes. */
  outputReserve?: Figure;
  /** Each price figure known, with its source. */
  prices: Partial<Record<PriceKind, Figure>>;
  /** The route's prices: present when input and output are both known. */
  price?: Price;
  /** Explicit cache storage, USD per million token-hours (config only); absent: unknown. */
  storage?: Figure;
}

export interface OwnFigures {
  context?: number;
  price?: Partial<Price>;
}

/**
 * OpenAI, GPT-5.6 and later: "cache writes cost 1.25x the uncached input token rate" (the prompt
 * caching guide); earlier models have no write fee.
 */
export const GPT56_WRITE_FACTOR = 1.25;

/**
 * `fallbackContext`: `[window] context` when set (from 'window'), else the built-in default.
 * `writeFactor`: a cache write price this many times the input price, unless the config names one
 * (a model family whose writes cost more than plain input, which the catalogue may not know).
 */
export function resolveFigures(own: OwnFigures, entry: CatalogueEntry | undefined, fallbackContext: Figure, writeFactor?: number): RouteFigures {
  const context: Figure = own.context !== undefined ? { value: own.context, from: 'config' }
    : entry?.context !== undefined ? { value: entry.context, from: 'catalogue' }
      : fallbackContext;
  const prices: Partial<Record<PriceKind, Figure>> = {};
  for (const kind of PRICE_KINDS) {
    const mine = own.price?.[kind];
    const theirs = entry?.price[kind];
    if (mine !== undefined) prices[kind] = { value: mine, from: 'config' };
    else if (theirs !== undefined) prices[kind] = { value: theirs, from: 'catalogue' };
  }
  // Over the catalogue's figure too: @pydantic/genai-prices 0.1.8 lists gpt-5.6 writes at the input price.
  if (writeFactor !== undefined && own.price?.cache_write === undefined && prices.input !== undefined) {
    prices.cache_write = { value: prices.input.value * writeFactor, from: 'default' };
  }
  const figures: RouteFigures = { context, prices };
  if (own.price?.cache_storage !== undefined) figures.storage = { value: own.price.cache_storage, from: 'config' };
  if (entry !== undefined) figures.catalogue = { provider: entry.provider, model: entry.model };
  const { input, output } = prices;
  if (input !== undefined && output !== undefined) {
    const price: Price = { input: input.value, output: output.value };
    for (const kind of ['cache_read', 'cache_write', 'cache_write_1h'] as const) {
      const figure = prices[kind];
      if (figure !== undefined) price[kind] = figure.value;
    }
    if (figures.storage !== undefined) price.cache_storage = figures.storage.value;
    figures.price = price;
  }
  return figures;
}
