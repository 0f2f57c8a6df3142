/**
 * An open session log, held by its one writer. Made by `LogStore.open`; the lock, the torn-tail
 * repair and the reading happen there. Appends are redacted, numbered, serialised once and queued;
 * `sync()` makes them durable (group commit, see group-commit.ts).
 */
import { ProxyError } from '../core/errors.js';
import type { EventBody, LogEvent } from '../core/events.js';
import { GroupCommitWriter } from './group-commit.js';
import type { FileLock } from './lock.js';
import { writeFully, type Durable, type RawFile } from './raw-file.js';
import { EventTail } from './event-tail.js';
import type { TornTail } from './log-line.js';

/** Called with the kinds removed from an event before it was written (for metrics). */
export type RedactionListener = (session: string, seq: number, hits: string[]) => void;

export interface SessionLogParts {
  id: string;
  file: string;
  fh: RawFile;
  lock: FileLock;
  events: LogEvent[];
  offsets: number[];
  /** File length after any repair. */
  size: number;
  repaired: TornTail | undefined;
  /** Seq of the last line in the file; 0 for an empty file. */
  lastSeq: number;
  onRedact: RedactionListener | undefined;
  /** `sync()` waits for the disk (fdatasync), or only for the OS (see LogStore's `durability`). */
  durable: boolean;
  /** Awaited before each `sync()` (the store's `beforeSync`). */
  beforeSync: (() => Promise<void>) | undefined;
  /** Called once on close, after the lock is released (the store's in-process guard). */
  onClose: () => void;
  /**
   * How a durable log's name is made durable (docs/decisions/0014-a-new-conversations-files-measured.md).
   * A new log's first sync commits its bytes so far to the process's shared journal (`journal`)
   * instead of an fdatasync of the new file. The first sync of the file itself (a new log's second,
   * a log opened again's first: its name may still rest on a journal's checkpoint) syncs, beside
   * it, the directory that names it (`dirSync`, the store's shared directory sync, 0010).
   */
  names?: { journal?: (bytes: Buffer) => Promise<void>; dirSync: () => Promise<void> };
}

export class SessionLog {
  readonly id: string;
  readonly file: string;
  /** The torn tail cut off when this log was opened, if there was one. */
  readonly repaired: TornTail | undefined;
  readonly #tail: EventTail;
  readonly #writer: GroupCommitWriter;
  readonly #fh: RawFile;
  readonly #lock: FileLock;
  readonly #onRedact: RedactionListener | undefined;
  readonly #onClose: () => void;
  readonly #beforeSync: (() => Promise<void>) | undefined;
  #closing: Promise<void> | undefined;

  /** Use `LogStore.open`. */
  constructor(parts: SessionLogParts) {
    this.id = parts.id;
    this.file = parts.file;
    this.repaired = parts.repaired;
    this.#tail = new EventTail(parts.events, parts.offsets, parts.lastSeq, parts.size);
    this.#fh = parts.fh;
    this.#lock = parts.lock;
    this.#onRedact = parts.onRedact;
    this.#onClose = parts.onClose;
    this.#beforeSync = parts.beforeSync;
    this.#writer = new GroupCommitWriter(parts.names === undefined ? parts.fh : namedWithSyncs(parts.fh, parts.names), parts.size, parts.durable);
  }

  /**
   * Every event read on open (from the open's offset, if one was given) followed by every event
   * appended since, in seq order. Read-only: events are shared, not copied.
   */
  get events(): readonly LogEvent[] {
    const events = this.#tail.events;
    if (events === undefined) throw new Error(`${this.file}: events are no longer kept in memory; read the file`);
    return events;
  }

  /**
   * Stop keeping events in memory (the owner folded them as they came): a live session then
   * holds its conversation once, not once more as events. Offsets stay.
   */
  releaseEvents(): void {
    this.#tail.release();
  }

  /** Seq of the last event (appended or read); 0 for an empty log. */
  get lastSeq(): number {
    return this.#tail.lastSeq;
  }

  /** The write error that stopped this log, if one did (every later append throws it). */
  get writeError(): Error | undefined {
    return this.#writer.error;
  }

  /** Byte length of the file once every queued append is written. */
  get size(): number {
    return this.#writer.end;
  }

  /**
   * Redacts the body, gives it the next seq and `ts`, serialises it as one line (`seq`, `ts`,
   * `type`, then the body's fields) and queues the write. Returns at once with the event as
   * written, redacted. The body must not be changed afterwards (it may be shared with the event).
   * Throws if the log is closed or an earlier write failed.
   */
  append(body: EventBody, ts: string): LogEvent {
    if (this.#closing !== undefined) throw new ProxyError('internal_error', { detail: `append to closed log ${this.file}` });
    const writeError = this.#writer.error;
    if (writeError !== undefined) throw writeError;
    const { event, line, hits } = this.#tail.add(body, ts);
    this.#writer.write(Buffer.from(line, 'utf8'));
    if (hits.length > 0) this.#onRedact?.(this.id, event.seq, hits);
    return event;
  }

  /** Resolves when every event appended before the call is on disk; rejects on a write error. */
  sync(): Promise<void> {
    const before = this.#beforeSync;
    return before === undefined ? this.#writer.sync() : before().then(() => this.#writer.sync());
  }

  /** The end of a turn's writing: a sync (the file store has no claim to give back, nor a shared ledger). */
  endTurn(): Promise<void> {
    return this.sync();
  }

  /**
   * The turn protocol of a store shared by replicas (src/store/types.ts): this writer holds the
   * file's lock from open to close, so no one else appended and there is nothing to catch up.
   */
  claim(): Promise<{ events: LogEvent[]; offsets: number[] }> {
    return Promise.resolve({ events: [], offsets: [] });
  }

  unclaim(): Promise<void> {
    return Promise.resolve();
  }

  /** One process holds the files: what locates a session is saved in its sidecar on leaving memory. */
  publishWith(_entry: () => unknown): void {}

  /** Byte offset of the line holding `seq`, if this log has it in memory. */
  offsetOf(seq: number): number | undefined {
    return this.#tail.offsetOf(seq);
  }

  /**
   * Waits for every queued append to be durable, then closes the file and releases the lock.
   * Rejects with a write error if there was one (the lock is released all the same). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    let failure: unknown;
    try {
      await this.#writer.sync();
    } catch (err) {
      failure = err;
    }
    await this.#writer.idle();
    try {
      this.#fh.close();
    } catch (err) {
      failure ??= err;
    }
    await this.#lock.release().catch((err: unknown) => {
      failure ??= err;
    });
    this.#onClose();
    if (failure !== undefined) throw failure;
  }
}

/**
 * `fh` whose name is made durable with its first own datasync. With a `journal` (a new log), what
 * is written before the first datasync is kept and that datasync commits it to the journal; the
 * file's own first datasync is then the second.
 */
export function namedWithSyncs(fh: RawFile, names: NonNullable<SessionLogParts['names']>): Durable {
  let kept: Buffer[] | undefined = names.journal === undefined ? undefined : [];
  let named = false;
  return {
    get fd() {
      return fh.fd;
    },
    write(buf) {
      writeFully(fh.fd, buf);
      kept?.push(buf);
    },
    datasync() {
      if (kept !== undefined) {
        // Asked once: if it fails, the writer is poisoned and syncs no more.
        const bytes = kept.length === 1 ? kept[0]! : Buffer.concat(kept);
        kept = undefined;
        return names.journal!(bytes);
      }
      if (named) return fh.datasync();
      named = true;
      return Promise.all([fh.datasync(), names.dirSync()]).then(() => undefined);
    },
  };
}
