/**
 * New logs' first syncs, shared (docs/decisions/0014-a-new-conversations-files-measured.md). A new
 * session's log is written to its own file as always, but its first sync (all a one-request
 * conversation ever needs) appends the log's bytes so far to this process's journal, whose one
 * fdatasync serves every session waiting with it, instead of an fdatasync of each new file and of
 * the directory naming it: ~60-120 µs of kernel CPU a file that group commit could not share.
 *
 * The own file and its name are made durable later: by the log's own next sync (session-log.ts),
 * or by the checkpoint of the journal's segment, which syncs the data's file system (`sync -f`,
 * one syncfs) or, where that is not available, each file and the directory, before it removes the
 * segment. After a crash, startup (`recoverFirstSyncs`) puts back every own file whose first bytes
 * are not its record's, and makes them durable, before any log is read.
 *
 * Layout: `sessions/first-syncs/<pid>-<boot>-<start>-<n>.log` (`<pid>-<n>.log` without /proc, and
 * from earlier versions); a record is a line `{"id":...,"len":N}` and the log's first N bytes
 * (whole lines). A record cut short by a crash was never acknowledged. The boot and start in the
 * name let a start after a crash put back a dead proxy's segment even if its pid now belongs to
 * a running process (process-boot.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { GroupCommitWriter } from './group-commit.js';
import { BOOT_PATTERN, mayRun, selfFields, writerOf } from './process-boot.js';
import { RawFile } from './raw-file.js';
import { namedWithSyncs } from './session-log.js';

/** A segment past this is retired: checkpointed, then removed. */
const SEGMENT_BYTES = 4 * 2 ** 20;

interface Segment {
  file: string;
  fh: RawFile;
  writer: GroupCommitWriter;
  /** The own files its records cover. */
  covers: string[];
}

export class FirstSyncJournal {
  /** sessions/first-syncs */
  readonly dir: string;
  /** sessions: the logs' directory, synced by a checkpoint without syncfs. */
  readonly #logs: string;
  #current: Promise<Segment> | undefined;
  #made: Promise<void> | undefined;
  #n = 0;
  readonly #retiring = new Set<Promise<void>>();
  readonly #segmentBytes: number;
  /** This process's segments not yet removed: a recovery in this process leaves them alone. */
  readonly #files = new Set<string>();

  /** `segmentBytes`: when a segment is retired (tests make it small). */
  constructor(logsDir: string, segmentBytes = SEGMENT_BYTES) {
    this.#logs = logsDir;
    this.#segmentBytes = segmentBytes;
    this.dir = join(logsDir, 'first-syncs');
  }

  /** Appends the record of `id` (its own file `file`, its first `bytes`); resolves once it is on disk. */
  async commit(id: string, file: string, bytes: Buffer): Promise<void> {
    let current = this.#current;
    if (current === undefined) {
      current = this.#current = this.#open();
      // A segment that could not be made is not asked again by every later commit.
      current.catch(() => {
        if (this.#current === current) this.#current = undefined;
      });
    }
    const segment = await current;
    if (segment.writer.error !== undefined) {
      // A segment whose write or sync failed takes no more records: the next one is a new file.
      if (this.#current === current) {
        this.#current = undefined;
        this.#retire(segment);
      }
      return this.commit(id, file, bytes);
    }
    segment.covers.push(file);
    // Queued in one task: the group commit writes both in one call, the bytes not copied here.
    segment.writer.write(Buffer.from(`${JSON.stringify({ id, len: bytes.length })}\n`));
    segment.writer.write(bytes);
    const synced = segment.writer.sync();
    if (segment.writer.end >= this.#segmentBytes && this.#current === current) {
      this.#current = undefined;
      this.#retire(segment);
    }
    return synced;
  }

  /** Whether `file` is one of this journal's segments, still in use or being retired. */
  holds(file: string): boolean {
    return this.#files.has(file);
  }

  /** Checkpoints and removes every segment (the proxy stops); the next first sync opens a new one. */
  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    if (current !== undefined) this.#retire(await current);
    while (this.#retiring.size > 0) await Promise.all(this.#retiring);
  }

  async #open(): Promise<Segment> {
    // The segments' directory, and its name in the logs' directory, made durable once.
    this.#made ??= mkdir(this.dir, { recursive: true }).then(() => syncDir(this.#logs));
    await this.#made;
    for (;;) {
      const file = join(this.dir, `${[...selfFields(), this.#n++].join('-')}.log`);
      let fh: RawFile;
      try {
        fh = await RawFile.open(file, 'ax');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue; // a dead process's of the same pid, not yet recovered
        throw err;
      }
      // The segment's own name is made durable with its first fdatasync, as a reopened log's is.
      const writer = new GroupCommitWriter(namedWithSyncs(fh, { dirSync: () => syncDir(this.dir) }), 0, true);
      this.#files.add(file);
      return { file, fh, writer, covers: [] };
    }
  }

  #retire(segment: Segment): void {
    const done = (async () => {
      await segment.writer.sync().catch(() => undefined);
      await segment.writer.idle();
      segment.fh.close();
      if (segment.writer.error !== undefined) return; // kept for the next start to recover
      await checkpoint(this.#logs, segment.covers);
      await unlink(segment.file).catch(() => undefined);
      this.#files.delete(segment.file);
    })().catch(() => undefined) // a checkpoint that fails leaves the segment for the next start
      .finally(() => this.#retiring.delete(done));
    this.#retiring.add(done);
  }
}

/**
 * Makes `files` and their names durable: one syncfs of the file system holding `logsDir`
 * (coreutils' `sync -f`), else an fdatasync of each and an fsync of the directory.
 */
async function checkpoint(logsDir: string, files: readonly string[]): Promise<void> {
  if (await syncFileSystem(logsDir)) return;
  for (const file of files) {
    let fh: RawFile | undefined;
    try {
      fh = await RawFile.open(file, 'r');
      await fh.datasync();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    } finally {
      fh?.close();
    }
  }
  await syncDir(logsDir);
}

function syncFileSystem(dir: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('sync', ['-f', dir], { timeout: 120_000 }, (err) => resolve(err === null));
  });
}

async function syncDir(dir: string): Promise<void> {
  const fh = await RawFile.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    fh.close();
  }
}

export interface Recovered {
  /** Segments read and removed. */
  segments: number;
  /** Own files whose first bytes were put back from their record. */
  repaired: string[];
}

/**
 * Before a proxy reads any log: every segment of a process no longer running (this one's pid
 * included, from before this start) is read; each record's own file keeps its bytes if its first
 * bytes are the record's, and is written again from the record otherwise (cut to them: nothing
 * after them was acknowledged). Then the files are made durable and the segment removed. `fileOf`
 * gives an id's own file, throwing for an id that cannot be one (its record is skipped); `inUse`,
 * whether a segment is this process's journal's own, still written (left alone).
 */
export async function recoverFirstSyncs(logsDir: string, fileOf: (id: string) => string, inUse: (segment: string) => boolean = () => false): Promise<Recovered> {
  const dir = join(logsDir, 'first-syncs');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { segments: 0, repaired: [] };
    throw err;
  }
  const out: Recovered = { segments: 0, repaired: [] };
  for (const name of names.sort()) {
    const named = SEGMENT_NAME.exec(name);
    const segment = join(dir, name);
    if (named === null || inUse(segment)) continue;
    const writer = writerOf(named[1]!, named[2], named[3]);
    if (writer.pid !== process.pid && mayRun(writer)) continue;
    const files: string[] = [];
    for (const { id, bytes } of records(await readFile(segment))) {
      let file: string;
      try {
        file = fileOf(id);
      } catch {
        continue;
      }
      if (!(await startsWith(file, bytes))) {
        const fh = await open(file, 'w');
        try {
          await fh.writeFile(bytes);
        } finally {
          await fh.close();
        }
        out.repaired.push(file);
      }
      files.push(file);
    }
    for (const file of files) {
      const fh = await RawFile.open(file, 'r');
      try {
        await fh.datasync();
      } finally {
        fh.close();
      }
    }
    await syncDir(logsDir);
    await unlink(segment);
    out.segments++;
  }
  return out;
}

/** `<pid>-<boot>-<start>-<n>.log`, or `<pid>-<n>.log`: the pid, and its boot and start if named. */
const SEGMENT_NAME = new RegExp(`^(\\d{1,10})(?:-(${BOOT_PATTERN})(?:-(\\d{1,20}))?)?-\\d+\\.log$`);

/** The whole records of a segment, in order; a torn or malformed one ends it. */
function* records(data: Buffer): Generator<{ id: string; bytes: Buffer }> {
  let at = 0;
  while (at < data.length) {
    const nl = data.indexOf(10, at);
    if (nl === -1) return;
    let header: unknown;
    try {
      header = JSON.parse(data.toString('utf8', at, nl));
    } catch {
      return;
    }
    const { id, len } = (header ?? {}) as { id?: unknown; len?: unknown };
    if (typeof id !== 'string' || typeof len !== 'number' || !Number.isInteger(len) || len < 0 || nl + 1 + len > data.length) return;
    yield { id, bytes: data.subarray(nl + 1, nl + 1 + len) };
    at = nl + 1 + len;
  }
}

async function startsWith(file: string, bytes: Buffer): Promise<boolean> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  try {
    const buf = Buffer.alloc(bytes.length);
    const { bytesRead } = await fh.read(buf, 0, bytes.length, 0);
    return bytesRead === bytes.length && buf.equals(bytes);
  } finally {
    await fh.close();
  }
}
