/**
 * Every stored session's list item and rows, kept in memory and keyed by the log's length: a
 * session is read again only when its log grew (docs/inspector.md, The sessions index). The
 * lengths come from the store's startup scan (`indexSnapshot`, one query on PostgreSQL); a scan
 * older than `refreshMs` is redone in the background, and a session this process just answered
 * is read again at once (`touch`).
 */
import type { PriceBook } from '../stats/prices.js';
import type { Store } from '../store/types.js';
import type { PricedRow } from './figures.js';
import { entryOf, type SessionEntry } from './session-entry.js';

export interface SessionIndexOptions {
  /** A scan older than this is redone (in the background; 0: before answering). */
  refreshMs: number;
  now: () => number;
  /** A request that was answered since the session was last read (not called on the first scan). */
  onAnswered?: (session: string, row: PricedRow) => void;
}

/** Logs read at once while scanning. */
const PARALLEL = 8;

export class SessionIndex {
  readonly #store: Pick<Store, 'indexSnapshot' | 'read'>;
  readonly #prices: PriceBook;
  readonly #opts: SessionIndexOptions;
  readonly #entries = new Map<string, SessionEntry>();
  /** Sessions whose log could not be read: why, and the length it had (read again once it changes). */
  readonly #unreadable = new Map<string, { error: string; size: number }>();
  readonly #touched = new Set<string>();
  #scannedAt = -Infinity;
  #scan: Promise<void> | undefined;

  constructor(store: Pick<Store, 'indexSnapshot' | 'read'>, prices: PriceBook, opts: SessionIndexOptions) {
    this.#store = store;
    this.#prices = prices;
    this.#opts = opts;
  }

  /** A session's log grew here: read it again before the next answer. */
  touch(id: string): void {
    this.#touched.add(id);
  }

  /** The entries, current to the last scan and to every session touched since. */
  async entries(): Promise<ReadonlyMap<string, SessionEntry>> {
    const stale = this.#opts.now() - this.#scannedAt >= this.#opts.refreshMs;
    if (this.#scannedAt === -Infinity || (stale && this.#opts.refreshMs === 0)) await this.#scanOnce();
    else if (stale) void this.#scanOnce().catch(() => undefined); // the next answer sees it
    if (this.#touched.size > 0) {
      const ids = [...this.#touched];
      this.#touched.clear();
      await this.#readAll(ids.map((id) => ({ id, size: -1 })));
    }
    return this.#entries;
  }

  #scanOnce(): Promise<void> {
    this.#scan ??= this.#rescan().finally(() => {
      this.#scan = undefined;
    });
    return this.#scan;
  }

  async #rescan(): Promise<void> {
    const started = this.#opts.now();
    const snapshot = await this.#store.indexSnapshot();
    const seen = new Set<string>();
    const changed: { id: string; size: number }[] = [];
    for (const { id, size } of snapshot) {
      seen.add(id);
      const known = this.#entries.get(id)?.size ?? this.#unreadable.get(id)?.size;
      if (known !== size || size < 0) changed.push({ id, size });
    }
    for (const id of this.#entries.keys()) if (!seen.has(id)) this.#entries.delete(id);
    for (const id of this.#unreadable.keys()) if (!seen.has(id)) this.#unreadable.delete(id);
    await this.#readAll(changed);
    this.#scannedAt = started;
  }

  /**
   * The sessions whose log cannot be read, by id: left out of every list and figure, so the page
   * names them (as `proxy sessions` does) rather than let them vanish. Current to the last `entries()`.
   */
  unreadable(): { id: string; error: string }[] {
    return [...this.#unreadable].map(([id, u]) => ({ id, error: u.error })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Forces a scan now (the live feed's poll for what other replicas answered). */
  async rescan(): Promise<void> {
    await this.#scanOnce();
    await this.entries();
  }

  #announce(id: string, before: SessionEntry | undefined, after: SessionEntry): void {
    const listener = this.#opts.onAnswered;
    if (listener === undefined) return;
    const done = new Set(before?.rows.filter((r) => r.status !== 'pending').map((r) => r.seq));
    for (const row of after.rows) if (row.status !== 'pending' && !done.has(row.seq)) listener(id, row);
  }

  async #readAll(list: readonly { id: string; size: number }[]): Promise<void> {
    for (let i = 0; i < list.length; i += PARALLEL) {
      await Promise.all(list.slice(i, i + PARALLEL).map(({ id, size }) => this.#read(id, size)));
    }
  }

  async #read(id: string, size: number): Promise<void> {
    try {
      const log = await this.#store.read(id);
      // A touched session's length is not known here; -1 makes the next scan read it once more.
      const entry = entryOf(id, log.events, this.#prices, size, log.torn !== undefined);
      const before = this.#entries.get(id);
      this.#entries.set(id, entry);
      this.#unreadable.delete(id);
      if (this.#scannedAt !== -Infinity) this.#announce(id, before, entry);
    } catch (err) {
      this.#entries.delete(id);
      this.#unreadable.set(id, { error: err instanceof Error ? err.message : String(err), size });
    }
  }
}
