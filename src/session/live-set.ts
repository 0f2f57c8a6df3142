/**
 * The sessions held in memory: least recently used first out, by count and by the bytes of log
 * they hold ([sessions] max_live, max_live_mb), and after [sessions].idle_minutes unused. A
 * session in use never leaves: evicted while a turn holds it, it leaves when the turn releases.
 */
import { LRUCache } from 'lru-cache';
import type { LiveSession } from './live-session.js';

export interface LiveSetOptions {
  /** Sessions kept beyond those in use; 0 keeps none. */
  maxCount: number;
  maxBytes: number;
  /** Called once for every session that leaves memory. */
  onLeave: (session: LiveSession) => void;
}

export class LiveSet {
  readonly #lru: LRUCache<string, LiveSession> | undefined;
  /** Evicted while in use: they leave when released. */
  readonly #pinned = new Map<string, LiveSession>();
  readonly #onLeave: (session: LiveSession) => void;

  constructor(opts: LiveSetOptions) {
    this.#onLeave = opts.onLeave;
    if (opts.maxCount > 0) {
      this.#lru = new LRUCache<string, LiveSession>({
        max: opts.maxCount,
        maxSize: opts.maxBytes,
        sizeCalculation: (s) => Math.min(s.bytes, opts.maxBytes),
        dispose: (s, _id, reason) => {
          if (reason === 'set') return;
          if (reason === 'delete') return;
          if (s.users > 0) this.#pinned.set(s.id, s);
          else this.#onLeave(s);
        },
      });
    }
  }

  get size(): number {
    return (this.#lru?.size ?? 0) + this.#pinned.size;
  }

  /** The live session, made the most recently used. */
  get(id: string): LiveSession | undefined {
    return this.#lru?.get(id) ?? this.#pinned.get(id);
  }

  /** Without touching recency. */
  peek(id: string): LiveSession | undefined {
    return this.#lru?.peek(id) ?? this.#pinned.get(id);
  }

  add(session: LiveSession): void {
    if (this.#lru === undefined) this.#pinned.set(session.id, session);
    else this.#lru.set(session.id, session);
  }

  /** A turn released the session: its size is measured again, and a session evicted meanwhile leaves. */
  released(session: LiveSession): void {
    if (session.users > 0) return;
    if (this.#pinned.get(session.id) === session) {
      this.#pinned.delete(session.id);
      this.#onLeave(session);
      return;
    }
    // Set again to be measured again: lru-cache keeps the size of a value set twice.
    if (this.#lru?.peek(session.id) === session) {
      this.#lru.delete(session.id);
      this.#lru.set(session.id, session);
    }
  }

  /** Take out every session not in use and idle since `before` (ms since the epoch). */
  idleSince(before: number): LiveSession[] {
    const idle = this.values().filter((s) => s.users === 0 && s.lastActive <= before);
    for (const s of idle) this.remove(s);
    return idle;
  }

  /** Take a session out without calling `onLeave` (the caller closes it). */
  remove(session: LiveSession): void {
    if (this.#lru?.peek(session.id) === session) this.#lru.delete(session.id);
    if (this.#pinned.get(session.id) === session) this.#pinned.delete(session.id);
  }

  values(): LiveSession[] {
    return [...(this.#lru?.values() ?? []), ...this.#pinned.values()];
  }

  ids(): string[] {
    return this.values().map((s) => s.id);
  }
}
