/**
 * `proxy stats SESSION [--json] [--data-dir DIR] [--config PATH]`: one session's requests (prompt,
 * cached and written tokens, reuse of the predecessor's prompt, break cause, cost) and its totals,
 * with the token cache rate as sum(cached) / sum(prompt). Costs are at the config's prices when
 * --config is given, else as the provider reported them, else unknown.
 */
import { loadConfig } from '../config/load.js';
import { ProxyError } from '../core/errors.js';
import { readSessionStats } from '../stats/collect.js';
import { NO_PRICES, pricesFromConfig, type PriceBook } from '../stats/prices.js';
import { renderStats } from '../stats/render.js';
import type { Store } from '../store/types.js';
import { parse } from './args.js';
import { STORE_OPTIONS, STORE_USAGE, storeFromArgs, withStore } from './store-arg.js';

const HELP = `usage: proxy stats SESSION [--json] ${STORE_USAGE} [--config PATH]`;

export const STATS_OPTIONS = {
  json: { type: 'boolean' },
  ...STORE_OPTIONS,
  config: { type: 'string' },
} as const;

/** The store and prices the stats commands read: the store options, else the config's [store] and data_dir (store-arg.ts). */
export async function statsSources(values: { 'data-dir'?: string; store?: string; 'url-env'?: string; config?: string }): Promise<{ store: Store; prices: PriceBook }> {
  if (values.config === undefined) return { store: await storeFromArgs(values), prices: NO_PRICES };
  const config = loadConfig({ path: values.config, env: process.env });
  return { store: await storeFromArgs(values, config), prices: pricesFromConfig(config) };
}

export async function statsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, STATS_OPTIONS, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const [session, ...extra] = positionals;
  if (session === undefined || extra.length > 0) throw new ProxyError('bad_argument', { detail: HELP });
  const { store, prices } = await statsSources(values);
  const stats = await withStore(store, (s) => readSessionStats(s, session, prices));
  process.stdout.write(values.json === true ? JSON.stringify(stats, null, 2) + '\n' : renderStats(stats) + '\n');
  return 0;
}
