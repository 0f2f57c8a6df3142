/**
 * Sessions in and out of memory: made live from a new log, read back from a stored one (from its
 * saved start point when it fits), set aside when the log cannot be read, and saved and closed
 * when they leave. The coordinator (manager.ts) asks; this class keeps what loading and closing
 * share: the loads in flight, the closes in flight, the logs set aside.
 */
import type { LogEvent } from '../core/events.js';
import type { SessionWriter, Store } from '../store/types.js';
import { windowInputOf, type StartPoint } from '../window/index.js';
import { LiveSession } from './live-session.js';
import type { LiveSet } from './live-set.js';
import type { Locator } from './locator.js';
import { entryOf, type SessionFiles } from './session-files.js';

export interface SessionLoaderDeps {
  store: Store;
  files: SessionFiles;
  live: LiveSet;
  locator: Locator;
  now: () => Date;
  warn: (message: string) => void;
  /** Index a live session's prefixes (never a side request's). */
  index: (session: LiveSession) => void;
}

/** Errors that say a log cannot be read as it stands (as opposed to a passing fault). */
const DAMAGE = new Set(['log_malformed', 'session_not_found', 'unknown_recipe_version']);

export class SessionLoader {
  readonly #d: SessionLoaderDeps;
  readonly #loading = new Map<string, Promise<LiveSession>>();
  /** Sessions that left memory and whose logs are still closing (flushing, releasing the lock). */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #damaged = new Map<string, string>();

  constructor(deps: SessionLoaderDeps) {
    this.#d = deps;
  }

  /** Sessions skipped because their logs cannot be read, with the reason. */
  get damaged(): Map<string, string> {
    return this.#damaged;
  }

  /** Whether the session is being read now. */
  loading(id: string): boolean {
    return this.#loading.has(id);
  }

  /** The log's close, while the session that left memory is still closing. */
  closing(id: string): Promise<void> | undefined {
    return this.#closing.get(id);
  }

  /** A session made live from its log; it publishes what locates it as its appends commit. */
  make(id: string, log: SessionWriter): LiveSession {
    const session = new LiveSession(id, log, this.#d.now().getTime());
    log.publishWith(() => entryOf(id, session.view, session.explicitIds, session.lineage, session.lastActive, session.side));
    return session;
  }

  /**
   * The live session, loaded if need be; a log that cannot be read is set aside and undefined
   * returned. A failure of the machine rather than of the log (a lock held elsewhere, too many
   * open files, an I/O error) fails this request only: the next one loads the session again.
   */
  async loadOrForget(id: string): Promise<LiveSession | undefined> {
    try {
      return await this.#load(id);
    } catch (err) {
      if (!DAMAGE.has((err as { code?: string }).code ?? '')) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      this.#damaged.set(id, reason);
      this.#d.locator.forget(id, undefined);
      this.#d.warn(`session ${id} set aside: its log cannot be read (${reason}); the request starts a new session`);
      return undefined;
    }
  }

  async #load(id: string): Promise<LiveSession> {
    const live = this.#d.live.get(id);
    if (live !== undefined) return live;
    const pending = this.#loading.get(id);
    if (pending !== undefined) return pending;
    const loading = this.#read(id);
    this.#loading.set(id, loading);
    try {
      return await loading;
    } finally {
      this.#loading.delete(id);
    }
  }

  /**
   * Read a session back, from its saved start point when there is one: the carried events, then
   * the log from the start on. The window built from them is the window built from every event.
   */
  async #read(id: string): Promise<LiveSession> {
    const { store, files, live } = this.#d;
    await this.#closing.get(id);
    const point = await files.point(id);
    const carried = point === undefined ? undefined : await this.#readCarried(id, point);
    let usable = point !== undefined && carried !== undefined;
    let log = await store.open(id, usable ? { create: false, fromOffset: point!.start.offset } : { create: false });
    if (usable && log.events[0]?.seq !== point!.start.seq) {
      // The saved point does not fit the log (written for another copy of it): read it whole.
      await log.close();
      usable = false;
      log = await store.open(id, { create: false });
    }
    try {
      const session = this.make(id, log);
      session.loadedFrom = usable ? point : undefined;
      if (usable) carried!.forEach((e, i) => session.fold(e, point!.carried[i]!.offset));
      // The last request is rebuilt on the way (cache-break attribution compares with it).
      const lastReq = log.events.findLast((e) => e.type === 'llm.req');
      for (const e of log.events) {
        if (e === lastReq && e.type === 'llm.req') {
          session.previousRequest = session.window.build(windowInputOf(e)).request;
        }
        session.fold(e, log.offsetOf(e.seq) ?? 0);
      }
      log.releaseEvents();
      live.add(session);
      this.#d.index(session);
      return session;
    } catch (err) {
      await log.close().catch(() => undefined);
      throw err;
    }
  }

  /** The carried events a saved point names, or undefined when the point does not fit the log. */
  async #readCarried(id: string, point: StartPoint): Promise<LogEvent[] | undefined> {
    try {
      const events = await Promise.all(point.carried.map((c) => this.#d.store.readEventAt(id, c.offset)));
      return events.every((e, i) => e.seq === point.carried[i]!.seq) ? events : undefined;
    } catch {
      return undefined;
    }
  }

  /** A session leaves memory: its bounded entry stays with the locator, its log closes. */
  leave(s: LiveSession): void {
    this.#d.locator.store(entryOf(s.id, s.view, s.explicitIds, s.lineage, s.lastActive, s.side), s.view);
    const closing = this.saveAndClose(s).catch(() => undefined).finally(() => this.#closing.delete(s.id));
    this.#closing.set(s.id, closing);
  }

  /**
   * A session its store no longer holds (removed by `proxy sessions prune` while live here,
   * decision 0024): out of memory and the locator, nothing saved, its log closed.
   */
  removed(s: LiveSession): void {
    s.removed = true;
    this.#d.live.remove(s);
    this.#d.locator.forget(s.id, s.view);
    const closing = s.log.close().catch(() => undefined).finally(() => this.#closing.delete(s.id));
    this.#closing.set(s.id, closing);
  }

  /** Save where the session's next load may start and what locates it, then close its log. */
  async saveAndClose(s: LiveSession): Promise<void> {
    try {
      await s.log.sync();
      const tracked = s.tracker.point;
      const point = tracked !== undefined && (s.loadedFrom === undefined || tracked.start.seq > s.loadedFrom.start.seq) ? tracked : s.loadedFrom;
      await this.#d.files.save(s.id, s.log.size, point, entryOf(s.id, s.view, s.explicitIds, s.lineage, s.lastActive, s.side));
    } finally {
      await s.log.close();
    }
  }

  /** Every close in flight. */
  async closed(): Promise<void> {
    await Promise.all(this.#closing.values());
  }
}
