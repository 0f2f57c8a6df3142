/**
 * Startup with many stored sessions: `SessionManager.init()` over a data directory of generated
 * session logs (test/window/gen-session.ts: real folds, valid digests, written in the log's own
 * line format), each measured in a fresh process (bench/startup-child.ts). Cold: no sidecars, so
 * every log is read whole (and its sidecar written); warm: the sidecars those runs wrote.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EventBody } from '../src/core/events.js';
import { eventLine } from '../src/log/log-line.js';
import { INDEX_JOURNAL } from '../src/log/index-journal.js';
import { generateSession } from '../test/window/gen-session.js';
import { median } from './stats.js';

export interface StartupChildResult {
  initMs: number;
  /** CPU time of the whole process (every thread) during init. */
  cpuMs: number;
  sessions: number;
  readWhole: number;
  damaged: number;
  /** Bytes, after a full GC, before and after init. */
  rssBefore: number;
  rss: number;
  heapUsed: number;
}

export interface StartupRow {
  mode: 'cold' | 'warm';
  reps: number;
  sessions: number;
  readWhole: number;
  damaged: number;
  logBytes: number;
  sidecarBytes: number;
  /** Medians over the repetitions. */
  initMs: number;
  cpuMs: number;
  rssBeforeMb: number;
  rssMb: number;
  heapMb: number;
  /** Whether the page cache was dropped before each measurement. */
  dropped: boolean;
}

const run = promisify(execFile);
const MB = 2 ** 20;

export async function measureStartup(count: number, reps: number, opts: { dropCaches: boolean }): Promise<StartupRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-startup-'));
  try {
    const sessions = join(dir, 'sessions');
    const logBytes = await writeSessions(sessions, count);
    const cold: StartupChildResult[] = [];
    const warm: StartupChildResult[] = [];
    let dropped = opts.dropCaches;
    let sidecarBytes = 0;
    for (let rep = 0; rep < reps; rep++) {
      await removeSidecars(sessions);
      dropped = dropCaches(opts.dropCaches) && dropped;
      cold.push(await child(dir));
      sidecarBytes = (await stat(join(sessions, INDEX_JOURNAL))).size;
      dropped = dropCaches(opts.dropCaches) && dropped;
      warm.push(await child(dir));
    }
    return [row('cold', cold, logBytes, 0, dropped), row('warm', warm, logBytes, sidecarBytes, dropped)];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function row(mode: 'cold' | 'warm', runs: StartupChildResult[], logBytes: number, sidecarBytes: number, dropped: boolean): StartupRow {
  const mid = (pick: (r: StartupChildResult) => number) => median(runs.map(pick));
  return {
    mode, reps: runs.length, sessions: mid((r) => r.sessions), readWhole: mid((r) => r.readWhole), damaged: mid((r) => r.damaged),
    logBytes, sidecarBytes, initMs: mid((r) => r.initMs), cpuMs: mid((r) => r.cpuMs), rssBeforeMb: mid((r) => r.rssBefore) / MB, rssMb: mid((r) => r.rss) / MB,
    heapMb: mid((r) => r.heapUsed) / MB, dropped,
  };
}

/** One `SessionManager.init()` over `dataDir`, in a fresh process (startup-child.ts). */
export async function child(dataDir: string): Promise<StartupChildResult> {
  const { stdout } = await run(process.execPath, ['--expose-gc', join(import.meta.dirname, 'startup-child.js'), dataDir], { maxBuffer: 2 ** 20 });
  return JSON.parse(stdout) as StartupChildResult;
}

/**
 * `count` logs of 3 to 10 requests each (about 10 to 35 events, a few KiB to tens of KiB), under
 * ids shaped like the proxy's own. Returns their total bytes. `at` dates log i's events (ms since
 * the epoch): as generated when not given.
 */
export async function writeSessions(sessions: string, count: number, at?: (i: number) => number): Promise<number> {
  await mkdir(sessions, { recursive: true });
  let total = 0;
  const base = Date.UTC(2026, 9, 1);
  for (let i = 0; i < count; i++) {
    let text = '';
    for (const e of generateSession(i + 1, 3 + (i % 8))) {
      const { seq, ts, ...body } = e;
      text += eventLine(body as EventBody, seq, at === undefined ? ts : new Date(at(i)).toISOString()).line;
    }
    const stamp = new Date(base + i * 60_000).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    // An odd multiplier is a bijection mod 2^32: distinct, random-looking suffixes.
    const suffix = (Math.imul(i + 1, 2654435761) >>> 0).toString(16).padStart(8, '0');
    await writeFile(join(sessions, `${stamp}-${suffix}.jsonl`), text);
    total += Buffer.byteLength(text);
  }
  return total;
}

async function removeSidecars(sessions: string): Promise<void> {
  await rm(join(sessions, INDEX_JOURNAL), { force: true });
}


/** `sync; echo 1 > /proc/sys/vm/drop_caches` when asked and allowed; whether it was done. */
function dropCaches(asked: boolean): boolean {
  if (!asked) return false;
  try {
    execFileSync('sync');
    execFileSync('sh', ['-c', 'echo 1 > /proc/sys/vm/drop_caches'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
