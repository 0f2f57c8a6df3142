/**
 * What the rest of the proxy needs of the log's store (docs/architecture.md section 3, and
 * docs/scaling.md): two backends fit it, the JSONL files under the data directory (files.ts, the
 * embedded default) and PostgreSQL (pg/, shared by several replicas). Both keep each event as the
 * exact line the file backend writes, and each line at the byte offset it has in that file, so a
 * start point, a digest and `proxy replay` mean the same thing in either.
 */
import type { EventBody, LogEvent } from '../core/events.js';
import type { TornTail } from '../log/log-line.js';
import type { LogRead, ReadOptions } from '../log/reader.js';
import type { RemoveOutcome } from '../log/remove-idle.js';

export type { LogRead, ReadOptions, TornTail };

export interface OpenOptions {
  /** Create the log if it does not exist; otherwise a missing log is `session_not_found`. */
  create: boolean;
  /** Read events from this byte offset (a line start, e.g. the start tracker's) instead of the start. */
  fromOffset?: number;
  /** 1-based line number at `fromOffset`, if known (for error messages). */
  fromLine?: number;
}

/** Events another writer appended since this one last saw the log, with their offsets. */
export interface CaughtUp {
  events: LogEvent[];
  offsets: number[];
  /** The ledger's answer to an admission asked with the claim; refused, the log is not claimed. */
  admitted?: LedgerAnswer;
}

/** An open session log, held by its one writer (per process). */
export interface SessionWriter {
  readonly id: string;
  /** The torn tail cut off when this log was opened, if there was one (files only). */
  readonly repaired: TornTail | undefined;
  /** Events read on open and appended since (until `releaseEvents`). */
  readonly events: readonly LogEvent[];
  releaseEvents(): void;
  readonly lastSeq: number;
  /** The write error that stopped this log, if one did (every later append throws it). */
  readonly writeError: Error | undefined;
  /** Byte length of the log (as a JSONL file) once every queued append is written. */
  readonly size: number;
  /** Redacts, numbers and queues one event; returns it as written. */
  append(body: EventBody, ts: string): LogEvent;
  /** Resolves when every event appended before the call is durable. */
  sync(): Promise<void>;
  /**
   * A sync that ends the turn's writing (its last append done): the database store commits the
   * events, `charge` (a reply's cost, for a store whose `ledger` is shared) and the end of the
   * turn's claim in one transaction. The file store syncs; it is never given a charge.
   */
  endTurn(charge?: LedgerCharge): Promise<void>;
  offsetOf(seq: number): number | undefined;
  /**
   * Take the session for one turn and return what other writers appended since this one last saw
   * the log. The file store holds its lock from open to close, so nothing is ever returned; the
   * database store takes a per-session lock here (`log_locked` when it cannot within its wait).
   * `admission`: a client key's, asked of the shared ledger in the same statement (`admitted`),
   * and refused before the lock is taken; a store without a shared ledger leaves it unasked.
   */
  claim(admission?: LedgerAdmission): Promise<CaughtUp>;
  /** Give the turn's hold back, once its appends are durable. */
  unclaim(): Promise<void>;
  /**
   * What locates the session, asked for as its appends are committed, so other replicas find it
   * (the database store; the file store saves its sidecar when the session leaves memory).
   */
  publishWith(entry: () => unknown): void;
  close(): Promise<void>;
}

/** One stored session's saved index and its log's length, for the startup scan. */
export interface IndexSnapshot {
  id: string;
  /** The saved index (the sidecar's value), undefined when none or unreadable. */
  index: unknown;
  /** Byte length of the log, -1 when unknown. */
  size: number;
}

/** What a client key's admission asks of a shared ledger. */
export interface LedgerAdmission {
  client: string;
  /** Start of the budget's window, ms (-Infinity: all time). */
  from: number;
  budgetUsd: number | undefined;
  perMinute: number | undefined;
  now: number;
}

/** A reply's cost added to its client key's spend on the UTC day of `ts` (ms). */
export interface LedgerCharge {
  client: string;
  ts: number;
  usd: number;
}

/** A shared ledger's answer: the key's spend in its window, and the ms to wait for a token (0: one was taken). */
export interface LedgerAnswer {
  spent: number;
  waitMs: number;
}

/**
 * Client keys' spend and request rates kept where every replica reads them (the database store;
 * the file store keeps them in the process and its spend ledger file).
 */
export interface ClientLedger {
  /** The key's spend in its window and, when it has a rate and is under budget, a token taken (0) or the ms to wait. */
  admit(q: LedgerAdmission): Promise<LedgerAnswer>;
  /** Adds a reply's cost, durably when this resolves. */
  charge(entry: LedgerCharge): Promise<void>;
}

export type BudgetPeriod = 'day' | 'month' | 'total';

/** A client key made by `proxy keys add`: a config key's fields (ClientKey's shape), and when it was made and revoked. */
export interface StoredKey {
  name: string;
  /** The key's SHA-256 in hex; never the key. */
  sha256: string;
  models: string[] | undefined;
  budgetUsd?: number;
  budgetPeriod: BudgetPeriod;
  requestsPerMinute?: number;
  admin?: true;
  createdAt: string;
  revokedAt: string | undefined;
}

/** Client keys kept in the store, changed without a restart (`proxy keys`; the database store only). */
export interface KeyStore {
  add(key: Omit<StoredKey, 'createdAt' | 'revokedAt'>): Promise<void>;
  /** Every key, revoked ones included, by name. */
  list(): Promise<StoredKey[]>;
  revoke(name: string): Promise<void>;
  setBudget(name: string, usd: number | undefined, period: BudgetPeriod | undefined): Promise<void>;
  /** Moves on every change: a replica reloads the keys when it has. */
  version(): Promise<number>;
  /** USD the key has spent since `from` (ms; -Infinity: all time), from the shared ledger. */
  spent(name: string, from: number): Promise<number>;
}

/** Removing the logs of sessions idle past a time (`proxy sessions prune`). */
export interface SessionPruner {
  /**
   * Removes the log when its last event is before `idleBefore` (ms since the epoch) and no live
   * process holds it; `dryRun` decides the same and removes nothing (src/log/remove-idle.ts,
   * src/store/pg/prune.ts).
   */
  removeIdle(id: string, idleBefore: number, dryRun: boolean): Promise<RemoveOutcome>;
  /** The first syncs a crashed proxy left, put back into their logs first, so none comes back after a removal (files). */
  recoverFirstSyncs(): Promise<unknown>;
  /**
   * Removes the images no log names that no proxy has written or confirmed since `idleBefore`
   * (docs/decisions/0026-images-no-log-names-removed.md); `dryRun` counts them and removes nothing.
   * `leaving`: sessions whose logs are not to be read for names (a dry run's, which would go).
   */
  removeUnnamedImages(idleBefore: number, dryRun: boolean, leaving: readonly string[]): Promise<ImagesRemoved>;
}

export interface ImagesRemoved {
  /** Images removed (or, in a dry run, that would be), and their bytes. */
  removed: number;
  bytes: number;
  /** Images old enough to go that a log still names, kept. */
  named: number;
  /** Images written or marked by a proxy since the time, kept whether a log names them or not (one may be naming it now). */
  recent: number;
}

export interface LocateQuery {
  explicitId: string | undefined;
  tips: readonly string[];
  retryTip?: string;
}

/** Content kept by its SHA-256 and written once (images; the database store only). */
export interface BlobStore {
  /** Stores the bytes under their digest; a digest already stored is left as it is. */
  put(sha256: string, bytes: Buffer): Promise<void>;
  /** The bytes of each digest found; a digest not stored is absent from the map. */
  get(sha256s: readonly string[]): Promise<Map<string, Buffer>>;
}

export interface Store {
  readonly kind: 'files' | 'postgres';
  /** The log's name in messages (a file path for the file store); checks the id. */
  file(id: string): string;
  listSessions(): Promise<string[]>;
  exists(id: string): Promise<boolean>;
  /** Reads a log without the writer's lock (replay, the CLI); never repairs. */
  read(id: string, opts?: ReadOptions): Promise<LogRead>;
  /** The event whose line starts at `offset`. */
  readEventAt(id: string, offset: number): Promise<LogEvent>;
  open(id: string, opts: OpenOptions): Promise<SessionWriter>;
  readIndex<T = unknown>(id: string): Promise<T | undefined>;
  writeIndex(id: string, value: unknown): Promise<void>;
  /** The log's lines as stored, byte for byte, without their newlines; a torn log is `log_malformed`. */
  exportLines(id: string): Promise<string[]>;
  /**
   * A new log holding exactly these lines, durable when this resolves (`proxy migrate`); a
   * session that already exists is `bad_argument`, and nothing is written.
   */
  importLog(id: string, lines: readonly string[]): Promise<void>;
  /** Every session's saved index and log size, read once at startup. */
  indexSnapshot(): Promise<IndexSnapshot[]>;
  /**
   * Whether other processes write to this store (replicas on one database): a session may then be
   * found in the store that this process has not seen, and its log may grow behind a live copy.
   */
  readonly shared: boolean;
  /**
   * The published entries of sessions an explicit id names or whose whole view ends at one of
   * `tips` (chain hashes): what a replica asks when it does not know a request's session. With
   * `retryTip` (a request the client may be retrying), also the sessions whose view is that
   * request and one reply (their entry's `retryTip`).
   */
  locate(query: LocateQuery): Promise<unknown[]>;
  /** Budgets and rates shared by replicas; undefined for the file store (one process). */
  readonly ledger: ClientLedger | undefined;
  /** Client keys changed without a restart; undefined for the file store (its keys are the config's). */
  readonly keys: KeyStore | undefined;
  /** Images by digest, shared by replicas; undefined for the file store (its images are files in the data dir). */
  readonly blobs: BlobStore | undefined;
  /** Removes idle sessions' logs (docs/decisions/0024-idle-sessions-removed-by-the-operator.md). */
  readonly pruner: SessionPruner;
  /** Resolves when the store answers (a readiness probe): PostgreSQL is asked `SELECT 1` within a second. */
  ping(): Promise<void>;
  /** Releases connections; open writers must be closed first. */
  close(): Promise<void>;
}
