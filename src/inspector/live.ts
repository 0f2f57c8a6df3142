/**
 * `GET /api/live`: server-sent events, one `event: request` per answered request. The pipeline
 * tells this process's feed as it records a reply (`answered`); a slow poll of the store's lengths
 * finds what other replicas answered (a shared store only, and only while someone watches). Both
 * arrive through the session index, which reads the grown log and names the rows that are new.
 */
import type { ServerResponse } from 'node:http';
import type { PricedRow } from './figures.js';
import type { SessionIndex } from './session-index.js';

export interface LiveOptions {
  /** Poll of the store for other replicas' answers (ms); 0: no poll. */
  pollMs: number;
  /** A comment line every so often keeps proxies and browsers from closing an idle stream (ms). */
  heartbeatMs: number;
}

interface Watcher {
  session: string | undefined;
  res: ServerResponse;
}

export class LiveFeed {
  readonly #watchers = new Set<Watcher>();
  readonly #opts: LiveOptions;
  #index: SessionIndex | undefined;
  #poll: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #again = false;
  #pending: Promise<unknown> | undefined;

  constructor(opts: LiveOptions) {
    this.#opts = opts;
  }

  attach(index: SessionIndex): void {
    this.#index = index;
  }

  /**
   * The pipeline recorded the reply to a request of `session` (called after the log's sync). The
   * index only notes it unless someone watches: reading the session's log after every answer is
   * work per request that only a watcher needs (the API reads what was noted when it is asked).
   */
  answered(session: string): void {
    const index = this.#index;
    if (index === undefined) return;
    index.touch(session);
    if (this.#watchers.size > 0) this.#read(index);
  }

  /**
   * One read for a burst of answers: the index reads every touched session at once. An answer
   * touched while a read runs may come after that read took the touched set: one more read follows.
   */
  #read(index: SessionIndex): void {
    if (this.#pending !== undefined) {
      this.#again = true;
      return;
    }
    this.#pending = index.entries().catch(() => undefined).finally(() => {
      this.#pending = undefined;
      if (!this.#again) return;
      this.#again = false;
      this.#read(index);
    });
  }

  /** From the index: a row newly answered. */
  publish(session: string, row: PricedRow): void {
    if (this.#watchers.size === 0) return;
    const frame = `event: request\nid: ${session}:${row.seq}\ndata: ${JSON.stringify({ session, ...row })}\n\n`;
    for (const w of this.#watchers) if (w.session === undefined || w.session === session) w.res.write(frame);
  }

  /** Streams to `res` until the client leaves or the server closes. */
  watch(res: ServerResponse, session: string | undefined, headers: Record<string, string>): void {
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    res.write(`retry: 3000\n: watching ${session === undefined ? 'every session' : 'one session'}\n\n`);
    const watcher: Watcher = { session, res };
    this.#watchers.add(watcher);
    res.on('close', () => {
      this.#watchers.delete(watcher);
      this.#timers();
    });
    this.#timers();
  }

  /** Ends every stream (the server is closing: app.close() must not wait on them). */
  close(): void {
    for (const w of this.#watchers) w.res.end();
    this.#watchers.clear();
    this.#timers();
  }

  get watching(): number {
    return this.#watchers.size;
  }

  /** Timers run only while someone watches. */
  #timers(): void {
    const on = this.#watchers.size > 0;
    if (on && this.#heartbeat === undefined && this.#opts.heartbeatMs > 0) {
      this.#heartbeat = setInterval(() => {
        for (const w of this.#watchers) w.res.write(': heartbeat\n\n');
      }, this.#opts.heartbeatMs).unref();
    }
    if (on && this.#poll === undefined && this.#opts.pollMs > 0) {
      this.#poll = setInterval(() => void this.#index?.rescan().catch(() => undefined), this.#opts.pollMs).unref();
    }
    if (!on) {
      clearInterval(this.#heartbeat);
      clearInterval(this.#poll);
      this.#heartbeat = undefined;
      this.#poll = undefined;
    }
  }
}
