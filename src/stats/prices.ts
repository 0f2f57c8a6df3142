/**
 * What a reply cost, for the stats: at the configured prices when the route has them, else the
 * figure the provider reported, else unknown. (The live metrics prefer the provider's figure and
 * keep the priced split; a stats reader who passes a config asked for its prices.)
 */
import type { Config, Price } from '../config/types.js';
import type { Usage } from '../core/types.js';
import { costOf } from './cost.js';

/** Prices of a route (the `route` a request logged), or undefined when it has none. */
export type PriceBook = (route: string) => Price | undefined;

export type CostSource = 'config' | 'provider';

export const NO_PRICES: PriceBook = () => undefined;

/** The `[models.NAME].price` entries; a `provider/model` route has no price. */
export function pricesFromConfig(config: Pick<Config, 'models'>): PriceBook {
  return (route) => (Object.hasOwn(config.models, route) ? config.models[route]?.price : undefined);
}

export function costOfUsage(price: Price | undefined, usage: Usage | undefined): { usd: number; source: CostSource } | undefined {
  const split = price === undefined ? undefined : costOf({ price }, usage);
  if (split !== undefined) return { usd: split.input + split.cache_read + split.cache_write + split.output, source: 'config' };
  if (usage?.cost_usd !== undefined) return { usd: usage.cost_usd, source: 'provider' };
  return undefined;
}
