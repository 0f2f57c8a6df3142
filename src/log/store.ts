/**
 * The file backend of the log (docs/architecture.md section 3). Layout under the data directory:
 *
 *   sessions/<id>.jsonl      one event per line, append-only
 *   sessions/locks/<id>.lock the writer's pid while a SessionLog of a log that existed is open
 *                            (lock.ts), in a directory of their own (docs/decisions/0012-locks-apart-from-the-logs.md)
 *   sessions/locks/.held-<pid> the new logs a process holds without a lock file (held-list.ts)
 *   sessions/sidecars.ndjson every session's sidecar (what locates it, where its next load may
 *                            start reading), a line per save (index-journal.ts)
 *   sessions/<id>.idx.json   a sidecar as proxies before the journal wrote it, still read
 *   sessions/first-syncs/    new logs' first syncs, one journal per process (first-syncs.ts)
 *
 * One writer per session: in this process, opening an id that is already open is `log_locked`
 * naming this process (one owner, one close; share the SessionLog instead); across processes the
 * exclusive create decides a new log, and the lock file and the other processes' held lists an
 * existing one (lock.ts, held-list.ts). Readers (`read`, or `readLog` on `file(id)`) take no lock.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, truncate } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ProxyError } from '../core/errors.js';
import { FirstSyncJournal, recoverFirstSyncs, type Recovered } from './first-syncs.js';
import { IndexJournal } from './index-journal.js';
import { heldElsewhere, heldListIn } from './held-list.js';
import { acquireLock, refuseLegacyHolder, type FileLock } from './lock.js';
import { RawFile } from './raw-file.js';
import { removeIdleLog, type RemoveOutcome } from './remove-idle.js';
import { readEventBefore, readLog, type LogRead, type ReadOptions } from './reader.js';
import { SessionLog, type RedactionListener } from './session-log.js';

// The writer is built here; callers name its type from the store they got it from.
export { SessionLog, type RedactionListener };
export type { RemoveOutcome };
export type { TornTail } from './log-line.js';

export interface OpenOptions {
  /** Create the log if it does not exist; otherwise a missing log is `session_not_found`. */
  create: boolean;
  /**
   * Read events from this byte offset (a line start, e.g. the start tracker's) instead of the
   * start. The file is still read to its end, for the last seq and the torn-tail check.
   */
  fromOffset?: number;
  /** 1-based line number at `fromOffset`, if known (for error messages). */
  fromLine?: number;
}

export interface StoreOptions {
  onRedact?: RedactionListener;
  /**
   * What an answered request's events are when the client sees its last byte: `fsync` (on disk,
   * the default) or `write` (written to the OS: a killed process loses nothing, a machine that
   * loses power may lose the last answers). docs/decisions.md, Durability.
   */
  durability?: 'fsync' | 'write';
  /**
   * Awaited before each log sync: what the log's lines name outside it (the images they hold by
   * digest) is written first, so a durable line never names what is not on disk.
   */
  beforeSync?: () => Promise<void>;
}

/** Ids are file names: letters, digits, `.`, `_`, `-`, not starting with a dot. */
const ID_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** Files open for writing in this process, by absolute path. Module-wide: two stores on one dir share it. */
const openHere = new Set<string>();

/** One journal object per directory in this process, so a compaction never strands an appender. */
const journals = new Map<string, IndexJournal>();

/** One first-sync journal per directory in this process: its segments are this process's. */
const firstSyncJournals = new Map<string, FirstSyncJournal>();

export class LogStore {
  readonly dir: string;
  readonly #onRedact: RedactionListener | undefined;
  readonly #durable: boolean;
  readonly #beforeSync: (() => Promise<void>) | undefined;
  readonly #dirSync: DirSync;
  readonly #journal: IndexJournal;
  /** Directories this store has made (or found): each is asked for once. */
  readonly #dirsMade = new Set<string>();
  readonly #firstSyncs: FirstSyncJournal;

  constructor(dataDir: string, opts: StoreOptions = {}) {
    this.dir = resolve(dataDir, 'sessions');
    this.#onRedact = opts.onRedact;
    this.#durable = opts.durability !== 'write';
    this.#beforeSync = opts.beforeSync;
    this.#dirSync = new DirSync(this.dir);
    let journal = journals.get(this.dir);
    if (journal === undefined) {
      journal = new IndexJournal(this.dir);
      journals.set(this.dir, journal);
    }
    this.#journal = journal;
    let firstSyncs = firstSyncJournals.get(this.dir);
    if (firstSyncs === undefined) {
      firstSyncs = new FirstSyncJournal(this.dir);
      firstSyncJournals.set(this.dir, firstSyncs);
    }
    this.#firstSyncs = firstSyncs;
  }

  /** `dir` (this.dir or lockDir, which makes this.dir too), made the first time it is asked for. */
  async #ensure(dir: string): Promise<void> {
    if (this.#dirsMade.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.#dirsMade.add(dir);
  }

  file(id: string): string {
    return join(this.dir, `${checkId(id)}.jsonl`);
  }

  /**
   * Where the locks and this process's pid file live: apart from the logs, so taking and giving
   * back a lock never waits on the logs' directory while a new log is created in it, and never
   * dirties the directory a new log's sync writes (docs/decisions/0012-locks-apart-from-the-logs.md).
   */
  get lockDir(): string {
    return join(this.dir, 'locks');
  }

  lockFile(id: string): string {
    return join(this.lockDir, `${checkId(id)}.lock`);
  }

  /** Where a lock was kept before the locks had their own directory, still honoured (refuseLegacyHolder). */
  legacyLockFile(id: string): string {
    return join(this.dir, `${checkId(id)}.lock`);
  }

  /** A session's sidecar as written before the journal (still read when the journal has none). */
  indexFile(id: string): string {
    return join(this.dir, `${checkId(id)}.idx.json`);
  }

  /** The file holding every session's sidecar. */
  get indexJournalFile(): string {
    return this.#journal.file;
  }

  /** Ids of every session log, sorted. */
  async listSessions(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return names
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => n.slice(0, -'.jsonl'.length))
      .filter((id) => ID_RE.test(id))
      .sort();
  }

  async exists(id: string): Promise<boolean> {
    try {
      return (await stat(this.file(id))).isFile();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  /** Reads a log without the lock (replay, the CLI); never repairs. */
  read(id: string, opts: ReadOptions = {}): Promise<LogRead> {
    return readLog(this.file(id), opts);
  }

  /**
   * A new session's log, nothing to read. Its first sync goes to the shared journal; the file and
   * its name are made durable with its next sync or the journal's checkpoint
   * (docs/decisions/0014-a-new-conversations-files-measured.md).
   */
  #newLog(id: string, file: string, fh: RawFile, lock: FileLock): SessionLog {
    const dirSync = this.#dirSync;
    const journal = this.#firstSyncs;
    return new SessionLog({
      id, file, fh, lock, events: [], offsets: [], size: 0, repaired: undefined, lastSeq: 0,
      onRedact: this.#onRedact, durable: this.#durable, beforeSync: this.#beforeSync, onClose: () => openHere.delete(file),
      ...(this.#durable ? { names: { journal: (bytes: Buffer) => journal.commit(id, file, bytes), dirSync: () => dirSync.sync() } } : {}),
    });
  }

  /**
   * Opens a log for writing: takes the lock, reads it (from `fromOffset` if given), cuts off a
   * torn last line (reported in `repaired`), and returns the one writer. A malformed line that is
   * not the last is `log_malformed` and the file is left as it was.
   */
  async open(id: string, opts: OpenOptions): Promise<SessionLog> {
    const file = this.file(id);
    if (openHere.has(file)) throw new ProxyError('log_locked', { file, pid: process.pid });
    openHere.add(file);
    let lock: FileLock | undefined;
    let fh: RawFile | undefined;
    /** A create named in this process's held list, whether or not the log was new. */
    let listed = false;
    try {
      if (!opts.create && !(await this.exists(id))) {
        throw new ProxyError('session_not_found', { session: id, file: this.file(id) });
      }
      await this.#ensure(this.lockDir);
      if (opts.create) {
        // A new log is held through this process's list, named there before the file exists
        // (held-list.ts); a list that cannot be written, or a log that exists, takes a lock file.
        const held = heldListIn(this.lockDir);
        listed = held.take(id);
        if (listed) {
          try {
            fh = await createExclusive(file);
          } catch (err) {
            held.release(id);
            throw err;
          }
          if (fh !== undefined) return this.#newLog(id, file, fh, held.lockOf(id));
          held.release(id);
        }
      } else {
        // An existing one may be held by a process of a version that kept its locks beside the logs.
        refuseLegacyHolder(this.legacyLockFile(id), file);
      }
      lock = await acquireLock(this.lockFile(id), file);
      // A lock file of its own is not enough: another process may hold the log through its list.
      const holder = await heldElsewhere(this.lockDir, id);
      if (holder !== undefined) throw new ProxyError('log_locked', { file, pid: holder });
      if (opts.create && !listed) {
        // The list could not be written: created under the lock, as before the lists.
        fh = await createExclusive(file);
        if (fh !== undefined) return this.#newLog(id, file, fh, lock);
      }
      const read = await readLog(file, readOptions(opts));
      if (read.torn !== undefined) {
        await truncate(file, read.torn.offset);
      }
      fh = await RawFile.open(file, 'a');
      // Make the repair durable before anything is appended after it.
      if (read.torn !== undefined) await fh.datasync();
      const last = read.events.at(-1);
      return new SessionLog({
        id,
        file,
        fh,
        lock,
        events: read.events,
        offsets: read.offsets,
        size: read.end,
        repaired: read.torn,
        // Opened from an offset at the end of the file, no event was read: ask the line before it.
        lastSeq: last?.seq ?? (await readEventBefore(file, read.end))?.seq ?? 0,
        onRedact: this.#onRedact,
        durable: this.#durable,
        beforeSync: this.#beforeSync,
        onClose: () => openHere.delete(file),
        // Its name may rest on a first-sync journal not yet checkpointed (this process's or a
        // running one's): synced with the log's first sync, shared with the logs synced together.
        ...(this.#durable ? { names: { dirSync: () => this.#dirSync.sync() } } : {}),
      });
    } catch (err) {
      try {
        fh?.close();
      } catch {
        // the open's own error is the one to report
      }
      await lock?.release().catch(() => undefined);
      openHere.delete(file);
      throw err;
    }
  }

  /**
   * The sidecar index: the journal's last line for the session, else its file from before the
   * journal; undefined if there is neither. Throws if that file is not valid JSON.
   */
  async readIndex<T = unknown>(id: string): Promise<T | undefined> {
    const saved = this.#journal.get(checkId(id));
    if (saved !== undefined) return saved as T;
    const file = this.indexFile(id);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new ProxyError('log_malformed', { file, line: 1, detail: `not valid JSON (${(err as Error).message})` });
    }
  }

  /**
   * Saves the sidecar index: one line appended to the journal, synchronously. Meant for the lock
   * holder. Not synced: a sidecar is a hint its reader checks (JSON, the log's size), and one lost
   * or torn in a crash costs a whole read of its log, never a wrong answer; a session leaving
   * memory then costs no fsync.
   */
  async writeIndex(id: string, value: unknown): Promise<void> {
    checkId(id);
    await this.#ensure(this.dir);
    this.#journal.append(id, value);
  }

  /**
   * Every session's sidecar in the journal, read at startup; the journal is compacted if long.
   * Given the logs listed, a compaction leaves out the lines of logs that are gone (removed by
   * `proxy sessions prune`); one made since the listing is still there, and keeps its line.
   */
  savedIndexes(listed?: ReadonlySet<string>): Map<string, unknown> {
    const saved = this.#journal.all();
    const kept = listed === undefined ? saved : new Map([...saved].filter(([id]) => listed.has(id) || existsSync(join(this.dir, `${id}.jsonl`))));
    this.#journal.compact(kept);
    return saved;
  }

  /**
   * Removes a session's log if its last event is before `idleBefore` (ms since the epoch) and no
   * writer holds it, this process's included (remove-idle.ts); `dryRun` checks the same and keeps it.
   */
  async removeIdle(id: string, idleBefore: number, dryRun = false): Promise<RemoveOutcome> {
    const file = this.file(id);
    if (openHere.has(file)) return { kind: 'in_use', detail: `this process (${process.pid}) has it open` };
    await this.#ensure(this.lockDir);
    const places = { id, file, lockFile: this.lockFile(id), lockDir: this.lockDir, legacyLockFile: this.legacyLockFile(id), sidecarFile: this.indexFile(id) };
    return removeIdleLog(places, idleBefore, dryRun);
  }

  /**
   * Before a proxy reads any log: the first syncs a crashed process left in its journal are put
   * back into their logs (first-syncs.ts). Readers (`read`, the CLI) never do this.
   */
  recoverFirstSyncs(): Promise<Recovered> {
    return recoverFirstSyncs(this.dir, (id) => this.file(id), (segment) => this.#firstSyncs.holds(segment));
  }

  /**
   * Checkpoints the first-sync journal (its logs made durable, its segments removed) and lets go
   * of the journals' and the directory's descriptors; the next save or new session opens them again.
   */
  async close(): Promise<void> {
    this.#journal.close();
    await this.#firstSyncs.close();
    return this.#dirSync.close();
  }
}

function checkId(id: string): string {
  if (!ID_RE.test(id)) {
    throw new ProxyError('bad_argument', { detail: `invalid session id ${JSON.stringify(id)}: use letters, digits, ".", "_", "-"` });
  }
  return id;
}

function readOptions(opts: OpenOptions): ReadOptions {
  const out: ReadOptions = {};
  if (opts.fromOffset !== undefined) out.fromOffset = opts.fromOffset;
  if (opts.fromLine !== undefined) out.fromLine = opts.fromLine;
  return out;
}

/** Opened for appending if this call created it; undefined if it existed. */
async function createExclusive(file: string): Promise<RawFile | undefined> {
  try {
    return await RawFile.open(file, 'ax');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw err;
  }
}

/**
 * A new file's directory entry is durable only once the directory is synced. Sessions created
 * together share one fsync of the directory (group commit, as for the logs): a caller waits for
 * an fsync that started after it asked.
 */
class DirSync {
  readonly #dir: string;
  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  /**
   * The directory, held open between syncs until the store closes: opening it for each was two
   * more trips through the thread pool per group.
   */
  #held: RawFile | undefined;

  constructor(dir: string) {
    this.#dir = dir;
  }

  sync(): Promise<void> {
    if (this.#running === undefined) {
      this.#running = this.#once().finally(() => (this.#running = undefined));
      return this.#running;
    }
    // One is running, begun before this call: wait for it, then share the next.
    this.#next ??= this.#running.catch(() => undefined).then(() => {
      this.#next = undefined;
      return this.sync();
    });
    return this.#next;
  }

  async #once(): Promise<void> {
    this.#held ??= await RawFile.open(this.#dir, 'r');
    const held = this.#held;
    try {
      await held.sync();
    } catch (err) {
      if (this.#held === held) this.#release();
      throw err;
    }
  }

  /**
   * Lets go of the directory once the sync running (if any) is done: its descriptor closed under
   * an fsync still in the thread pool could be another file's by then. The next sync opens it again.
   */
  async close(): Promise<void> {
    await this.#running?.catch(() => undefined);
    this.#release();
  }

  #release(): void {
    this.#held?.close();
    this.#held = undefined;
  }
}
