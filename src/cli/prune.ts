/**
 * `proxy sessions prune --idle-days N [--dry-run] [--json] [--data-dir DIR] [--config PATH]`:
 * removes the logs of the sessions whose last event is more than N days old and that no running
 * proxy holds (docs/decisions/0024-idle-sessions-removed-by-the-operator.md). N may not be less
 * than the proxy's `[sessions] locate_days` (the config's, else its default), so no running proxy
 * of that config would locate one of them again; with `locate_days = 0` every session stays
 * locatable and nothing is removed. On either store (--store postgres: every replica's sessions).
 * Then the images no remaining log names and no proxy has written or marked for as long
 * (docs/decisions/0026-images-no-log-names-removed.md).
 */
import { DEFAULT_LOCATE_DAYS } from '../config/build.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/types.js';
import { ProxyError } from '../core/errors.js';
import type { RemoveOutcome } from '../log/remove-idle.js';
import type { ImagesRemoved, Store } from '../store/types.js';
import { intArg, parse } from './args.js';
import { STORE_OPTIONS, STORE_USAGE, storeFromArgs, withStore } from './store-arg.js';

const HELP = `usage: proxy sessions prune --idle-days N [--dry-run] [--json] ${STORE_USAGE} [--config PATH]

Removes the logs of sessions idle more than N days (by their last event) that no running proxy
holds, then the images (blobs) no remaining log names that no proxy has written or marked in N
days. N is at least the config's [sessions] locate_days (default ${DEFAULT_LOCATE_DAYS}).
--dry-run lists what would go and removes nothing.`;

const OPTIONS = {
  'idle-days': { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  ...STORE_OPTIONS,
  config: { type: 'string' },
} as const;

const DAY_MS = 86_400_000;
/** Logs looked at together. */
const AT_ONCE = 8;

export interface PruneReport {
  idle_days: number;
  /** Sessions idle since before this time. */
  idle_before: string;
  dry_run: boolean;
  removed: { id: string; last_active: string | null; bytes: number }[];
  /** Held by a running process: a proxy may still write them. */
  in_use: { id: string; detail: string }[];
  /** Logs that cannot be read to date them (a damaged line): left as they are. */
  unreadable: { id: string; detail: string }[];
  /** Sessions listed and not idle that long. */
  kept: number;
  /** The images no remaining log names, removed; those a log names or a proxy marked since, kept. */
  images: ImagesRemoved;
}

export async function pruneCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  if (positionals.length > 0) throw new ProxyError('bad_argument', { detail: `unexpected argument ${JSON.stringify(positionals[0])}\n${HELP}` });
  if (values['idle-days'] === undefined) throw new ProxyError('bad_argument', { detail: `--idle-days is required\n${HELP}` });
  const idleDays = intArg('--idle-days', values['idle-days']);
  const config: Config | undefined = values.config === undefined ? undefined : loadConfig({ path: values.config, env: process.env });
  checkAgainstHorizon(idleDays, config?.sessions.locateDays ?? DEFAULT_LOCATE_DAYS, values.config);
  const store = await storeFromArgs(values, config);
  const report = await withStore(store, (s) => prune(s, Date.now() - idleDays * DAY_MS, values['dry-run'] === true, idleDays));
  process.stdout.write(values.json === true ? JSON.stringify(report, null, 2) + '\n' : render(report) + '\n');
  return 0;
}

/** Whether sessions idle `idleDays` are past every running proxy's reach (locate_days, decision 0023). */
function checkAgainstHorizon(idleDays: number, locateDays: number, configPath: string | undefined): void {
  const whose = configPath === undefined ? `the default locate_days (${locateDays}; pass --config to read the proxy's own)` : `locate_days in ${configPath} (${locateDays})`;
  if (idleDays === 0) throw new ProxyError('bad_argument', { detail: '--idle-days must be at least 1' });
  if (locateDays === 0) {
    throw new ProxyError('bad_argument', { detail: `${configPath ?? 'the config'} sets locate_days = 0: a running proxy may continue any stored session, so none is removed. Set [sessions] locate_days first.` });
  }
  if (idleDays < locateDays) {
    throw new ProxyError('bad_argument', { detail: `--idle-days ${idleDays} is less than ${whose}: a running proxy may still continue those sessions. Use --idle-days ${locateDays} or more.` });
  }
}

/** Every listed session's log, removed when idle since before `idleBefore` and held by nobody. */
export async function prune(store: Store, idleBefore: number, dryRun: boolean, idleDays: number): Promise<PruneReport> {
  const pruner = store.pruner;
  // A crashed proxy's first syncs go back into their logs first: recovered after a removal, one would make its log again.
  await pruner.recoverFirstSyncs();
  const report: PruneReport = {
    idle_days: idleDays, idle_before: new Date(idleBefore).toISOString(), dry_run: dryRun, removed: [], in_use: [], unreadable: [], kept: 0,
    images: { removed: 0, bytes: 0, named: 0, recent: 0 },
  };
  const ids = await store.listSessions();
  // A few at once: each log is a dozen file system calls, most of them a trip through the thread pool.
  for (let i = 0; i < ids.length; i += AT_ONCE) {
    const batch = ids.slice(i, i + AT_ONCE);
    const outcomes: RemoveOutcome[] = await Promise.all(batch.map((id) => pruner.removeIdle(id, idleBefore, dryRun)));
    outcomes.forEach((outcome, j) => {
      const id = batch[j]!;
      if (outcome.kind === 'removed') report.removed.push({ id, last_active: outcome.lastActive, bytes: outcome.bytes });
      else if (outcome.kind === 'in_use') report.in_use.push({ id, detail: outcome.detail });
      else if (outcome.kind === 'unreadable') report.unreadable.push({ id, detail: outcome.detail });
      else if (outcome.kind === 'active') report.kept++;
    });
  }
  // After the logs: an image only a removed log named is named by none now (a dry run's logs are
  // still there, and are not read for names).
  report.images = await pruner.removeUnnamedImages(idleBefore, dryRun, dryRun ? report.removed.map((x) => x.id) : []);
  return report;
}

function render(r: PruneReport): string {
  const bytes = r.removed.reduce((sum, x) => sum + x.bytes, 0);
  const verb = r.dry_run ? 'would remove' : 'removed';
  const lines = [`${verb} ${r.removed.length} session log${r.removed.length === 1 ? '' : 's'} idle since before ${r.idle_before} (${(bytes / 2 ** 20).toFixed(1)} MiB); kept ${r.kept} more recent`];
  for (const x of r.removed) lines.push(`  ${x.id}  last active ${x.last_active ?? 'never (no event)'}`);
  if (r.in_use.length > 0) {
    lines.push(`left ${r.in_use.length} idle that long but held by a running process:`);
    for (const x of r.in_use) lines.push(`  ${x.id}  ${x.detail}`);
  }
  if (r.unreadable.length > 0) {
    lines.push(`left ${r.unreadable.length} that cannot be read to date them:`);
    for (const x of r.unreadable) lines.push(`  ${x.id}  ${x.detail}`);
  }
  const i = r.images;
  // A store without images says nothing of them.
  if (i.removed + i.named + i.recent > 0) lines.push(`${verb} ${i.removed} image${i.removed === 1 ? '' : 's'} no log names (${(i.bytes / 2 ** 20).toFixed(1)} MiB); kept ${i.named} as old that a log names and ${i.recent} written or marked since`);
  return lines.join('\n');
}
