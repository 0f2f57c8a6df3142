/**
 * The durable floors' log (floor.ts, stack-floor.ts): one file per conversation, found by its
 * first user message (the bench's conversations each begin with their own), created on its first
 * request; at most OPEN stay open, as (b) makes a new one on every request. Lines are appended with
 * a synchronous write and made durable with one fdatasync before the answer ends.
 */
import { closeSync, fdatasync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const datasync = promisify(fdatasync);
const OPEN = 1000;

export interface FloorFile {
  fd: number;
  /** Requests between their first write and their sync: the file is not closed under them. */
  busy: number;
}

export interface ChatBody {
  model?: string;
  messages: { role: string; content?: unknown }[];
  stream?: boolean;
}

export class FloorFiles {
  readonly #dir: string;
  readonly #files = new Map<string, FloorFile>();
  #created = 0;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The conversation's file, counted busy until `done`. */
  take(body: ChatBody): FloorFile {
    const first = body.messages.find((m) => m.role === 'user')?.content;
    const key = (typeof first === 'string' ? first : JSON.stringify(first ?? null)).slice(0, 200);
    let file = this.#files.get(key);
    if (file === undefined) {
      file = { fd: openSync(join(this.#dir, `${this.#created++}.log`), 'wx'), busy: 0 };
      this.#files.set(key, file);
    }
    file.busy++;
    if (this.#files.size > OPEN) this.#closeOldestIdle();
    return file;
  }

  done(file: FloorFile): void {
    file.busy--;
  }

  append(file: FloorFile, event: object): void {
    writeSync(file.fd, `${JSON.stringify({ ts: new Date().toISOString(), ...event })}\n`);
  }

  sync(file: FloorFile): Promise<void> {
    return datasync(file.fd);
  }

  #closeOldestIdle(): void {
    for (const [key, file] of this.#files) {
      if (file.busy > 0) continue;
      this.#files.delete(key);
      closeSync(file.fd);
      return;
    }
  }
}
