/**
 * The new logs a process writes without a lock file of their own (docs/decisions/0015-new-logs-held-by-a-list.md).
 *
 * A lock file is a link made when a log is opened and removed when it is closed (lock.ts): two
 * directory operations and a stat per session, ~9% of the CPU of a request that starts a new
 * conversation. A new log needs no lock against a writer of its own process (`openHere`, store.ts)
 * nor against a second creator (the exclusive create decides); only against another process that
 * opens it once it exists. So this process names it in one file of its own, `locks/.held-<pid>`,
 * before creating it (`+<id>`), and gives it back when it closes (`-<id>`): a line appended to an
 * open file, where a lock was a link, a stat and an unlink in a directory. Whoever opens an
 * existing log takes its lock file as before and then reads the other live processes' lists
 * (`heldElsewhere`): a name held there is `log_locked`, as a lock file would be. The claim is
 * written before the log's create, so whoever can see the log can see the claim.
 *
 * The list is compacted (the names still held, written to a new file renamed over it) when it
 * passes COMPACT_BYTES, so a reader never reads much. A process that dies leaves its list; a list
 * whose pid is dead holds nothing, and the next list made in the directory removes it. Its first
 * line names its process's pid, boot and start (process-boot.ts): a list of another boot, or of a
 * process whose pid another has now, holds nothing either.
 */
import { closeSync, openSync, renameSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFully } from './raw-file.js';
import { removeFilesOfDeadPids, removeOnExit, type FileLock } from './lock.js';
import { mayRun, parseSelfLine, selfLine } from './process-boot.js';

const COMPACT_BYTES = 64 * 1024;
const LIST_RE = /^\.held-([0-9]{1,10})$/;
/** A list, or the new one a compaction was writing when its process died. */
const LEFT_RE = /^\.held-([0-9]{1,10})(?:\.next)?$/;

export class HeldList {
  readonly file: string;
  readonly #held = new Set<string>();
  #fd: number | undefined;
  #size = 0;
  /** A give-back that could not be written: the list is rewritten at the next chance. */
  #stale = false;

  constructor(dir: string) {
    this.file = join(dir, `.held-${process.pid}`);
  }

  /**
   * Names `id` as held by this process, before its log is created. False when the list cannot be
   * written: the caller takes a lock file instead.
   */
  take(id: string): boolean {
    try {
      this.#append(`+${id}\n`);
    } catch {
      return false;
    }
    this.#held.add(id);
    return true;
  }

  /** The lock a SessionLog holds for a taken id: closing it gives the id back. */
  lockOf(id: string): FileLock {
    return { file: this.file, release: () => Promise.resolve(this.release(id)) };
  }

  /**
   * Gives `id` back. A list that cannot be written keeps naming it, which refuses other processes
   * (never lets two write) until a later write rewrites the list.
   */
  release(id: string): void {
    if (!this.#held.delete(id)) return;
    try {
      if (this.#stale || this.#size >= COMPACT_BYTES) this.#compact();
      else this.#append(`-${id}\n`);
    } catch {
      this.#stale = true;
    }
  }

  #append(line: string): void {
    if (this.#fd === undefined) this.#open();
    if (this.#stale) this.#compact();
    this.#write(line);
  }

  #write(line: string): void {
    const bytes = Buffer.from(line, 'latin1');
    writeFully(this.#fd!, bytes);
    this.#size += bytes.length;
  }

  /** The first list of this process here: a list left by a dead process with this pid is emptied. */
  #open(): void {
    this.#fd = openSync(this.file, 'w');
    this.#size = 0;
    removeOnExit(this.file);
    this.#write(selfLine());
    void removeFilesOfDeadPids(dirname(this.file), LEFT_RE);
  }

  /** The names still held, in a new file put in the list's place at once: a reader sees one or the other. */
  #compact(): void {
    const text = selfLine() + [...this.#held].map((id) => `+${id}\n`).join('');
    const next = `${this.file}.next`;
    const fd = openSync(next, 'w');
    try {
      writeFully(fd, Buffer.from(text, 'latin1'));
      renameSync(next, this.file);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = fd;
    this.#size = Buffer.byteLength(text, 'latin1');
    this.#stale = false;
  }
}

/** One list per locks directory in this process. */
const byDir = new Map<string, HeldList>();

export function heldListIn(dir: string): HeldList {
  let list = byDir.get(dir);
  if (list === undefined) {
    list = new HeldList(dir);
    byDir.set(dir, list);
  }
  return list;
}

/** The pid of another live process whose list in `dir` holds `id`, if there is one. */
export async function heldElsewhere(dir: string, id: string): Promise<number | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    const pid = Number(LIST_RE.exec(name)?.[1] ?? 0);
    if (pid === 0 || pid === process.pid || !mayRun({ pid })) continue;
    let text: string;
    try {
      text = await readFile(join(dir, name), 'latin1');
    } catch {
      continue; // removed by its process's exit since the listing
    }
    if (!mayRun({ ...parseSelfLine(text.slice(0, text.indexOf('\n') + 1)), pid })) continue;
    if (holds(text, id)) return pid;
  }
  return undefined;
}

/**
 * Whether a list's text holds `id`: its last whole line naming it is a take. A torn last line
 * (no newline) is not a whole line, and a list compacted in between was read before or after.
 */
export function holds(text: string, id: string): boolean {
  const whole = `\n${text}`;
  return whole.lastIndexOf(`\n+${id}\n`) > whole.lastIndexOf(`\n-${id}\n`);
}
