/**
 * `proxy stats SESSION [--json] [--data-dir DIR] [--config PATH]`: one session's requests (prompt,
 * cached and written tokens, reuse of the predecessor's prompt, break cause, cost) and its totals,
 * with the token cache rate as sum(cached) / sum(prompt). Costs are at the config's prices when
 * --config is given, else as the provider reported them, else unknown.
 */
import { loadConfig } from '../config/load.js';
import { ProxyError } from '../core/errors.js';
import { LogStore } from '../log/store.js';
import { readSessionStats } from '../stats/collect.js';
import { NO_PRICES, pricesFromConfig, type PriceBook } from '../stats/prices.js';
import { renderStats } from '../stats/render.js';
import { dataDirArg, parse } from './args.js';

const HELP = 'usage: proxy stats SESSION [--json] [--data-dir DIR] [--config PATH]';

export const STATS_OPTIONS = {
  json: { type: 'boolean' },
  'data-dir': { type: 'string' },
  config: { type: 'string' },
} as const;

/** The store and prices the stats commands read: --data-dir, else the config's data_dir, else $PROXY_DATA_DIR or ./data. */
export function statsSources(values: { 'data-dir'?: string; config?: string }): { store: LogStore; prices: PriceBook } {
  if (values.config === undefined) return { store: new LogStore(dataDirArg(values['data-dir'])), prices: NO_PRICES };
  const config = loadConfig({ path: values.config, env: process.env });
  return { store: new LogStore(values['data-dir'] ?? config.dataDir), prices: pricesFromConfig(config) };
}

export async function statsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, STATS_OPTIONS, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const [session, ...extra] = positionals;
  if (session === undefined || extra.length > 0) throw new ProxyError('bad_argument', { detail: HELP });
  const { store, prices } = statsSources(values);
  const stats = await readSessionStats(store, session, prices);
  process.stdout.write(values.json === true ? JSON.stringify(stats, null, 2) + '\n' : renderStats(stats) + '\n');
  return 0;
}
