/**
 * Files held by descriptor, for the session files a new conversation makes and closes (its log,
 * lock and sidecar). Only the calls that may wait on the disk or the file system's journal go
 * through the thread pool: creating, renaming or removing a directory entry, and fdatasync. A
 * small write to the page cache, a read of a small existing file and a close take microseconds
 * and are made synchronously: each trip through the thread pool cost the main thread ~60 µs on a
 * loaded machine, and the promise API's FileHandle more (docs/decisions.md, Durability).
 */
import fs from 'node:fs';
import { promisify } from 'node:util';

const openAsync = promisify(fs.open);
const fdatasyncAsync = promisify(fs.fdatasync);
const fsyncAsync = promisify(fs.fsync);

/** An open descriptor; what the group commit writes to and syncs. */
export interface Durable {
  readonly fd: number;
  datasync(): Promise<void>;
  /** Writes all of `buf` at the end; absent: `writeFully` to `fd`. */
  write?(buf: Buffer): void;
}

export class RawFile implements Durable {
  #fd: number;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** Opens (or creates, by `flags`) through the thread pool: a create may wait on the journal. */
  static async open(path: string, flags: string): Promise<RawFile> {
    return new RawFile(await openAsync(path, flags));
  }

  get fd(): number {
    if (this.#fd < 0) throw new Error('file is closed');
    return this.#fd;
  }

  datasync(): Promise<void> {
    return fdatasyncAsync(this.fd);
  }

  /** fsync, for a directory: its entries, not only data. */
  sync(): Promise<void> {
    return fsyncAsync(this.fd);
  }

  writeAll(data: Buffer | string): void {
    writeFully(this.fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  /** Idempotent. */
  close(): void {
    if (this.#fd < 0) return;
    const fd = this.#fd;
    this.#fd = -1;
    fs.closeSync(fd);
  }
}

/**
 * Writes all of `buf` at the descriptor's position, synchronously (into the page cache). A
 * regular file may accept less than asked (disk full, a signal): the rest is written again, and a
 * write that accepts nothing throws.
 */
export function writeFully(fd: number, buf: Buffer): void {
  let done = 0;
  while (done < buf.length) {
    const n = fs.writeSync(fd, buf, done, buf.length - done, null);
    if (n === 0) throw new Error('write accepted 0 bytes');
    done += n;
  }
}

/** A new file holding `data`; `flags` `wx` fails with EEXIST when the name is taken. */
export async function createFile(path: string, data: string, flags = 'wx'): Promise<void> {
  const file = await RawFile.open(path, flags);
  try {
    file.writeAll(data);
  } finally {
    file.close();
  }
}

/** A small file's text, read synchronously (an existing file: no directory entry changes). */
export function readSmall(path: string): string {
  return fs.readFileSync(path, 'utf8');
}
