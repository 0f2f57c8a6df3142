/**
 * An open session log on PostgreSQL, the database twin of src/log/session-log.ts. Appends are
 * redacted, numbered and serialised exactly as the file store writes them, then committed in
 * batches: one statement, one transaction per batch, holding every event queued since the last
 * batch began (group commit, docs/decisions.md "Durability"). `sync()` resolves once the batch
 * holding the last event appended before it has committed. The first failed batch stops the log:
 * nothing of it is stored (a transaction), and every later append and sync fails with its error.
 *
 * A turn `claim`s the log: a session-level advisory lock on the session id, held by one pooled
 * connection until `unclaim` or `endTurn`, serialises writers across replicas; what another
 * replica appended meanwhile is read back and returned for the caller to fold. While a turn holds
 * the claim its appends wait for a sync, so a steady turn is two commits: the claim, then its
 * events with the reply's charge and the unlock (decision 0008). The (session_id, seq) primary key
 * fences a writer that lost its lock (a dropped connection): its batch fails, it never forks the log.
 */
import type pg from 'pg';
import { ProxyError } from '../../core/errors.js';
import type { EventBody, LogEvent } from '../../core/events.js';
import { EventTail } from '../../log/event-tail.js';
import type { RedactionListener } from '../../log/session-log.js';
import type { CaughtUp, LedgerAdmission, LedgerCharge, SessionWriter } from '../types.js';
import { claimSession, type Claimed } from './claim.js';
import { dayOf } from './client-ledger.js';
import { rowsToEvents } from './rows.js';
import { asUnavailable, isUnavailable, reaching } from './unavailable.js';

export interface PgSessionLogParts {
  id: string;
  /** The log's name in messages. */
  where: string;
  pool: pg.Pool;
  events: LogEvent[];
  offsets: number[];
  lastSeq: number;
  /** Byte length of the log as a JSONL file. */
  size: number;
  onRedact: RedactionListener | undefined;
  beforeSync: (() => Promise<void>) | undefined;
  /** Awaited with what a claim read that others appended, before the claim resolves. */
  afterRead: ((events: readonly LogEvent[]) => Promise<void>) | undefined;
  /** How long a claim waits for another replica's turn before `log_locked`. */
  lockWaitMs: number;
  onClose: () => void;
}

interface Pending {
  seq: number;
  off: number;
  type: string;
  /** Without its newline. */
  line: string;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** A batch; with `release`, the claim's end and a charge in its transaction (migrations.ts, append_events). */
const APPEND = 'SELECT append_events($1, $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::jsonb, $7, $8, $9::date, $10)';

/** The end of a turn asked of the batch loop: the next batch carries it. */
interface Ending {
  release: boolean;
  charge: LedgerCharge | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class PgSessionLog implements SessionWriter {
  readonly id: string;
  readonly repaired = undefined;
  readonly #where: string;
  readonly #pool: pg.Pool;
  readonly #tail: EventTail;
  #committed: number;
  #pending: Pending[] = [];
  #waiters: Waiter[] = [];
  #driving = false;
  #error: Error | undefined;
  #entry: (() => unknown) | undefined;
  #claimed: pg.PoolClient | undefined;
  #ending: Ending | undefined;
  /** Claims and unclaims run in call order. */
  #turns: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;
  readonly #onRedact: RedactionListener | undefined;
  readonly #beforeSync: (() => Promise<void>) | undefined;
  readonly #afterRead: ((events: readonly LogEvent[]) => Promise<void>) | undefined;
  readonly #lockWaitMs: number;
  readonly #onClose: () => void;

  /** Use `PgStore.open`. */
  constructor(parts: PgSessionLogParts) {
    this.id = parts.id;
    this.#where = parts.where;
    this.#pool = parts.pool;
    this.#tail = new EventTail(parts.events, parts.offsets, parts.lastSeq, parts.size);
    this.#committed = parts.lastSeq;
    this.#onRedact = parts.onRedact;
    this.#beforeSync = parts.beforeSync;
    this.#afterRead = parts.afterRead;
    this.#lockWaitMs = parts.lockWaitMs;
    this.#onClose = parts.onClose;
  }

  get events(): readonly LogEvent[] {
    const events = this.#tail.events;
    if (events === undefined) throw new Error(`${this.#where}: events are no longer kept in memory; read the store`);
    return events;
  }

  releaseEvents(): void {
    this.#tail.release();
  }

  get lastSeq(): number {
    return this.#tail.lastSeq;
  }

  get writeError(): Error | undefined {
    return this.#error;
  }

  get size(): number {
    return this.#tail.end;
  }

  append(body: EventBody, ts: string): LogEvent {
    if (this.#closing !== undefined) throw new ProxyError('internal_error', { detail: `append to closed log ${this.#where}` });
    if (this.#error !== undefined) throw this.#error;
    const { event, line, offset, hits } = this.#tail.add(body, ts);
    this.#pending.push({ seq: event.seq, off: offset, type: event.type, line: line.slice(0, -1) });
    if (hits.length > 0) this.#onRedact?.(this.id, event.seq, hits);
    // A claimed turn's events wait for its sync (usually its end): one commit for the turn.
    if (this.#claimed === undefined) this.#kick();
    return event;
  }

  async sync(): Promise<void> {
    if (this.#beforeSync !== undefined) await this.#beforeSync();
    return this.#committedThrough(this.#tail.lastSeq);
  }

  /**
   * A sync that also ends the turn's claim: the events, `charge` and the unlock in one commit. Run
   * in turn order like `unclaim`; what is appended afterwards is written without the claim.
   */
  endTurn(charge?: LedgerCharge): Promise<void> {
    const done = this.#turns.then(async () => {
      if (this.#beforeSync !== undefined) await this.#beforeSync();
      if (this.#claimed === undefined && charge === undefined) return this.#committedThrough(this.#tail.lastSeq);
      return this.#end(this.#claimed !== undefined, charge);
    });
    this.#turns = done.catch(() => undefined);
    return done;
  }

  offsetOf(seq: number): number | undefined {
    return this.#tail.offsetOf(seq);
  }

  publishWith(entry: () => unknown): void {
    this.#entry = entry;
  }

  claim(admission?: LedgerAdmission): Promise<CaughtUp> {
    const claimed = this.#turns.then(() => this.#claim(admission));
    this.#turns = claimed.catch(() => undefined);
    return claimed;
  }

  unclaim(): Promise<void> {
    const done = this.#turns.then(() => this.#unclaim());
    this.#turns = done.catch(() => undefined);
    return done;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    let failure: unknown;
    try {
      await this.#committedThrough(this.#tail.lastSeq);
    } catch (err) {
      failure = err;
    }
    await this.#turns;
    await this.#unclaim().catch((err: unknown) => {
      failure ??= err;
    });
    this.#onClose();
    if (failure !== undefined) throw failure;
  }

  async #claim(admission: LedgerAdmission | undefined): Promise<CaughtUp> {
    if (this.#claimed !== undefined) return { events: [], offsets: [] };
    // Our own appends first: what follows them in the table is someone else's.
    await this.#committedThrough(this.#tail.lastSeq);
    const client = await reaching(() => this.#pool.connect());
    // A connection lost while held (the server restarted, a network cut) takes the lock with it:
    // the next batch fails on it or, sent elsewhere, meets the primary key; never an uncaught error.
    client.on('error', ignore);
    let claimed: Claimed;
    try {
      // The lock and the catch-up read in one call, after a key's admission when there is one; the
      // connection's lock_timeout (store.ts) bounds the wait.
      claimed = await claimSession(client, this.id, this.#tail.lastSeq, admission);
    } catch (err) {
      client.off('error', ignore);
      // The lock may be held (a wait that timed out after it was granted, a failure after it): the
      // connection goes, and the lock with it.
      client.release(err as Error);
      if ((err as { code?: string }).code === '55P03') throw new ProxyError('log_locked', { file: this.#where, pid: `another replica (waited ${this.#lockWaitMs} ms)` });
      // Removed by `proxy sessions prune` since this replica read it (migrations.ts, version 7).
      if ((err as { code?: string }).code === 'P0002') throw new ProxyError('session_not_found', { session: this.id, file: this.#where });
      throw asUnavailable(err);
    }
    const { admitted } = claimed;
    if (claimed.refused) {
      client.off('error', ignore);
      client.release();
      return { events: [], offsets: [], admitted };
    }
    this.#claimed = client;
    try {
      const read = rowsToEvents(claimed.rows, this.#where, this.#tail.lastSeq);
      if (read.events.length > 0) {
        this.#tail.addRead(read.events, read.offsets, read.end);
        this.#committed = this.#tail.lastSeq;
        await this.#afterRead?.(read.events);
      }
      return admitted === undefined ? read : { ...read, admitted };
    } catch (err) {
      await this.#unclaim().catch(() => undefined);
      throw err;
    }
  }

  async #unclaim(): Promise<void> {
    if (this.#claimed === undefined) return;
    // What the turn appended and the unlock, in one commit; after a failed batch, the unlock alone.
    if (this.#error === undefined) return this.#end(true, undefined);
    const client = this.#claimed;
    let failure: unknown;
    try {
      await this.#committedThrough(this.#tail.lastSeq);
    } catch (err) {
      failure = err;
    }
    this.#claimed = undefined;
    client.off('error', ignore);
    try {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [this.id]);
      client.release();
    } catch (err) {
      // A connection that cannot unlock is dropped: its locks go with it.
      client.release(err as Error);
      failure ??= err;
    }
    if (failure !== undefined) throw failure;
  }

  #committedThrough(seq: number): Promise<void> {
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#committed >= seq) return Promise.resolve();
    if (this.#pending.length > 0) this.#kick();
    return new Promise((resolve, reject) => this.#waiters.push({ seq, resolve, reject }));
  }

  /** The next batch (empty if nothing is queued) with the charge and, when `release`, the unlock. */
  #end(release: boolean, charge: LedgerCharge | undefined): Promise<void> {
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      this.#ending = { release, charge, resolve, reject };
      this.#kick();
    });
  }

  /** Start the batch loop after this tick's appends, if it is not running. */
  #kick(): void {
    if (this.#driving) return;
    this.#driving = true;
    queueMicrotask(() => void this.#drive());
  }

  async #drive(): Promise<void> {
    while ((this.#pending.length > 0 || this.#ending !== undefined) && this.#error === undefined) {
      const batch = this.#pending;
      const ending = this.#ending;
      this.#pending = [];
      this.#ending = undefined;
      try {
        await this.#commit(batch, ending);
        if (batch.length > 0) this.#committed = batch.at(-1)!.seq;
        if (ending?.release === true) this.#giveBack(undefined);
        ending?.resolve();
      } catch (err) {
        // The database gone is an outage the client may retry; anything else is a bug to report.
        const what = batch.length > 0 ? `events ${batch[0]!.seq}-${batch.at(-1)!.seq} were not stored` : 'the turn could not end';
        this.#error = isUnavailable(err)
          ? asUnavailable(err) as Error
          : new ProxyError('internal_error', { detail: `${this.#where}: ${what}: ${(err as Error).message}` });
        // Whether the unlock ran is unknown: the connection goes, and the lock with it.
        if (ending?.release === true) this.#giveBack(err as Error);
        ending?.reject(this.#error);
      }
      this.#settle();
    }
    this.#driving = false;
  }

  async #commit(batch: Pending[], ending: Ending | undefined): Promise<void> {
    const entry = this.#entry === undefined || batch.length === 0 ? null : JSON.stringify(this.#entry());
    const charge = ending?.charge;
    const params = [
      this.id, batch.map((r) => r.seq), batch.map((r) => r.off), batch.map((r) => r.type), batch.map((r) => r.line), entry,
      ending?.release === true, charge?.client ?? null, charge === undefined ? null : dayOf(charge.ts), charge?.usd ?? null,
    ];
    // The turn's own connection when it holds one (no wait for the pool), else any.
    if (this.#claimed !== undefined) {
      await this.#claimed.query(APPEND, params);
      return;
    }
    await this.#pool.query(APPEND, params);
  }

  /** The claim's connection back to the pool (its lock already given back, or dropped with it on `err`). */
  #giveBack(err: Error | undefined): void {
    const client = this.#claimed;
    if (client === undefined) return;
    this.#claimed = undefined;
    client.off('error', ignore);
    client.release(err);
  }

  #settle(): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) {
      if (this.#error !== undefined) w.reject(this.#error);
      else if (this.#committed >= w.seq) w.resolve();
      else this.#waiters.push(w);
    }
  }
}

function ignore(): void {}
