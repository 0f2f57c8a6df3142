/**
 * Sessions: which log an incoming request belongs to, and what it adds. Explicit ids first
 * (docs/architecture.md 5.1), then the chain-hash prefix index, then the latest-reply fingerprint (a client that
 * compacted or dropped its oldest messages). Requests of one session run one at a time; different
 * sessions run in parallel. Live sessions are held in memory up to a limit; the rest are reloaded
 * from their logs on demand, and every index is rebuilt from the logs on start.
 */
import { randomBytes } from 'node:crypto';
import type { EventBody, LogEvent, Recipe } from '../core/events.js';
import type { NeutralMessage, NeutralRequest, ToolSpec } from '../core/types.js';
import type { LogStore, SessionLog } from '../log/store.js';
import { readEventAt, readLog } from '../log/reader.js';
import { StartTracker, WindowState, type StartPoint } from '../window/index.js';
import { mergeCatalog, restoreReply } from './additions.js';
import { catalogCanonical, chainHashes, chainStart } from './fingerprint.js';
import { IncomingMessage, matchLength } from './incoming.js';
import { planRequest, type Plan } from './plan.js';
import { PrefixIndex } from './prefix-index.js';
import { ClientView } from './view.js';

/** A request's conversation, already converted to neutral messages. */
export interface Incoming {
  /** Explicit session id from a header or body field. */
  explicitId?: string;
  /** Leading system prompt (system and developer messages joined). */
  system?: string;
  tools: ToolSpec[];
  /** The conversation after the leading system prompt. */
  messages: NeutralMessage[];
  /** Recipe for a session this request starts. */
  recipe: Recipe;
}

export interface LiveSession {
  readonly id: string;
  readonly log: SessionLog;
  readonly window: WindowState;
  readonly view: ClientView;
  readonly explicitIds: string[];
  catalogCanonical: string;
  /**
   * View length before the running request added its messages; set while a request runs and its
   * client is still there (a request diverging from it then is a concurrent branch: a fork).
   */
  inFlightFrom: number | undefined;
  /** Turns holding or waiting for this session; a session in use is never evicted. */
  users: number;
  lastActive: number;
  tail: Promise<void>;
  /** The last request built in this process, for cache-break attribution. */
  previousRequest: NeutralRequest | undefined;
  /** Prompt tokens the upstream reported for the last reply, for prefix reuse. */
  previousPrompt: number | undefined;
  /** Follows where a window can be built from; written beside the log when the session leaves memory. */
  readonly tracker: StartTracker;
  /** The point this session was loaded from, if it was loaded from a saved one. */
  loadedFrom: StartPoint | undefined;
}

/** The sidecar `<id>.idx.json`: where the next load of the session may start reading. */
interface SessionIndex {
  version: 1;
  point: StartPoint;
}

export interface Turn {
  session: LiveSession;
  plan: Plan | { kind: 'new' };
  /** Append an event to the session's log and fold it into its window and view. */
  append<B extends EventBody>(body: B): B & { seq: number; ts: string };
  /** The events this turn appended so far. */
  readonly appended: readonly LogEvent[];
  /** The client went away: a request diverging from this one is its retry, not a concurrent branch. */
  abandon(): void;
  /** Let the session's next request run. */
  release(): void;
}

export interface SessionManagerOptions {
  now: () => Date;
  /** Live sessions kept in memory beyond those in use. */
  maxLive?: number;
  /** A session idle this long leaves memory (its log stays); undefined: only the count limit. */
  idleMs?: number;
}

export class SessionManager {
  readonly #store: LogStore;
  readonly #now: () => Date;
  readonly #maxLive: number;
  readonly #live = new Map<string, LiveSession>();
  readonly #loading = new Map<string, Promise<LiveSession>>();
  /** Evicted sessions whose logs are still closing (flushing, releasing the lock). */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #index = new PrefixIndex();
  /** Explicit id -> sessions it named, most recent last. */
  readonly #explicit = new Map<string, string[]>();
  readonly #lastActive = new Map<string, number>();

  readonly #idleMs: number | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(store: LogStore, opts: SessionManagerOptions) {
    this.#store = store;
    this.#now = opts.now;
    this.#maxLive = opts.maxLive ?? 256;
    this.#idleMs = opts.idleMs;
  }

  /** Check for idle sessions now and then (at most every minute); stopped by `close`. */
  startSweeping(): void {
    if (this.#idleMs === undefined || this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(() => void this.evictIdle(), Math.min(60_000, Math.max(1_000, this.#idleMs / 2)));
    this.#sweeper.unref();
  }

  /** Close every session not in use and idle for `idleMs`; resolves with how many left memory. */
  async evictIdle(): Promise<number> {
    if (this.#idleMs === undefined) return 0;
    const now = this.#now().getTime();
    const idle = [...this.#live.values()].filter((s) => s.users === 0 && now - s.lastActive >= this.#idleMs!);
    for (const s of idle) this.#retire(s);
    await Promise.all(idle.map((s) => this.#closing.get(s.id)));
    return idle.length;
  }

  /** Rebuild the indexes from every log in the data directory. */
  async init(): Promise<void> {
    for (const id of await this.#store.listSessions()) {
      const { events } = await readLog(this.#store.file(id));
      const view = new ClientView();
      const ids: string[] = [];
      for (const e of events) {
        view.apply(e);
        if (e.type === 'session.start') ids.push(...e.ids);
      }
      this.#indexView(id, view);
      for (const x of ids) this.#nameSession(x, id);
      this.#lastActive.set(id, Date.parse(events.at(-1)?.ts ?? '') || 0);
    }
  }

  get liveCount(): number {
    return this.#live.size;
  }

  /** Find or make the session for a request and wait for its turn. */
  async begin(req: Incoming): Promise<Turn> {
    const canon = req.messages.map((m) => new IncomingMessage(m));
    const found = await this.#find(req, canon);
    if (found === undefined) return this.#start(req, undefined);

    const session = found;
    const explicit = req.explicitId !== undefined;
    session.users++;
    let handedOver = false;
    try {
      // A request already running in this session decides forks without waiting for it.
      if (session.inFlightFrom !== undefined) {
        const plan = planRequest(session.view.entries, canon, { explicit, inFlightFrom: session.inFlightFrom, clientDrops: req.recipe.client_drops });
        if (plan.kind === 'fork') return await this.#fork(session, plan, req);
      }
      const release = await this.#lock(session);
      const plan = planRequest(session.view.entries, canon, { explicit, clientDrops: req.recipe.client_drops });
      if (plan.kind === 'fork') {
        release();
        return await this.#fork(session, plan, req);
      }
      if (isSideRequest(plan, req, session)) {
        // A title or summary call under the conversation's id: its own session, and the
        // conversation's log and prefix stay as they were.
        release();
        return await this.#start(req, undefined);
      }
      session.inFlightFrom = session.view.entries.length;
      const turn = this.#turn(session, plan, release);
      handedOver = true;
      if (plan.kind === 'rewrite') turn.append({ type: 'client.rewrite', from_seq: plan.fromSeq, reason: 'the client history diverged from the log' });
      this.#appendConversation(turn, req, plan.from);
      return turn;
    } finally {
      // The turn gives the session back on release.
      if (!handedOver) session.users--;
    }
  }

  async #find(req: Incoming, incoming: readonly IncomingMessage[]): Promise<LiveSession | undefined> {
    if (req.explicitId !== undefined) {
      const named = this.#explicit.get(req.explicitId);
      if (named === undefined) return undefined;
      const best = named.length === 1 ? named[0] : this.#longestIn(named, req, incoming);
      return best === undefined ? undefined : this.#load(best);
    }
    const h0 = chainStart(req.system, req.tools);
    const quick = this.#extendedLive(h0, incoming);
    if (quick !== undefined) return quick;
    const longest = this.#index.longest(chainHashes(h0, incoming.map((m) => m.canonical)));
    if (longest !== undefined) return this.#load(longest);
    for (let i = incoming.length - 1; i >= 0; i--) {
      const fp = incoming[i]!.fp;
      const hit = fp === undefined ? undefined : this.#index.byLatestReply(fp);
      if (hit !== undefined) return this.#load(hit);
    }
    return undefined;
  }

  /**
   * The common case without hashing the whole request: a live session that opened like it (its
   * first chain hash) and whose whole view the request extends. Undefined when that cannot be
   * decided from the live sessions alone; the full prefix lookup then runs.
   */
  #extendedLive(h0: string, incoming: readonly IncomingMessage[]): LiveSession | undefined {
    if (incoming.length === 0) return undefined;
    const openers = this.#index.openedWith(chainHashes(h0, [incoming[0]!.canonical])[0]!);
    if (openers === undefined) return undefined;
    let best: LiveSession | undefined;
    for (const id of openers) {
      const live = this.#live.get(id);
      if (live === undefined) return undefined;
      if (live.view.h0 !== h0) continue;
      const view = live.view.entries;
      if (view.length > 0 && matchLength(view, incoming) === view.length && (best === undefined || view.length >= best.view.entries.length)) best = live;
    }
    if (best !== undefined) {
      this.#live.delete(best.id);
      this.#live.set(best.id, best);
    }
    return best;
  }

  /** Among the sessions an explicit id named, the one sharing the longest prefix (latest on ties). */
  #longestIn(named: readonly string[], req: Incoming, incoming: readonly IncomingMessage[]): string | undefined {
    const h0 = chainStart(req.system, req.tools);
    const hashes = chainHashes(h0, incoming.map((m) => m.canonical));
    let best: string | undefined;
    let bestLen = -1;
    for (const id of named) {
      const len = this.#index.matchLength(id, hashes);
      if (len >= bestLen) {
        best = id;
        bestLen = len;
      }
    }
    return best;
  }

  async #start(req: Incoming, parent: { session: LiveSession; atSeq: number } | undefined): Promise<Turn> {
    const id = this.#newId();
    const log = await this.#store.open(id, { create: true });
    const session = this.#adopt(id, log);
    session.users++;
    const release = await this.#lock(session);
    session.inFlightFrom = 0;
    const turn = this.#turn(session, { kind: 'new' }, release);
    if (parent === undefined) {
      turn.append({ type: 'session.start', recipe: req.recipe, ids: req.explicitId === undefined ? [] : [req.explicitId] });
      this.#appendConversation(turn, req, 0);
    } else {
      // The fork's log opens with the parent's events before the divergence, unchanged, so its
      // requests share the parent's prefix bytes (and their cache).
      // A parent loaded from a start point holds only the events from there: read it whole.
      const parentEvents = parent.session.loadedFrom === undefined ? parent.session.log.events : (await readLog(parent.session.log.file)).events;
      for (const e of parentEvents) {
        if (e.seq >= parent.atSeq) break;
        const { seq: _seq, ts: _ts, ...body } = e;
        const copy = e.type === 'session.start'
          ? { ...(body as EventBody & { type: 'session.start' }), ids: req.explicitId === undefined ? [] : [req.explicitId], parent: { session: parent.session.id, seq: parent.atSeq } }
          : body;
        turn.append(copy as EventBody);
      }
      session.inFlightFrom = session.view.entries.length;
      // The fork holds the parent's entries before the divergence, which the request repeats: an
      // append. Were the fold to disagree, the request's own history wins (explicit: no fork).
      const canon = req.messages.map((m) => new IncomingMessage(m));
      const plan = planRequest(session.view.entries, canon, { explicit: true, clientDrops: 'follow' });
      if (plan.kind === 'rewrite') turn.append({ type: 'client.rewrite', from_seq: plan.fromSeq, reason: 'fork' });
      this.#appendConversation(turn, req, plan.from);
    }
    if (req.explicitId !== undefined) this.#nameSession(req.explicitId, id);
    return turn;
  }

  #fork(parent: LiveSession, plan: Extract<Plan, { kind: 'fork' }>, req: Incoming): Promise<Turn> {
    return this.#start(req, { session: parent, atSeq: plan.atSeq });
  }

  /** Write what the request adds: a changed system prompt or catalog, then its new messages. */
  #appendConversation(turn: Turn, req: Incoming, from: number): void {
    const session = turn.session;
    if (req.system !== undefined && req.system !== session.view.system) {
      turn.append({ type: 'client.msg', msg: { role: 'system', content: req.system }, head: true });
    }
    const canonical = catalogCanonical(req.tools);
    if (canonical !== session.catalogCanonical) {
      turn.append({ type: 'catalog', tools: mergeCatalog(session.view.tools, req.tools) });
      session.catalogCanonical = canonical;
    }
    for (const msg of req.messages.slice(from)) turn.append({ type: 'client.msg', msg: restoreReply(session.view, msg) });
    // Index now, not at release: a concurrent request extending the same prefix must find this
    // session (and fork from it) rather than start a session of its own.
    this.#indexView(session.id, session.view);
  }

  #turn(session: LiveSession, plan: Turn['plan'], release: () => void): Turn {
    let released = false;
    const appended: LogEvent[] = [];
    return {
      session,
      plan,
      appended,
      append: <B extends EventBody>(body: B) => {
        const event = session.log.append(body, this.#now().toISOString()) as unknown as B & { seq: number; ts: string };
        appended.push(event as LogEvent);
        session.tracker.apply(event as LogEvent, session.log.offsetOf(event.seq) ?? 0);
        session.window.apply(event as LogEvent);
        session.view.apply(event as LogEvent);
        session.lastActive = this.#now().getTime();
        return event;
      },
      abandon: () => {
        if (!released) session.inFlightFrom = undefined;
      },
      release: () => {
        if (released) return;
        released = true;
        session.users--;
        session.inFlightFrom = undefined;
        this.#indexView(session.id, session.view);
        this.#lastActive.set(session.id, session.lastActive);
        release();
        this.#evict();
      },
    };
  }

  async #lock(session: LiveSession): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const previous = session.tail;
    session.tail = previous.then(() => mine);
    await previous;
    return release;
  }

  async #load(id: string): Promise<LiveSession> {
    const live = this.#live.get(id);
    if (live !== undefined) {
      this.#live.delete(id);
      this.#live.set(id, live);
      return live;
    }
    const pending = this.#loading.get(id);
    if (pending !== undefined) return pending;
    const loading = (async () => {
      await this.#closing.get(id);
      // Read from the saved start point when there is one: the carried events, then the log
      // from the start on. The window built from them is the window built from every event.
      const point = await this.#savedPoint(id);
      const carried = point === undefined ? [] : await this.#readCarried(id, point);
      const usable = point !== undefined && carried !== undefined;
      const log = await this.#store.open(id, usable ? { create: false, fromOffset: point.start.offset } : { create: false });
      if (usable && log.events[0]?.seq !== point.start.seq) {
        await log.close();
        throw new Error(`${this.#store.indexFile(id)}: the start point names seq ${point.start.seq}, the log has ${log.events[0]?.seq ?? 'nothing'} there`);
      }
      const session = this.#adopt(id, log);
      session.loadedFrom = usable ? point : undefined;
      const fold = (e: LogEvent, offset: number) => {
        session.tracker.apply(e, offset);
        session.window.apply(e);
        session.view.apply(e);
        if (e.type === 'session.start') session.explicitIds.push(...e.ids);
      };
      if (usable) carried.forEach((e, i) => fold(e, point.carried[i]!.offset));
      // The last request is rebuilt on the way (cache-break attribution compares with it).
      const lastReq = log.events.findLast((e) => e.type === 'llm.req');
      for (const e of log.events) {
        if (e === lastReq && e.type === 'llm.req') {
          session.previousRequest = session.window.build({ route: e.route, model: e.model, origin: e.origin, params: e.params }).request;
        }
        if (e.type === 'llm.resp' && e.aborted !== true) session.previousPrompt = e.reply.usage?.prompt_tokens;
        fold(e, log.offsetOf(e.seq) ?? 0);
      }
      session.catalogCanonical = catalogCanonical(session.view.tools);
      return session;
    })();
    this.#loading.set(id, loading);
    try {
      return await loading;
    } finally {
      this.#loading.delete(id);
    }
  }

  async #savedPoint(id: string): Promise<StartPoint | undefined> {
    try {
      const index = await this.#store.readIndex<SessionIndex>(id);
      return index?.version === 1 && index.point.start.seq > 1 ? index.point : undefined;
    } catch {
      return undefined; // an unreadable index only costs a whole read
    }
  }

  /** The carried events a saved point names, or undefined when the point does not fit the log. */
  async #readCarried(id: string, point: StartPoint): Promise<LogEvent[] | undefined> {
    try {
      const events = await Promise.all(point.carried.map((c) => readEventAt(this.#store.file(id), c.offset)));
      return events.every((e, i) => e.seq === point.carried[i]!.seq) ? events : undefined;
    } catch {
      return undefined;
    }
  }

  /** Save where the session's next load may start, then close its log. */
  async #saveAndClose(s: LiveSession): Promise<void> {
    await s.log.sync();
    const tracked = s.tracker.point;
    const point = tracked !== undefined && (s.loadedFrom === undefined || tracked.start.seq > s.loadedFrom.start.seq) ? tracked : s.loadedFrom;
    if (point !== undefined && point.start.seq > 1) await this.#store.writeIndex(s.id, { version: 1, point } satisfies SessionIndex);
    await s.log.close();
  }

  #adopt(id: string, log: SessionLog): LiveSession {
    const session: LiveSession = {
      id, log, window: new WindowState(), view: new ClientView(), explicitIds: [],
      catalogCanonical: catalogCanonical([]), inFlightFrom: undefined, users: 0, lastActive: this.#now().getTime(), tail: Promise.resolve(),
      previousRequest: undefined, previousPrompt: undefined, tracker: new StartTracker(), loadedFrom: undefined,
    };
    this.#live.set(id, session);
    return session;
  }

  /** Close idle sessions beyond the limit, least recently used first. */
  #evict(): void {
    for (const s of this.#live.values()) {
      if (this.#live.size <= this.#maxLive) return;
      if (s.users === 0) this.#retire(s);
    }
  }

  /** Take a session out of memory; its next request may come before the close is done: #load waits for it. */
  #retire(s: LiveSession): void {
    this.#live.delete(s.id);
    const closing = this.#saveAndClose(s).catch(() => undefined).finally(() => this.#closing.delete(s.id));
    this.#closing.set(s.id, closing);
  }

  #indexView(id: string, view: ClientView): void {
    this.#index.index(id, view);
  }

  #nameSession(explicitId: string, id: string): void {
    const list = this.#explicit.get(explicitId) ?? [];
    if (!list.includes(id)) list.push(id);
    this.#explicit.set(explicitId, list);
  }

  #newId(): string {
    const stamp = this.#now().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    return `${stamp}-${randomBytes(4).toString('hex')}`;
  }

  /** Close every live session (flushing its log). */
  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    await Promise.all([...this.#live.values()].map((s) => this.#saveAndClose(s)));
    await Promise.all(this.#closing.values());
    this.#live.clear();
  }

  sessionIds(): string[] {
    return [...this.#lastActive.keys()];
  }
}

/**
 * A request sharing the session's explicit id but nothing of its conversation, under another
 * system prompt: a side call (title generation, a compaction prompt), not a rewrite.
 */
function isSideRequest(plan: Plan, req: Incoming, session: LiveSession): boolean {
  return req.explicitId !== undefined && plan.kind === 'rewrite' && plan.from === 0 && session.view.system !== undefined && req.system !== session.view.system;
}
