/**
 * Sessions: which log an incoming request belongs to, and what it adds (docs/architecture.md 5).
 * A thin coordinator over its parts: the Locator finds a session, the LiveSet holds the sessions in
 * memory, SessionFiles keeps what locates a session beside its log, a Turn holds one request's
 * place in its session. Requests of one session run one at a time; different sessions in parallel.
 */
import type { EventBody, LogEvent, Recipe } from '../core/events.js';
import type { NeutralMessage, ToolSpec } from '../core/types.js';
import type { SessionWriter, Store } from '../store/types.js';
import { rulesOf, windowInputOf, type StartPoint } from '../window/index.js';
import { mergeCatalog, restoreReply } from './additions.js';
import { Heads } from './heads.js';
import { IncomingMessage } from './incoming.js';
import { LiveSession } from './live-session.js';
import { LiveSet } from './live-set.js';
import { chainHashes } from './fingerprint.js';
import { Locator, type Lookup, type StoredEntry } from './locator.js';
import { planRequest, type ClearedEntry, type Plan } from './plan.js';
import { clearedGroups } from './clearing.js';
import { isRetryOf } from './retry.js';
import { entryOf, SessionFiles, type Damaged } from './session-files.js';
import { Turn } from './turn.js';
import { conversationFromLog, type Conversation } from './conversation.js';
import { randomHex } from './random-hex.js';
import { recogniseSide, type SideJob } from './side.js';

export { LiveSession } from './live-session.js';
export { Turn, type TurnPlan } from './turn.js';
export { answerKey } from './retry.js';

/** A request's conversation, already converted to neutral messages. */
export interface Incoming {
  /** Explicit session id from a header or body field. */
  explicitId?: string;
  /**
   * The session whose logged reply the request continues (Responses' `previous_response_id`): found
   * without an explicit id, as a request naming it would be; `messages` hold the conversation up to
   * that reply already (see `conversationAt`).
   */
  continues?: string;
  /** Leading system prompt (system and developer messages joined). */
  system?: string;
  tools: ToolSpec[];
  /** The conversation after the leading system prompt. */
  messages: NeutralMessage[];
  /** Recipe for a session this request starts. */
  recipe: Recipe;
  /**
   * The client marks the request as a retry (an SDK's retry count, a repeated idempotency key):
   * `answerKey` of its route, model and parameters. A retry of the request the session answered
   * last is answered from the log.
   */
  retry?: string;
}

/** A request with its head in the log's terms (heads.ts). */
type Resolved = Incoming & { catalog: string };

export interface SessionManagerOptions {
  now: () => Date;
  /** Live sessions kept in memory beyond those in use (default 256). */
  maxLive?: number;
  /** Bytes of log the live sessions may hold in memory together (default 512 MiB). */
  maxLiveBytes?: number;
  /** A session idle this long leaves memory (its log stays); undefined: only the limits. */
  idleMs?: number;
  /** A line for the operator (a log that cannot be read, skipped). */
  warn?: (message: string) => void;
}

export class SessionManager {
  readonly #store: Store;
  readonly #files: SessionFiles;
  readonly #now: () => Date;
  readonly #warn: (message: string) => void;
  readonly #locator = new Locator();
  readonly #live: LiveSet;
  readonly #loading = new Map<string, Promise<LiveSession>>();
  /** Sessions that left memory and whose logs are still closing (flushing, releasing the lock). */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #damaged = new Map<string, string>();
  readonly #heads = new Heads();
  readonly #idleMs: number | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(store: Store, opts: SessionManagerOptions) {
    this.#store = store;
    this.#files = new SessionFiles(store);
    this.#now = opts.now;
    this.#warn = opts.warn ?? (() => undefined);
    this.#idleMs = opts.idleMs;
    this.#live = new LiveSet({ maxCount: opts.maxLive ?? 256, maxBytes: opts.maxLiveBytes ?? 512 * 2 ** 20, onLeave: (s) => this.#leave(s) });
  }

  /** Read what locates every stored session (docs/decisions.md, Session index); a damaged log is skipped and named. */
  async init(): Promise<{ sessions: number; readWhole: number; damaged: Damaged[] }> {
    const { entries, damaged, read } = await this.#files.scan();
    for (const entry of entries) this.#locator.store(entry, undefined);
    for (const d of damaged) {
      this.#damaged.set(d.id, d.reason);
      this.#warn(`session ${d.id} skipped: its log cannot be read (${d.reason})`);
    }
    return { sessions: entries.length, readWhole: read, damaged };
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
    const idle = this.#live.idleSince(this.#now().getTime() - this.#idleMs);
    for (const s of idle) this.#leave(s);
    await Promise.all(idle.map((s) => this.#closing.get(s.id)));
    return idle.length;
  }

  get liveCount(): number {
    return this.#live.size;
  }

  /** Sessions skipped because their logs cannot be read, with the reason. */
  get damaged(): ReadonlyMap<string, string> {
    return this.#damaged;
  }

  sessionIds(): string[] {
    return [...this.#locator.ids(this.#live.ids())];
  }

  /** Find or make the session for a request and wait for its turn. Every way out releases what it took. */
  async begin(raw: Incoming): Promise<Turn> {
    // Compared, and appended, as the log holds them (docs/how-it-works.md, Sessions).
    const head = this.#heads.resolve(raw.system, raw.tools);
    const req: Resolved = { ...raw, ...(head.system === undefined ? {} : { system: head.system }), tools: head.tools, catalog: head.catalog };
    const canon = req.messages.map((m) => new IncomingMessage(m));
    const lookup = { explicitId: req.explicitId, continues: req.continues, h0: head.h0, incoming: canon };
    const id = this.#locator.find(lookup, (x) => this.#live.peek(x)?.view) ?? (await this.#fromStore(lookup));
    const session = id === undefined ? undefined : await this.#loadOrForget(id);
    if (session === undefined) return this.#start(req, canon, undefined);
    const side = this.#sideJob(req, canon, session);
    if (side !== undefined) return this.#startSide(req, session, side);

    const explicit = req.explicitId !== undefined;
    session.users++;
    let unlock: (() => void) | undefined;
    let handedOver = false;
    try {
      // A request already running in this session decides forks without waiting for it.
      if (session.inFlightFrom !== undefined) {
        const plan = planRequest(session.view.entries, canon, { explicit, inFlightFrom: session.inFlightFrom, clientDrops: req.recipe.client_drops });
        if (plan.kind === 'fork') return await this.#start(req, canon, { session, plan });
      }
      unlock = await this.#hold(session);
      if (req.retry !== undefined && session.answered !== undefined && isRetryOf(session.view.entries, session.answered, canon, req.retry)) {
        handedOver = true;
        return this.#turn(session, { kind: 'answered', reply: session.answered.reply, req: session.answered.req }, unlock);
      }
      const plan = planRequest(session.view.entries, canon, { explicit, clientDrops: req.recipe.client_drops });
      if (plan.kind === 'fork' || isSideRequest(plan, req, session)) {
        unlock();
        unlock = undefined;
        // A side call (a title or summary prompt under the conversation's id) gets its own
        // session; the conversation's log and prefix stay as they were.
        return await this.#start(req, canon, plan.kind === 'fork' ? { session, plan } : { session, plan: undefined });
      }
      session.inFlightFrom = session.view.entries.length;
      const turn = this.#turn(session, plan, unlock);
      handedOver = true;
      await this.#appendOrRelease(turn, () => {
        let leaving: Map<string, number> | undefined;
        if (plan.kind === 'rewrite') {
          leaving = this.#elidedLeaving(session, plan.from);
          turn.append({ type: 'client.rewrite', from_seq: plan.fromSeq, reason: 'the client history diverged from the log' });
        }
        this.#appendConversation(turn, req, plan.from, { leaving, canon, cleared: plan.kind === 'absorb' ? undefined : plan.cleared });
      });
      return turn;
    } finally {
      if (!handedOver) {
        unlock?.();
        session.users--;
        this.#afterRelease(session);
      }
    }
  }

  /** The conversation up to a logged reply (see `conversation.ts`); undefined when no such reply is logged. */
  async conversationAt(id: string, seq: number): Promise<Conversation | undefined> {
    const live = this.#live.peek(id);
    if (live !== undefined && live.answered?.req === seq) return { system: live.view.system, messages: live.view.entries.map((e) => e.msg) };
    if (live === undefined && this.#locator.stored(id) === undefined) return undefined;
    await live?.log.sync();
    return conversationFromLog(this.#store, id, seq);
  }

  /**
   * A recognised side request (side.ts) on the session's route: the session's last request went to
   * the same upstream model, whose cache holds its prefix. On another route the prefix would be
   * sent whole and read nothing, so the request is planned as before.
   */
  #sideJob(req: Resolved, canon: readonly IncomingMessage[], session: LiveSession): SideJob | undefined {
    if (session.side || session.lastRoute !== req.recipe.route) return undefined;
    const candidate = { system: req.system, noTools: req.tools.length === 0, sameCatalog: req.catalog === session.catalogKey, messages: canon };
    return recogniseSide(candidate, { system: session.view.system, entries: session.view.entries });
  }

  /**
   * A side request's session: the parent's events as they stand (so its window renders the history
   * as the parent's last request sent it, and its last reply), then the side's instruction. It takes
   * neither the parent's turn nor its explicit ids, and is never located: the conversation's next
   * request finds the conversation, whose log this does not touch (docs/how-it-works.md, Side requests).
   */
  async #startSide(req: Resolved, parent: LiveSession, job: SideJob): Promise<Turn> {
    const id = this.#newId();
    const log = await this.#store.open(id, { create: true });
    log.releaseEvents();
    const session = this.#liveSession(id, log);
    session.side = true;
    this.#live.add(session);
    session.users++;
    const turn = this.#turn(session, { kind: 'side', job }, await this.#hold(session));
    await this.#appendOrRelease(turn, async () => {
      await this.#copyParent(turn, parent, undefined, [], job);
      turn.append({ type: 'client.msg', msg: { role: 'user', content: job.instruction } });
    });
    // Its request is compared with the one whose prefix it reads (cache-break attribution).
    session.previousRequest = parent.previousRequest;
    return turn;
  }

  /**
   * A new session. With a parent and a fork plan, it opens with the parent's events before the
   * divergence, unchanged, so its requests share the parent's prefix bytes (and cache); with a
   * parent and no plan (a side call), it starts empty under the parent's lineage.
   */
  async #start(req: Resolved, canon: readonly IncomingMessage[], parent: { session: LiveSession; plan: Extract<Plan, { kind: 'fork' }> | undefined } | undefined): Promise<Turn> {
    const id = this.#newId();
    const log = await this.#store.open(id, { create: true });
    log.releaseEvents();
    const session = this.#liveSession(id, log);
    this.#live.add(session);
    session.users++;
    const turn = this.#turn(session, { kind: 'new' }, await this.#hold(session));
    session.inFlightFrom = 0;
    const ids = req.explicitId === undefined ? [] : [req.explicitId];
    await this.#appendOrRelease(turn, async () => {
      const fork = parent?.plan;
      if (parent === undefined || fork === undefined) {
        const lineage = parent === undefined ? {} : { lineage: parent.session.lineage };
        turn.append({ type: 'session.start', recipe: req.recipe, ids, ...lineage });
        this.#appendConversation(turn, req, 0);
      } else {
        await this.#copyParent(turn, parent.session, fork.atSeq, ids);
        session.inFlightFrom = session.view.entries.length;
        // The fork holds the parent's entries before the divergence, which the request repeats: an
        // append. Were the fold to disagree, the request's own history wins (explicit: no fork).
        const plan = planRequest(session.view.entries, canon, { explicit: true, clientDrops: 'follow' });
        if (plan.kind === 'rewrite') turn.append({ type: 'client.rewrite', from_seq: plan.fromSeq, reason: 'fork' });
        this.#appendConversation(turn, req, plan.from, { cleared: plan.kind === 'append' || plan.kind === 'rewrite' ? plan.cleared : undefined });
      }
    });
    if (req.explicitId !== undefined) this.#locator.name(req.explicitId, id);
    return turn;
  }

  /**
   * The parent's events before `upTo` (all of them when undefined), with a session.start of the
   * new session's own: a fork's, or a side request's (`side`).
   */
  async #copyParent(turn: Turn, parent: LiveSession, upTo: number | undefined, ids: string[], side?: SideJob): Promise<void> {
    // Live sessions keep no events in memory: the parent's log is read, once its appends are written.
    await parent.log.sync();
    const { events } = await this.#store.read(parent.id);
    const atSeq = upTo ?? (events.at(-1)?.seq ?? 0) + 1;
    const sideMark = side === undefined ? {} : { side: { kind: side.kind, client: side.client } };
    for (const e of events) {
      if (e.seq >= atSeq) break;
      const { seq: _seq, ts: _ts, ...body } = e;
      const copy = e.type === 'session.start'
        ? { ...(body as EventBody & { type: 'session.start' }), ids, parent: { session: parent.id, seq: atSeq }, lineage: parent.lineage, ...sideMark }
        : body;
      turn.append(copy as EventBody);
    }
  }

  /**
   * The elided entries a rewrite takes out of the window, by key: one the client sends again
   * comes back elided, so a rewrite does not grow the window past what the trims left.
   */
  #elidedLeaving(session: LiveSession, from: number): Map<string, number> | undefined {
    let out: Map<string, number> | undefined;
    for (const e of session.view.entries.slice(from)) {
      if (session.window.isElided(e.seq)) (out ??= new Map()).set(e.key, e.seq);
    }
    return out;
  }

  /**
   * Write what the request adds: a changed system prompt or catalog, then its new messages, the
   * first of them naming the entries the client cleared (clearing.ts) where the window takes that.
   * `leaving`: the elided entries a rewrite takes out, by key (`canon` holds the request's keys).
   */
  #appendConversation(turn: Turn, req: Resolved, from: number, opts: { leaving?: Map<string, number> | undefined; canon?: readonly IncomingMessage[]; cleared?: readonly ClearedEntry[] | undefined } = {}): void {
    const { leaving: elided, canon } = opts;
    const session = turn.session;
    const recipe = session.window.recipe;
    let cleared = opts.cleared !== undefined && opts.cleared.length > 0 && recipe !== undefined && rulesOf(recipe.version).clientClears ? clearedGroups(opts.cleared) : undefined;
    if (req.system !== undefined && req.system !== session.view.system) {
      turn.append({ type: 'client.msg', msg: { role: 'system', content: req.system }, head: true });
    }
    if (req.catalog !== session.catalogKey) {
      turn.append({ type: 'catalog', tools: mergeCatalog(session.view.tools, req.tools) });
    }
    for (let i = from; i < req.messages.length; i++) {
      const was = elided === undefined || canon === undefined ? undefined : elided.get(canon[i]!.key);
      turn.append({ type: 'client.msg', msg: restoreReply(session.view, req.messages[i]!), ...(was === undefined ? {} : { elided_as: was }), ...(cleared === undefined ? {} : { cleared }) });
      cleared = undefined;
    }
    // Index now, not at release: a concurrent request extending the same prefix must find this
    // session (and fork from it) rather than start a session of its own.
    this.#locator.indexLive(session.id, session.view);
  }

  /** Whatever appending throws, the turn is released first: the session's next request runs. */
  async #appendOrRelease(turn: Turn, append: () => void | Promise<void>): Promise<void> {
    try {
      await append();
    } catch (err) {
      turn.release();
      throw err;
    }
  }


  /**
   * A request no session here matches, on a store shared by replicas: the sessions another replica
   * started or moved on that it names or extends, asked of the store and located as sessions that
   * left memory are. A session live here is caught up when its turn claims it instead.
   */
  async #fromStore(lookup: Lookup): Promise<string | undefined> {
    if (!this.#store.shared) return undefined;
    const tips = chainHashes(lookup.h0, lookup.incoming.map((m) => m.key));
    const entries = (await this.#store.locate({ explicitId: lookup.explicitId, tips: [lookup.h0, ...tips] })) as StoredEntry[];
    let found = false;
    for (const entry of entries) {
      if (this.#live.peek(entry.id) !== undefined || this.#loading.has(entry.id) || this.#damaged.has(entry.id)) continue;
      this.#locator.store(entry, undefined);
      found = true;
    }
    return found ? this.#locator.find(lookup, (x) => this.#live.peek(x)?.view) : undefined;
  }

  /**
   * Wait for the session's turn in this process, then claim its log for the turn: what another
   * replica appended meanwhile is folded in before the request is planned against the view. The
   * unlock gives the claim back (once the turn's appends are durable) and lets the next turn run.
   */
  async #hold(session: LiveSession): Promise<() => void> {
    const unlock = await session.queue.acquire();
    let caught;
    try {
      caught = await session.log.claim();
    } catch (err) {
      unlock();
      throw err;
    }
    caught.events.forEach((e, i) => session.fold(e, caught.offsets[i]!));
    if (caught.events.length > 0) this.#index(session);
    return () => {
      session.log.unclaim().catch((err: unknown) => this.#warn(`session ${session.id}: could not give its log back: ${err instanceof Error ? err.message : String(err)}`));
      unlock();
    };
  }

  /** Index every prefix of a live session's view; a side request's session is never located. */
  #index(session: LiveSession): void {
    if (!session.side) this.#locator.indexLive(session.id, session.view);
  }

  /** A session made live from its log; it publishes what locates it as its appends commit. */
  #liveSession(id: string, log: SessionWriter): LiveSession {
    const session = new LiveSession(id, log, this.#now().getTime());
    log.publishWith(() => entryOf(id, session.view, session.explicitIds, session.lineage, session.lastActive, session.side));
    return session;
  }

  #turn(session: LiveSession, plan: Turn['plan'], unlock: () => void): Turn {
    return new Turn(session, plan, { now: this.#now, unlock, onRelease: (s) => this.#afterRelease(s) });
  }

  #afterRelease(session: LiveSession): void {
    if (session.users > 0) return;
    // A log whose write failed is closed and read back on the next request: the file, repaired
    // on open, says what was really written.
    if (session.log.writeError !== undefined) {
      this.#live.remove(session);
      this.#leave(session);
      return;
    }
    this.#index(session);
    this.#live.released(session);
  }

  /**
   * The live session, loaded if need be; a log that cannot be read is set aside and undefined
   * returned. A failure of the machine rather than of the log (a lock held elsewhere, too many
   * open files, an I/O error) fails this request only: the next one loads the session again.
   */
  async #loadOrForget(id: string): Promise<LiveSession | undefined> {
    try {
      return await this.#load(id);
    } catch (err) {
      if (!DAMAGE.has((err as { code?: string }).code ?? '')) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      this.#damaged.set(id, reason);
      this.#locator.forget(id, undefined);
      this.#warn(`session ${id} set aside: its log cannot be read (${reason}); the request starts a new session`);
      return undefined;
    }
  }

  async #load(id: string): Promise<LiveSession> {
    const live = this.#live.get(id);
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
    await this.#closing.get(id);
    const point = await this.#files.point(id);
    const carried = point === undefined ? undefined : await this.#readCarried(id, point);
    let usable = point !== undefined && carried !== undefined;
    let log = await this.#store.open(id, usable ? { create: false, fromOffset: point!.start.offset } : { create: false });
    if (usable && log.events[0]?.seq !== point!.start.seq) {
      // The saved point does not fit the log (written for another copy of it): read it whole.
      await log.close();
      usable = false;
      log = await this.#store.open(id, { create: false });
    }
    try {
      const session = this.#liveSession(id, log);
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
      this.#live.add(session);
      this.#index(session);
      return session;
    } catch (err) {
      await log.close().catch(() => undefined);
      throw err;
    }
  }

  /** The carried events a saved point names, or undefined when the point does not fit the log. */
  async #readCarried(id: string, point: StartPoint): Promise<LogEvent[] | undefined> {
    try {
      const events = await Promise.all(point.carried.map((c) => this.#store.readEventAt(id, c.offset)));
      return events.every((e, i) => e.seq === point.carried[i]!.seq) ? events : undefined;
    } catch {
      return undefined;
    }
  }

  /** A session leaves memory: its bounded entry stays with the locator, its log closes. */
  #leave(s: LiveSession): void {
    this.#locator.store(entryOf(s.id, s.view, s.explicitIds, s.lineage, s.lastActive, s.side), s.view);
    const closing = this.#saveAndClose(s).catch(() => undefined).finally(() => this.#closing.delete(s.id));
    this.#closing.set(s.id, closing);
  }

  /** Save where the session's next load may start and what locates it, then close its log. */
  async #saveAndClose(s: LiveSession): Promise<void> {
    try {
      await s.log.sync();
      const tracked = s.tracker.point;
      const point = tracked !== undefined && (s.loadedFrom === undefined || tracked.start.seq > s.loadedFrom.start.seq) ? tracked : s.loadedFrom;
      await this.#files.save(s.id, s.log.size, point, entryOf(s.id, s.view, s.explicitIds, s.lineage, s.lastActive, s.side));
    } finally {
      await s.log.close();
    }
  }

  #newId(): string {
    const stamp = this.#now().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    return `${stamp}-${randomHex(4)}`;
  }

  /** Close every live session (flushing its log and saving what locates it). */
  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    const live = this.#live.values();
    for (const s of live) this.#live.remove(s);
    await Promise.all(live.map((s) => this.#saveAndClose(s).catch(() => undefined)));
    await Promise.all(this.#closing.values());
  }
}

/** Errors that say a log cannot be read as it stands (as opposed to a passing fault). */
const DAMAGE = new Set(['log_malformed', 'session_not_found', 'unknown_recipe_version']);

/**
 * A request sharing the session's explicit id but nothing of its conversation, under another
 * system prompt: a side call (title generation, a compaction prompt), not a rewrite.
 */
function isSideRequest(plan: Plan, req: Resolved, session: LiveSession): boolean {
  return req.explicitId !== undefined && plan.kind === 'rewrite' && plan.from === 0 && session.view.system !== undefined && req.system !== session.view.system;
}

export type { SessionWriter };
