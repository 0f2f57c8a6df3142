/**
 * The sessions' sidecars (what locates each session and where its next load may start reading,
 * src/session/session-files.ts) kept in one append-only file, `sessions/sidecars.ndjson`: a line
 * `{"id":…,"index":…}` per save, the last line of an id wins. A file of its own per session cost
 * an inode per save, ~0.3-0.6 ms of kernel CPU here, against microseconds for a line appended
 * (docs/decisions.md, Session index).
 *
 * Lines are hints, like the per-session sidecars before them: never synced, checked by their
 * reader against the log's size; a torn or damaged line is skipped and costs that session a whole
 * read of its log at the next start. Other processes may append (O_APPEND keeps each line whole):
 * a lookup first folds whatever the file gained since the last one. Compacted at startup, when it
 * holds more than twice the lines it has sessions.
 */
import fs from 'node:fs';
import { join } from 'node:path';
import { writeFully } from './raw-file.js';

export const INDEX_JOURNAL = 'sidecars.ndjson';

/**
 * How long an appender goes on trusting that the journal's name still leads to the file it holds
 * open. Asking on every append was a stat per session leaving memory (~10 µs, 1.5% of the main
 * thread under a new conversation per request); a line appended within this time after another
 * process replaced the file (its compaction at startup, or a removal) is lost with the old file,
 * which costs its session a whole read of its log, as any lost hint does. A read that finds the file
 * replaced or gone makes the appender look at once.
 */
const RECHECK_MS = 250;

/** Below this many lines the journal is never compacted: it is small enough to read. */
const COMPACT_FLOOR = 1024;

const NEWLINE = 0x0a;

/** Where a session's last line is, not its value: a live proxy holds a few numbers per session. */
interface Place {
  offset: number;
  length: number;
}

export class IndexJournal {
  readonly file: string;
  readonly #places = new Map<string, Place>();
  #lines = 0;
  /** Bytes of the file folded into `#places`: up to and including its last newline. */
  #readTo = 0;
  /** The inode read: a journal replaced (compacted by another process, removed) is read again. */
  #ino = -1;
  #fd: number | undefined;
  /** The inode #fd was opened on: the name still leads to it unless another process replaced the file. */
  #fdIno = -1;
  /** When the name was last seen to lead to #fd (performance.now()). */
  #checkedAt = 0;
  readonly #recheckMs: number;
  readonly #now: () => number;

  /** `now` (ms, monotonic) is for tests. */
  constructor(dir: string, opts: { recheckMs?: number; now?: () => number } = {}) {
    this.file = join(dir, INDEX_JOURNAL);
    this.#recheckMs = opts.recheckMs ?? RECHECK_MS;
    this.#now = opts.now ?? (() => performance.now());
  }

  /** The last index saved for `id`, or undefined (none, or its line is damaged). */
  get(id: string): unknown {
    const fd = this.#openForReading();
    if (fd === undefined) return undefined;
    try {
      this.#catchUp(fd);
      const place = this.#places.get(id);
      if (place === undefined) return undefined;
      const bytes = Buffer.allocUnsafe(place.length);
      fs.readSync(fd, bytes, 0, place.length, place.offset);
      return parseLine(bytes.toString('utf8'))?.index;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Every session's last saved index (startup reads them all at once). */
  all(): Map<string, unknown> {
    const out = new Map<string, unknown>();
    const fd = this.#openForReading();
    if (fd === undefined) return out;
    try {
      this.#forget(-1);
      this.#catchUp(fd, out);
    } finally {
      fs.closeSync(fd);
    }
    return out;
  }

  /** Appends one line, synchronously (a page-cache write); the directory must exist. */
  append(id: string, value: unknown): void {
    writeFully(this.#appender(), Buffer.from(`${JSON.stringify({ id, index: value })}\n`, 'utf8'));
  }

  /**
   * Rewrites the journal with one line per session (temp file, rename) when it holds more than
   * twice that many lines: meant for startup, with what `all()` just returned.
   */
  compact(entries: ReadonlyMap<string, unknown>): void {
    if (this.#lines <= Math.max(COMPACT_FLOOR, 2 * entries.size)) return;
    const tmp = `${this.file}.tmp-${process.pid}`;
    let text = '';
    for (const [id, index] of entries) text += `${JSON.stringify({ id, index })}\n`;
    try {
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, this.file);
    } catch {
      fs.rmSync(tmp, { force: true });
      return; // a longer journal only costs its reading
    }
    this.#closeAppender();
    this.#forget(-1);
  }

  close(): void {
    this.#closeAppender();
  }

  /**
   * Appends go to the file under the journal's name, even after another process replaced it, once
   * the appender looks again (RECHECK_MS).
   */
  #appender(): number {
    if (this.#fd !== undefined) {
      const now = this.#now();
      if (now - this.#checkedAt < this.#recheckMs) return this.#fd;
      this.#checkedAt = now;
      let current = -1;
      try {
        current = fs.statSync(this.file).ino;
      } catch {
        // removed: open it again
      }
      if (current === this.#fdIno) return this.#fd;
      this.#closeAppender();
    }
    const fd = fs.openSync(this.file, 'a+');
    // A line torn by a crash would swallow the next one: end it first. Another process caught
    // mid-line looks torn too (the size grows page by page); its line still lands whole before
    // this newline (O_APPEND), which leaves a blank line that readers skip.
    const { size, ino } = fs.fstatSync(fd);
    this.#fdIno = ino;
    this.#checkedAt = this.#now();
    const last = Buffer.alloc(1);
    if (size > 0 && fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== NEWLINE) writeFully(fd, Buffer.from('\n'));
    this.#fd = fd;
    return fd;
  }

  #closeAppender(): void {
    if (this.#fd === undefined) return;
    fs.closeSync(this.#fd);
    this.#fd = undefined;
  }

  #openForReading(): number | undefined {
    try {
      return fs.openSync(this.file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.#forget(-1);
      return undefined;
    }
  }

  /** Folds the lines appended since the last look; with `values`, also collects what they hold. */
  #catchUp(fd: number, values?: Map<string, unknown>): void {
    const { ino, size } = fs.fstatSync(fd);
    if (ino !== this.#ino || size < this.#readTo) this.#forget(ino);
    if (size === this.#readTo) return;
    const bytes = Buffer.allocUnsafe(size - this.#readTo);
    const got = fs.readSync(fd, bytes, 0, bytes.length, this.#readTo);
    let start = 0;
    for (let end = bytes.indexOf(NEWLINE, 0); end >= 0 && end < got; end = bytes.indexOf(NEWLINE, start)) {
      this.#lines++;
      const line = parseLine(bytes.toString('utf8', start, end));
      if (line !== undefined) {
        this.#places.set(line.id, { offset: this.#readTo + start, length: end - start });
        values?.set(line.id, line.index);
      }
      start = end + 1;
    }
    // A last line without its newline is still being written: read it next time.
    this.#readTo += start;
  }

  /** A file replaced or removed, seen by a read: the appender looks again at its next line too. */
  #forget(ino: number): void {
    this.#places.clear();
    this.#lines = 0;
    this.#readTo = 0;
    this.#ino = ino;
    this.#checkedAt = -Infinity;
  }
}

/** A line as written, or undefined for one torn by a crash (its session's log is read whole). */
function parseLine(text: string): { id: string; index: unknown } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { id, index } = (parsed ?? {}) as { id?: unknown; index?: unknown };
  return typeof id === 'string' ? { id, index } : undefined;
}
