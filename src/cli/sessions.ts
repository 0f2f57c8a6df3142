/**
 * `proxy sessions [--json] [--data-dir DIR] [--config PATH]`: every stored session with its
 * model, requests, prompt tokens, token cache rate (sum over sum; unknown, not 0, when nothing
 * reported a cache read), cost, last activity and each client key's requests and cost (`key_name`
 * in the log); most recently active first; then each client key over every session
 * (stats/key-totals.ts). `proxy sessions prune` removes idle ones (prune.ts).
 */
import { ProxyError } from '../core/errors.js';
import { listSessionSummaries } from '../stats/collect.js';
import { renderSessions } from '../stats/render.js';
import { parse } from './args.js';
import { pruneCommand } from './prune.js';
import { STORE_USAGE, withStore } from './store-arg.js';
import { STATS_OPTIONS, statsSources } from './stats.js';

const HELP = `usage: proxy sessions [--json] ${STORE_USAGE} [--config PATH]
       proxy sessions prune --idle-days N [--dry-run] [--json] ${STORE_USAGE} [--config PATH]`;

export async function sessionsCommand(args: string[]): Promise<number> {
  if (args[0] === 'prune') return pruneCommand(args.slice(1));
  const { values, positionals } = parse(args, STATS_OPTIONS, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  if (positionals.length > 0) throw new ProxyError('bad_argument', { detail: `unexpected argument ${JSON.stringify(positionals[0])}\n${HELP}` });
  const { store, prices } = await statsSources(values);
  const report = await withStore(store, (s) => listSessionSummaries(s, prices));
  process.stdout.write(values.json === true ? JSON.stringify(report, null, 2) + '\n' : renderSessions(report) + '\n');
  return 0;
}
