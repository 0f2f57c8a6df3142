/**
 * Appends without waiting on the disk, and makes them durable in groups (docs/architecture.md section 12:
 * "append to the log without waiting on the disk, and wait for durability (group commit) only
 * before the answer's last byte").
 *
 * `write` queues bytes and returns at once. One drive loop, at most one running, does the I/O in
 * queue order: it writes everything queued in one call, and when someone waits in `sync()` it
 * runs one `fdatasync` for every waiter whose bytes are written, however many there are. Syncs
 * that arrive during an fsync share the next one. A waiter is served before further writes, so a
 * steady stream of appends cannot starve it.
 *
 * The first I/O error poisons the writer: every pending and later `sync()` rejects with it and
 * later `write`s throw it. The bytes on disk are then unknown; the next open repairs a torn tail.
 */
import { writeFully, type Durable } from './raw-file.js';

interface Waiter {
  /** Durable once `synced >= target`. */
  target: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class GroupCommitWriter {
  readonly #fh: Durable;
  #queue: Buffer[] = [];
  #queued = 0;
  /** Bytes handed to `write` since the start: the logical end of the file. */
  #appended: number;
  /** Bytes the OS has accepted. */
  #written: number;
  /** Bytes known to be on disk. */
  #synced: number;
  #waiters: Waiter[] = [];
  /**
   * Whether the drive loop runs. Cleared synchronously by the loop as it decides to stop, never in
   * a later callback: a waiter resolved by the last fsync may append again before such a callback
   * ran, and would find no loop to write it (a stall the crash test found).
   */
  #active = false;
  /** A kick is queued as a microtask. */
  #scheduled = false;
  #drained: Promise<void> = Promise.resolve();
  #error: Error | undefined;

  readonly #durable: boolean;

  /**
   * `size`: the file's length when opened (already durable). `durable`: `sync()` waits for an
   * fdatasync (the default); false, only for the bytes to be written to the OS, which a crash of
   * the process does not lose but a crash of the machine may (docs/decisions.md, Durability).
   */
  constructor(fh: Durable, size: number, durable = true) {
    this.#fh = fh;
    this.#durable = durable;
    this.#appended = size;
    this.#written = size;
    this.#synced = size;
  }

  /** The byte offset the next write will land at. */
  get end(): number {
    return this.#appended;
  }

  get error(): Error | undefined {
    return this.#error;
  }

  write(bytes: Buffer): void {
    if (this.#error !== undefined) throw this.#error;
    this.#queue.push(bytes);
    this.#queued += bytes.length;
    this.#appended += bytes.length;
    // Started after the current task: the events a request appends together go in one write.
    if (!this.#scheduled && !this.#active) {
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#kick();
      });
    }
  }

  /** Resolves when every byte written before the call is on disk; rejects on any I/O error. */
  sync(): Promise<void> {
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#synced >= this.#appended) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiters.push({ target: this.#appended, resolve, reject });
      this.#kick();
    });
  }

  /** Resolves once the drive loop has stopped (nothing queued, no waiter), e.g. before a close. */
  async idle(): Promise<void> {
    while (this.#active || this.#scheduled) {
      if (this.#scheduled) await Promise.resolve();
      else await this.#drained;
    }
  }

  #kick(): void {
    if (this.#active) return;
    this.#active = true;
    // #drive never rejects: it turns every error into the poisoned state.
    this.#drained = this.#drive();
  }

  async #drive(): Promise<void> {
    try {
      for (;;) {
        if (this.#waiters.some((w) => w.target <= this.#written)) {
          const upTo = this.#written;
          if (this.#durable) await this.#fh.datasync();
          this.#synced = upTo;
          this.#settle();
        } else if (this.#queue.length > 0) {
          this.#flushQueue();
        } else {
          this.#active = false;
          return;
        }
      }
    } catch (err) {
      this.#active = false;
      this.#fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * Written synchronously: an append to the page cache takes microseconds, and the promise API
   * cost several times that in dispatch on the main thread, once per session per group commit
   * (bench/RESULTS.md, Peers). Only the wait for the disk (`datasync`) is asynchronous.
   */
  #flushQueue(): void {
    const parts = this.#queue;
    const total = this.#queued;
    this.#queue = [];
    this.#queued = 0;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
    if (this.#fh.write !== undefined) this.#fh.write(bytes);
    else writeFully(this.#fh.fd, bytes);
    // A failed write poisons the writer: what it counted then no longer matters.
    this.#written += total;
  }

  #settle(): void {
    const still: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.target <= this.#synced) w.resolve();
      else still.push(w);
    }
    this.#waiters = still;
  }

  #fail(err: Error): void {
    this.#error = err;
    this.#queue = [];
    this.#queued = 0;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.reject(err);
  }
}
