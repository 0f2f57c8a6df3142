/**
 * `proxy sessions prune` over a data directory of many stored sessions, most of them idle past the
 * horizon (docs/decisions/0024-idle-sessions-removed-by-the-operator.md): how long the command
 * takes, what it frees, and what a start (SessionManager.init(), in a fresh process as
 * bench/startup.ts measures it) costs before and after, since a start lists every log and reads
 * every sidecar line (the first start after the removal also compacts the journal without theirs).
 * Beside them, images no log names, old enough to go: with any image in `blobs/`, the command reads
 * every remaining log for the images it names (docs/decisions/0026-images-no-log-names-removed.md).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { INDEX_JOURNAL } from '../src/log/index-journal.js';
import type { Line } from './session-sections.js';
import { child, writeSessions, type StartupChildResult } from './startup.js';
import { fmt } from './stats.js';

const run = promisify(execFile);
const DAY = 86_400_000;
const SESSIONS = 20_000;
/** One in this many was active yesterday; the rest were last active 60 to 120 days ago. */
const RECENT_EVERY = 10;
const MIB = 2 ** 20;
/** Images no log names, last written 60 days ago, of IMAGE_BYTES each. */
const IMAGES = 1_000;
const IMAGE_BYTES = 50 * 1024;

interface Start {
  when: string;
  logs: number;
  journalBytes: number;
  start: StartupChildResult;
}

export async function pruneSection(line: Line): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-prune-'));
  try {
    const sessions = join(dir, 'sessions');
    const now = Date.now();
    const logBytes = await writeSessions(sessions, SESSIONS, (i) => (i % RECENT_EVERY === 0 ? now - DAY : now - (60 + (i % 60)) * DAY));
    await mkdir(join(dir, 'blobs'));
    const written = new Date(now - 60 * DAY);
    for (let i = 0; i < IMAGES; i++) {
      const file = join(dir, 'blobs', i.toString(16).padStart(64, '0'));
      await writeFile(file, Buffer.alloc(IMAGE_BYTES, i % 256));
      await utimes(file, written, written);
    }
    const starts: Start[] = [];
    const measure = async (when: string) => {
      const start = await child(dir);
      starts.push({ when, logs: (await readdir(sessions)).filter((f) => f.endsWith('.jsonl')).length, journalBytes: (await stat(join(sessions, INDEX_JOURNAL))).size, start });
    };
    await child(dir); // writes the sidecars: what every start after a proxy's first has
    await measure('before');
    const cli = resolve(import.meta.dirname, '../../dist/cli/main.js');
    const t0 = performance.now();
    const { stdout } = await run(process.execPath, [cli, 'sessions', 'prune', '--idle-days', '30', '--json', '--data-dir', dir], { maxBuffer: 64 * MIB });
    const pruneMs = performance.now() - t0;
    const report = JSON.parse(stdout) as { removed: { bytes: number }[]; kept: number; in_use: unknown[]; images: { removed: number; bytes: number; named: number } };
    const freed = report.removed.reduce((sum, r) => sum + r.bytes, 0);
    await measure('first start after');
    await measure('the next start');

    line('## Pruning idle sessions: the command, and a start before and after');
    line('');
    line(`${SESSIONS.toLocaleString('en')} stored sessions (generated logs of 3 to 10 requests, ${fmt(logBytes / MIB)} MiB), one in ${RECENT_EVERY} active yesterday and the rest`);
    line('60 to 120 days ago, then `proxy sessions prune --idle-days 30` as a process of its own; a start is `SessionManager.init()` in a');
    line('fresh process with the sidecars a proxy leaves (bench/startup.ts). docs/decisions/0024-idle-sessions-removed-by-the-operator.md.');
    line('');
    line(`Prune: ${fmt(pruneMs)} ms for ${SESSIONS.toLocaleString('en')} logs (${fmt((pruneMs * 1000) / SESSIONS)} µs a log, the process's start included); removed ${report.removed.length}, ${fmt(freed / MIB)} MiB; kept ${report.kept}; held ${report.in_use.length}.`);
    line(`Images: ${IMAGES.toLocaleString('en')} that no log names, ${IMAGE_BYTES / 1024} KiB each, written 60 days ago; removed ${report.images.removed} (${fmt(report.images.bytes / MIB)} MiB), with the ${report.kept} logs left read for their names in the same run.`);
    line('');
    line('| start | logs | sidecar journal (KiB) | init (ms) | CPU (ms) | RSS after (MiB) |');
    line('|---|---:|---:|---:|---:|---:|');
    for (const s of starts) line(`| ${s.when} | ${s.logs} | ${fmt(s.journalBytes / 1024)} | ${fmt(s.start.initMs)} | ${fmt(s.start.cpuMs)} | ${fmt(s.start.rss / MIB)} |`);
    line('');
    const expected = SESSIONS / RECENT_EVERY;
    const ok = report.removed.length === SESSIONS - expected && report.kept === expected && starts[2]!.logs === expected && starts[2]!.start.sessions === expected
      && report.images.removed === IMAGES && (await readdir(join(dir, 'blobs'))).length === 0;
    line(`${ok ? 'As expected' : 'NOT as expected'}: the idle logs go, the ${expected} recent ones stay and are the only sessions a start finds; the start after the`);
    line('removal compacts the sidecar journal to their lines; every image goes.');
    line('');
    return ok;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
