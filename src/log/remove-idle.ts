/**
 * Removing the log of a session idle past a time (`proxy sessions prune`,
 * docs/decisions/0024-idle-sessions-removed-by-the-operator.md). Only a log nobody writes is
 * removed. Its last event says how long it has been idle, read first without a lock (a recent log
 * is left at once: a proxy opening it meanwhile is never refused), then again under the lock a
 * writer takes to open an existing log, so a session continued since the first look stays. A log
 * another live process holds (its lock file, or its list of new logs: held-list.ts) is left and
 * named. Its sidecar lines stay in the journal until a start compacts it without them (files.ts);
 * a crash between the unlink and the lock's release leaves a stale lock, which the next taker
 * removes as it removes any dead process's.
 */
import { rm, stat, unlink } from 'node:fs/promises';
import { ProxyError } from '../core/errors.js';
import { heldElsewhere } from './held-list.js';
import { acquireLock, refuseLegacyHolder, type FileLock } from './lock.js';
import { readEventBefore, readLog } from './reader.js';

/** What became of one log. */
export type RemoveOutcome =
  /** Idle past the time: removed (or, in a dry run, it would have been). */
  | { kind: 'removed'; bytes: number; lastActive: string | null }
  /** Its last event is at or after the time. */
  | { kind: 'active'; lastActive: string | null }
  /** A live process holds it: a proxy may still write it (`detail` names the process). */
  | { kind: 'in_use'; detail: string }
  /** No such log (removed since it was listed). */
  | { kind: 'missing' }
  /** Its lines cannot be read to date it (a malformed line that is not a torn tail): left as it is. */
  | { kind: 'unreadable'; detail: string };

export interface LogPlaces {
  id: string;
  file: string;
  lockFile: string;
  /** Made by the caller: a data directory no proxy has served since its logs were copied in has none yet. */
  lockDir: string;
  legacyLockFile: string;
  /** The session's sidecar file from before the journal, removed with the log when there is one. */
  sidecarFile: string;
}

/** Removes the log at `places.file` when its last event is before `idleBefore` (ms) and nobody holds it. */
export async function removeIdleLog(places: LogPlaces, idleBefore: number, dryRun: boolean): Promise<RemoveOutcome> {
  // Asked first without the lock: a running proxy may be about to open a recent log, and a lock
  // taken here would refuse it (log_locked) for the time this holds it.
  const before = await idleness(places.file, idleBefore);
  if (before.kind !== 'idle') return before;
  let lock: FileLock;
  try {
    refuseLegacyHolder(places.legacyLockFile, places.file);
    lock = await acquireLock(places.lockFile, places.file);
  } catch (err) {
    if (err instanceof ProxyError && err.code === 'log_locked') return { kind: 'in_use', detail: err.message };
    throw err;
  }
  try {
    const holder = await heldElsewhere(places.lockDir, places.id);
    if (holder !== undefined) return { kind: 'in_use', detail: `process ${holder} holds it (its list of new logs)` };
    // Again under the lock: continued since the first look, it stays.
    const now = await idleness(places.file, idleBefore);
    if (now.kind !== 'idle') return now;
    if (!dryRun) {
      await unlink(places.file);
      await rm(places.sidecarFile, { force: true });
    }
    return { kind: 'removed', bytes: now.bytes, lastActive: now.lastActive };
  } finally {
    await lock.release();
  }
}

type Idleness = { kind: 'idle'; bytes: number; lastActive: string | null } | Extract<RemoveOutcome, { kind: 'active' | 'missing' | 'unreadable' }>;

/**
 * Whether the log's last event is before `idleBefore`; a log with no event to date it (empty, or a
 * torn line alone) is idle. A damaged log is reported, not removed, and costs only itself.
 */
async function idleness(file: string, idleBefore: number): Promise<Idleness> {
  let size: number;
  let lastActive: string | null;
  try {
    size = (await stat(file)).size;
    lastActive = await lastEventTs(file, size);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err instanceof ProxyError && err.code === 'session_not_found')) return { kind: 'missing' };
    if (err instanceof ProxyError && err.code === 'log_malformed') return { kind: 'unreadable', detail: err.message };
    throw err;
  }
  if (lastActive !== null && !(Date.parse(lastActive) < idleBefore)) return { kind: 'active', lastActive };
  return { kind: 'idle', bytes: size, lastActive };
}

/** The `ts` of the log's last complete event, or null when it has none. */
async function lastEventTs(file: string, size: number): Promise<string | null> {
  try {
    const last = await readEventBefore(file, size);
    if (last !== undefined) return last.ts;
  } catch {
    // The last line is torn (a crash mid-write): read the log, which leaves that line out.
  }
  const read = await readLog(file);
  return read.events.at(-1)?.ts ?? null;
}
