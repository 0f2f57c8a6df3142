/**
 * Which prices a logged request is costed at, for the stats: its route's, as the config and the
 * catalogue give them (the route name the request logged: a `[models]` name or `provider/model`).
 * A stats reader who passes no config gets the provider's reported figures only.
 */
import type { Config } from '../config/types.js';
import type { Price } from '../pricing/price.js';

/** Prices of a route (the `route` a request logged), or undefined when it has none. */
export type PriceBook = (route: string) => Price | undefined;

export const NO_PRICES: PriceBook = () => undefined;

export function pricesFromConfig(config: Pick<Config, 'models' | 'providers' | 'providerRoutes'>): PriceBook {
  return (route) => {
    if (Object.hasOwn(config.models, route)) return config.models[route]?.figures.price;
    const slash = route.indexOf('/');
    if (slash <= 0 || !Object.hasOwn(config.providers, route.slice(0, slash))) return undefined;
    return config.providerRoutes.get(route.slice(0, slash), route.slice(slash + 1)).figures.price;
  };
}
