/**
 * The PostgreSQL store ([store] kind = "postgres", docs/scaling.md): every replica of the proxy
 * on one database. Logs are rows of `events` (migrations.ts), read back as the file store reads
 * its files; a writer is a PgSessionLog. One writer per session per process (a second open here
 * is `log_locked`, as in the file store); across replicas, writers take turns through `claim`.
 */
import pg from 'pg';
import { ProxyError } from '../../core/errors.js';
import type { LogEvent } from '../../core/events.js';
import type { LogRead, ReadOptions } from '../../log/reader.js';
import type { RedactionListener } from '../../log/session-log.js';
import type { IndexSnapshot, LocateQuery, OpenOptions, SessionWriter, Store } from '../types.js';
import { PgBlobStore } from './blobs.js';
import { PgPruner } from './prune.js';
import { PgClientLedger } from './client-ledger.js';
import { PgKeyStore } from './client-keys.js';
import { migrate } from './migrate.js';
import { rowsToEvents, type EventRow } from './rows.js';
import { PgSessionLog } from './session-log.js';
import { reaching } from './unavailable.js';

export interface PgStoreOptions {
  onRedact?: RedactionListener;
  /** `write`: commits do not wait for the database's WAL flush (synchronous_commit off). */
  durability?: 'fsync' | 'write';
  beforeSync?: () => Promise<void>;
  /** Awaited with the events a writer reads from the database (its opening, each claim's catch-up) before they are used. */
  afterRead?: (events: readonly LogEvent[]) => Promise<void>;
  /** Connections kept by this process; each turn in progress holds one (default 20). */
  poolSize?: number;
  /** How long a turn waits for another replica's turn on the same session (default 60 s). */
  lockWaitMs?: number;
  /** How long a new connection may take before the request hears `store_unavailable` (default 5 s). */
  connectTimeoutMs?: number;
}

/** The same ids as the file store, so logs move between the two unchanged. */
const ID_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export class PgStore implements Store {
  readonly kind = 'postgres';
  readonly shared = true;
  readonly #pool: pg.Pool;
  readonly #opts: PgStoreOptions;
  readonly #openHere = new Set<string>();
  readonly ledger: PgClientLedger;
  readonly keys: PgKeyStore;
  readonly blobs: PgBlobStore;
  readonly pruner: PgPruner;

  private constructor(pool: pg.Pool, opts: PgStoreOptions) {
    this.#pool = pool;
    this.#opts = opts;
    this.ledger = new PgClientLedger(pool);
    this.keys = new PgKeyStore(pool);
    this.blobs = new PgBlobStore(pool);
    this.pruner = new PgPruner(pool);
  }

  /** Connects, checks the database keeps text as UTF-8 (lines are stored byte for byte) and migrates it. */
  static async connect(url: string, opts: PgStoreOptions = {}): Promise<PgStore> {
    // Set per connection, not per claim: a claim is then two round trips (lock, catch-up read).
    // lock_timeout bounds the wait for the advisory lock as for any other lock.
    const lockWaitMs = Math.max(1, Math.floor(opts.lockWaitMs ?? 60_000));
    const connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 20,
      // A database that is down or cut off answers within these bounds, never a hang: the connect
      // timeout, and a statement (a claim's lock wait included) at most lock_timeout plus as long again.
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: lockWaitMs + connectTimeoutMs,
      keepAlive: true,
      options: `-c lock_timeout=${lockWaitMs}${opts.durability === 'write' ? ' -c synchronous_commit=off' : ''}`,
    });
    // An idle connection the server dropped is only replaced; a query in flight reports its own error.
    pool.on('error', () => undefined);
    try {
      const { rows } = await pool.query<{ enc: string }>("SELECT current_setting('server_encoding') AS enc");
      if (rows[0]?.enc !== 'UTF8') {
        throw new ProxyError('config_invalid', { file: 'database', key: 'store', detail: `the database's encoding is ${rows[0]?.enc}, the log needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8')` });
      }
      await migrate(pool, 'database');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return new PgStore(pool, opts);
  }

  file(id: string): string {
    return `postgres:sessions/${checkId(id)}`;
  }

  async listSessions(): Promise<string[]> {
    const { rows } = await this.#query<{ id: string }>('SELECT id FROM sessions ORDER BY id COLLATE "C"');
    return rows.map((r) => r.id);
  }

  async exists(id: string): Promise<boolean> {
    const { rowCount } = await this.#query('SELECT 1 FROM sessions WHERE id = $1', [checkId(id)]);
    return rowCount === 1;
  }

  async read(id: string, opts: ReadOptions = {}): Promise<LogRead> {
    const where = this.file(id);
    if (!(await this.exists(id))) throw new ProxyError('session_not_found', { session: id, file: where });
    const from = opts.fromOffset ?? 0;
    const { rows } = await this.#query<EventRow>('SELECT seq, off, line FROM events WHERE session_id = $1 AND off >= $2 ORDER BY seq', [id, from]);
    const first = rows[0];
    if (from > 0 && (first === undefined ? from !== (await this.#end(id)) : Number(first.off) !== from)) {
      throw new ProxyError('log_malformed', { file: where, line: `byte ${from}`, detail: 'not the start of a line' });
    }
    const read = rowsToEvents(rows, where, from === 0 ? 0 : undefined);
    return { events: read.events, offsets: read.offsets, end: rows.length === 0 ? from : read.end };
  }

  async readEventAt(id: string, offset: number): Promise<LogEvent> {
    const where = this.file(id);
    const { rows } = await this.#query<EventRow>('SELECT seq, off, line FROM events WHERE session_id = $1 AND off = $2', [id, offset]);
    if (rows.length === 0) throw new ProxyError('log_malformed', { file: where, line: `byte ${offset}`, detail: 'no event starts there' });
    return rowsToEvents(rows, where, undefined).events[0]!;
  }

  async open(id: string, opts: OpenOptions): Promise<SessionWriter> {
    const where = this.file(id);
    if (this.#openHere.has(id)) throw new ProxyError('log_locked', { file: where, pid: process.pid });
    this.#openHere.add(id);
    try {
      // A row made here is a log with no events (each event names its session's row): nothing to read.
      const made = opts.create && (await this.#query('INSERT INTO sessions (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [id])).rowCount === 1;
      const read = made ? { events: [], offsets: [], end: 0 } : await this.read(id, opts.fromOffset === undefined ? {} : { fromOffset: opts.fromOffset });
      const last = read.events.at(-1)?.seq ?? (made ? 0 : await this.#lastSeq(id));
      if (!made) await this.#opts.afterRead?.(read.events);
      return new PgSessionLog({
        id, where, pool: this.#pool, events: read.events, offsets: read.offsets, lastSeq: last, size: read.end,
        onRedact: this.#opts.onRedact, beforeSync: this.#opts.beforeSync, afterRead: this.#opts.afterRead, lockWaitMs: this.#opts.lockWaitMs ?? 60_000,
        onClose: () => this.#openHere.delete(id),
      });
    } catch (err) {
      this.#openHere.delete(id);
      throw err;
    }
  }

  async exportLines(id: string): Promise<string[]> {
    if (!(await this.exists(id))) throw new ProxyError('session_not_found', { session: id, file: this.file(id) });
    const { rows } = await this.#query<{ line: string }>('SELECT line FROM events WHERE session_id = $1 ORDER BY seq', [id]);
    return rows.map((r) => r.line);
  }

  /** One transaction: the session row and every event, at the offsets the lines have as a file. */
  async importLog(id: string, lines: readonly string[]): Promise<void> {
    const where = this.file(id);
    const client = await reaching(() => this.#pool.connect());
    try {
      await client.query('BEGIN');
      const made = await client.query('INSERT INTO sessions (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [id]);
      if (made.rowCount !== 1) throw new ProxyError('bad_argument', { detail: `${where} exists already; nothing was written` });
      const rows = { seq: [] as number[], off: [] as number[], type: [] as string[], line: [] as string[] };
      let off = 0;
      lines.forEach((line, i) => {
        const event = JSON.parse(line) as { type?: unknown };
        rows.seq.push(i + 1);
        rows.off.push(off);
        rows.type.push(String(event.type));
        rows.line.push(line);
        off += Buffer.byteLength(line, 'utf8') + 1;
      });
      await client.query('INSERT INTO events (session_id, seq, off, type, line) SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[])', [id, rows.seq, rows.off, rows.type, rows.line]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async readIndex<T = unknown>(id: string): Promise<T | undefined> {
    const { rows } = await this.#query<{ index: T | null }>('SELECT index FROM sessions WHERE id = $1', [checkId(id)]);
    return rows[0]?.index ?? undefined;
  }

  async writeIndex(id: string, value: unknown): Promise<void> {
    await this.#query('UPDATE sessions SET index = $2 WHERE id = $1', [checkId(id), JSON.stringify(value)]);
  }

  /**
   * The saved indexes with each log's length. A session's published entry is committed with its
   * events, so it is current by construction: it stands in for an older saved one.
   */
  async indexSnapshot(): Promise<IndexSnapshot[]> {
    const { rows } = await this.#query<{ id: string; index: Record<string, unknown> | null; entry: unknown; size: string | null }>(`
      SELECT s.id, s.index, s.entry, (SELECT e.off + octet_length(e.line) + 1 FROM events e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1) AS size
      FROM sessions s ORDER BY s.id COLLATE "C"`);
    return rows.map((r) => {
      const size = r.size === null ? 0 : Number(r.size);
      const index = r.entry === null ? (r.index ?? undefined) : { ...(r.index ?? {}), version: 2, log_size: size, entry: r.entry };
      return { id: r.id, index, size };
    });
  }

  async locate(query: LocateQuery): Promise<unknown[]> {
    // The retry's clause only when asked: every new conversation's lookup would pay its index probe.
    const { rows } = query.retryTip === undefined
      ? await this.#query<{ entry: unknown }>(
        `SELECT entry FROM sessions WHERE entry IS NOT NULL AND (entry->>'tip' = ANY($1::text[]) OR ($2::text IS NOT NULL AND entry->'ids' ? $2::text))`,
        [query.tips, query.explicitId ?? null],
      )
      : await this.#query<{ entry: unknown }>(
        `SELECT entry FROM sessions WHERE entry IS NOT NULL AND (entry->>'tip' = ANY($1::text[]) OR ($2::text IS NOT NULL AND entry->'ids' ? $2::text) OR entry->>'retryTip' = $3::text)`,
        [query.tips, query.explicitId ?? null, query.retryTip],
      );
    return rows.map((r) => r.entry);
  }

  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the database did not answer within 1 s')), 1000);
    });
    try {
      await Promise.race([this.#query('SELECT 1'), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  /** A statement whose failure to reach the database is `store_unavailable` (unavailable.ts). */
  #query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return reaching(() => this.#pool.query<R>(text, values));
  }

  async #lastSeq(id: string): Promise<number> {
    const { rows } = await this.#query<{ seq: string }>('SELECT seq FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1', [id]);
    return rows[0] === undefined ? 0 : Number(rows[0].seq);
  }

  async #end(id: string): Promise<number> {
    const { rows } = await this.#query<{ size: string }>('SELECT off + octet_length(line) + 1 AS size FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1', [id]);
    return rows[0] === undefined ? 0 : Number(rows[0].size);
  }
}

function checkId(id: string): string {
  if (!ID_RE.test(id)) {
    throw new ProxyError('bad_argument', { detail: `invalid session id ${JSON.stringify(id)}: use letters, digits, ".", "_", "-"` });
  }
  return id;
}
