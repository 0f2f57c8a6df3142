/**
 * `proxy migrate --from files|postgres --to files|postgres [--data-dir DIR] [--url-env VAR] [--json]`
 *
 * Copies every session log and its saved index from one store to the other, line for line (the
 * bytes the digests were computed over), then reads each log back from the target and replays
 * every request in it against its recorded digest. A session already in the target with the same
 * lines is skipped; with other lines, it is an error and nothing of it is written. The images a
 * log names go with it (the data directory's blobs/, the database's blobs table), each checked
 * against its digest. Exit 0 when every digest matches, 1 on a mismatch, a missing image or a copy
 * that reads back different, 2 on bad input.
 */
import { sha256Hex } from '../core/canonical.js';
import { ProxyError } from '../core/errors.js';
import { FileBlobStore } from '../store/file-blobs.js';
import { imageDigests } from '../store/image-digests.js';
import type { BlobStore, Store } from '../store/types.js';
import { dataDirArg, parse } from './args.js';
import { Progress } from './progress.js';
import { STORE_OPTIONS, storeFromArgs, storeKind, withStore } from './store-arg.js';
import { verifyEvents } from './verify.js';

const HELP = 'usage: proxy migrate --from files|postgres --to files|postgres [--data-dir DIR] [--url-env VAR] [--json]';

interface Report {
  sessions: number;
  moved: number;
  skipped: number;
  events: number;
  requests: number;
  /** Images copied to the target (those it held already not counted). */
  images: number;
  failed: { session: string; problem: string }[];
}

export async function migrateCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { from: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' }, ...STORE_OPTIONS }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  if (positionals.length > 0 || values.from === undefined || values.to === undefined || values.store !== undefined) throw new ProxyError('bad_argument', { detail: HELP });
  const from = storeKind(values.from, 'files');
  const to = storeKind(values.to, 'files');
  if (from === to) throw new ProxyError('bad_argument', { detail: `--from and --to are both ${from}: nothing to move\n${HELP}` });
  const report = await withStore(await storeFromArgs(values, undefined, from), async (source) =>
    withStore(await storeFromArgs(values, undefined, to), (target) => migrate(source, target, values.json !== true, dataDirArg(values['data-dir']))));
  if (values.json === true) {
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  } else {
    process.stdout.write(`${report.moved} session(s) moved from ${from} to ${to} (${report.events} events), ${report.skipped} already there; ${report.requests - report.failed.length} of ${report.requests} requests match their digests read back from ${to}\n`);
  }
  for (const f of report.failed) process.stderr.write(`proxy: ${f.session}: ${f.problem}\n`);
  return report.failed.length === 0 ? 0 : 1;
}

async function migrate(source: Store, target: Store, progress: boolean, dir: string): Promise<Report> {
  const ids = await source.listSessions();
  const bar = progress ? new Progress(ids.length, 'migrate') : undefined;
  const report: Report = { sessions: ids.length, moved: 0, skipped: 0, events: 0, requests: 0, images: 0, failed: [] };
  // The file store's images are files under the data dir; the database keeps its own.
  const from = source.blobs ?? new FileBlobStore(dir);
  const to = target.blobs ?? new FileBlobStore(dir);
  for (const id of ids) {
    const lines = await source.exportLines(id);
    if (await target.exists(id)) {
      const there = await target.exportLines(id);
      if (!sameLines(there, lines)) throw new ProxyError('bad_argument', { detail: `${target.file(id)} exists with other events than ${source.file(id)}; nothing of it was written` });
      report.skipped++;
    } else {
      await target.importLog(id, lines);
      const index = await source.readIndex(id).catch(() => undefined);
      if (index !== undefined) await target.writeIndex(id, index);
      report.moved++;
      report.events += lines.length;
    }
    // Verified from what the target holds, not from what was sent to it.
    if (!sameLines(await target.exportLines(id), lines)) {
      report.failed.push({ session: id, problem: `${target.file(id)} reads back other lines than ${source.file(id)}` });
    }
    const { events } = await target.read(id);
    report.images += await copyImages(id, [...imageDigests(events)], from, to, report);
    for (const r of verifyEvents(events, { file: target.file(id) })) {
      report.requests++;
      if (!r.ok) report.failed.push({ session: id, problem: `request seq ${r.seq}: ${r.problem ?? 'digest mismatch'}` });
    }
    bar?.tick();
  }
  bar?.end();
  return report;
}

/** Copies the digests the target lacks; an image missing from the source or not matching its digest fails the session. */
async function copyImages(id: string, digests: string[], from: BlobStore, to: BlobStore, report: Report): Promise<number> {
  if (digests.length === 0) return 0;
  const there = await to.get(digests);
  const wanted = digests.filter((d) => !there.has(d));
  const found = await from.get(wanted);
  let copied = 0;
  for (const sha256 of wanted) {
    const bytes = found.get(sha256);
    if (bytes === undefined || sha256Hex(bytes) !== sha256) {
      report.failed.push({ session: id, problem: `image ${sha256} is ${bytes === undefined ? 'missing from' : 'damaged in'} the source store` });
      continue;
    }
    await to.put(sha256, bytes);
    copied++;
  }
  return copied;
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((l, i) => l === b[i]);
}
