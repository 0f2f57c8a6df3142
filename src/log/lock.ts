/**
 * One writer per session across processes, for a log that existed when it was opened (a new one
 * is held through its writer's list, held-list.ts): `<id>.lock` holds the writer's pid, boot and start (`selfLine`). It is made as a
 * hard link to this process's own pid file in the same directory (`.writer-<pid>`, written once),
 * which fails if the name is taken as `wx` would, without giving each lock an inode of its own: on
 * the file systems measured here allocating one cost ~0.5 ms of kernel CPU against ~12 µs for a
 * link (docs/decisions.md, Durability). Where links are not supported the lock is created with
 * `wx`. A lock whose pid is dead is stale and taken over; a live foreign pid is `log_locked`.
 * Readers never take it.
 *
 * Take-over renames the stale file aside first (only one of two racing processes can), then
 * checks the pid it moved is the stale one; if a fresh lock was created in between, it is put
 * back. A lock names its writer's boot and start beside its pid (process-boot.ts): a lock of a
 * dead proxy is stale even if another process now has its pid (after a power loss, or pids
 * wrapped). Limits: without /proc (or a lock of an earlier version) pid liveness cannot tell a
 * reused pid from the writer (the lock then looks live: remove it by hand), and processes in
 * different pid namespaces sharing a data directory cannot see each other.
 */
import { existsSync, linkSync, statSync, unlinkSync } from 'node:fs';
import { link, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProxyError } from '../core/errors.js';
import { mayRun, parseSelfLine, selfLine, type Writer } from './process-boot.js';
import { createFile, readSmall } from './raw-file.js';

export interface FileLock {
  readonly file: string;
  release(): Promise<void>;
}

/** Between `wx` and the pid being written another process can see an empty file: wait that long. */
const EMPTY_GRACE_MS = 100;
const ATTEMPTS = 8;

let asideCounter = 0;

/**
 * `log_locked` when a lock under an earlier layout's name (beside the log) names a live process
 * other than this one: a proxy of a version before the locks' own directory still writing the
 * session. A missing, dead or unreadable one is nobody's. One stat when there is none.
 */
export function refuseLegacyHolder(legacyLockFile: string, logFile: string): void {
  // Asked first, so the usual answer (none) costs a stat, not an error thrown and caught.
  if (!existsSync(legacyLockFile)) return;
  let text: string;
  try {
    text = readSmall(legacyLockFile);
  } catch {
    return; // removed since, or unreadable: nobody's
  }
  const holder = parseSelfLine(text);
  if (holder !== undefined && holder.pid !== process.pid && mayRun(holder)) throw new ProxyError('log_locked', { file: logFile, pid: holder.pid });
}

/** `logFile` only names the session in the error message. */
export async function acquireLock(lockFile: string, logFile: string): Promise<FileLock> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      const made = await createLock(lockFile);
      return { file: lockFile, release: () => releaseLock(lockFile, made) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readHolder(lockFile);
    if (holder === 'gone') continue;
    if (holder !== 'unreadable' && holder.pid !== process.pid && mayRun(holder)) {
      throw new ProxyError('log_locked', { file: logFile, pid: holder.pid });
    }
    // A dead pid or another boot's, our own pid from an earlier open that was never released, or garbage: stale.
    await takeOver(lockFile, holder);
  }
  throw new ProxyError('log_locked', { file: logFile, pid: 'unknown (the lock file keeps changing)' });
}

/** This process's pid file, and its inode: every lock linked to it is that inode. */
interface PidFile {
  file: string;
  dev: number;
  ino: number;
}

/** This process's pid file in each directory it locks in, made once; removed when it exits. */
const pidFiles = new Map<string, Promise<PidFile | undefined>>();

/**
 * The lock, made by linking it to this process's pid file (then returned) or as a file of its
 * own; `EEXIST` when the name is taken.
 */
async function createLock(lockFile: string): Promise<PidFile | undefined> {
  const dir = dirname(lockFile);
  let pidFile = pidFiles.get(dir);
  if (pidFile === undefined) {
    pidFile = writePidFile(dir);
    pidFiles.set(dir, pidFile);
  }
  const source = await pidFile;
  if (source !== undefined) {
    try {
      // Synchronous: a link allocates nothing and takes ~10 µs, less than a trip through the
      // thread pool costs the main thread.
      linkSync(source.file, lockFile);
      return source;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw err;
      // The pid file was removed by hand: make it again next time. Links not supported: no links.
      pidFiles.set(dir, code === 'ENOENT' ? writePidFile(dir) : Promise.resolve(undefined));
    }
  }
  await createFile(lockFile, selfLine());
  return undefined;
}

async function writePidFile(dir: string): Promise<PidFile | undefined> {
  const file = join(dir, `.writer-${process.pid}`);
  try {
    // `w`: a file left by a dead process that had this pid is this process's now.
    await createFile(file, selfLine(), 'w');
  } catch {
    return undefined; // the locks are then created one by one, and that reports any real fault
  }
  removeOnExit(file);
  void removeFilesOfDeadPids(dir, PID_FILE_RE);
  const { dev, ino } = statSync(file);
  return { file, dev, ino };
}

const PID_FILE_RE = /^\.writer-([0-9]{1,10})$/;

/**
 * Removes the files in `dir` whose names (`re`, the pid its first group) say they belong to a dead
 * process other than this one: pid files and held lists (held-list.ts) of processes killed before
 * they could remove their own. Its first line names its boot and start, and a process of another
 * boot, or started at another time, is dead too. A pid file's locks, if any are left, keep the
 * inode and the dead pid, so removing the name changes nothing but the listing.
 */
export async function removeFilesOfDeadPids(dir: string, re: RegExp): Promise<void> {
  try {
    for (const name of await readdir(dir)) {
      const pid = Number(re.exec(name)?.[1] ?? 0);
      if (pid === 0 || pid === process.pid) continue;
      const file = join(dir, name);
      if (!mayRun({ ...(await writtenBy(file)), pid })) await unlink(file).catch(() => undefined);
    }
  } catch {
    // a listing that fails leaves a few bytes behind
  }
}

/** Who a pid file or held list names in its first line (undefined: no one, or it is gone). */
async function writtenBy(file: string): Promise<Writer | undefined> {
  const text = await readFile(file, 'latin1').catch(() => '');
  return parseSelfLine(text.slice(0, text.indexOf('\n') + 1));
}

const exitRemovals = new Set<string>();

/** Removed when this process exits: the links that are locks keep their inode, so no lock goes with it. */
export function removeOnExit(file: string): void {
  if (exitRemovals.size === 0) process.once('exit', removeAtExit);
  exitRemovals.add(file);
}

function removeAtExit(): void {
  for (const file of exitRemovals) {
    try {
      unlinkSync(file);
    } catch {
      // gone already
    }
  }
}

async function releaseLock(lockFile: string, linkedTo: PidFile | undefined): Promise<void> {
  // Only remove it if it is still ours (a take-over by someone who judged us dead must stand).
  if (!(linkedTo === undefined ? holdsOwnPid(lockFile) : isLinkTo(lockFile, linkedTo))) return;
  // Synchronous like the link: removing a lock frees nothing while the pid file holds its inode.
  try {
    unlinkSync(lockFile);
  } catch (err) {
    ignoreMissing(err as NodeJS.ErrnoException);
  }
}

/** A lock made as a file of its own (no pid file to link to) names this process. */
function holdsOwnPid(lockFile: string): boolean {
  try {
    return readSmall(lockFile) === selfLine();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * The lock is still the link this process made: one stat, where reading the pid back is an open,
 * a read and a close, on every session that leaves memory. A lock taken over is another inode
 * (a take-over moves the old name aside and makes its own).
 */
function isLinkTo(lockFile: string, pidFile: PidFile): boolean {
  const st = statSync(lockFile, { throwIfNoEntry: false });
  return st !== undefined && st.ino === pidFile.ino && st.dev === pidFile.dev;
}

/** Who the lock names, `'gone'` if the file vanished, `'unreadable'` if it never held a pid. */
async function readHolder(lockFile: string): Promise<Writer | 'gone' | 'unreadable'> {
  const deadline = Date.now() + EMPTY_GRACE_MS;
  for (;;) {
    let text: string;
    try {
      text = await readFile(lockFile, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
      throw err;
    }
    const holder = parseSelfLine(text);
    if (holder !== undefined) return holder;
    if (Date.now() >= deadline) return 'unreadable';
    await sleep(10);
  }
}

async function takeOver(lockFile: string, stale: Writer | 'unreadable'): Promise<void> {
  const aside = `${lockFile}.stale-${process.pid}-${asideCounter++}`;
  try {
    await rename(lockFile, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else moved it
    throw err;
  }
  const moved = parseSelfLine(await readFile(aside, 'utf8').catch(() => ''));
  const same = moved !== undefined && stale !== 'unreadable' && moved.pid === stale.pid && moved.boot === stale.boot && moved.start === stale.start;
  if (moved !== undefined && !same && moved.pid !== process.pid && mayRun(moved)) {
    // We moved a lock made after our look: put it back unless yet another has appeared.
    await link(aside, lockFile).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  await unlink(aside).catch(ignoreMissing);
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}
