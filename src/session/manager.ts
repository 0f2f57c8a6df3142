/**
 * Sessions: which log an incoming request belongs to, and what it adds (docs/architecture.md 5).
 * A thin coordinator over its parts: the Locator finds a session, the LiveSet holds the sessions in
 * memory, the SessionLoader brings them in and out of it, SessionFiles keeps what locates a session
 * beside its log, a Turn holds one request's place in its session and appends.ts writes what it
 * adds. Requests of one session run one at a time; different sessions in parallel.
 */
import type { Recipe } from '../core/events.js';
import type { AssistantMessage, NeutralMessage, ToolSpec } from '../core/types.js';
import type { LedgerAdmission, LedgerAnswer, SessionWriter, Store } from '../store/types.js';
import { appendConversation, copyParent, elidedLeaving, type AppendOptions } from './appends.js';
import { Heads } from './heads.js';
import { IncomingMessage } from './incoming.js';
import type { LiveSession } from './live-session.js';
import { LiveSet } from './live-set.js';
import { chainHashes } from './fingerprint.js';
import { Locator, type Lookup, type StoredEntry } from './locator.js';
import { planRequest, type Plan } from './plan.js';
import { isRetryOf, type RetryMark } from './retry.js';
import { SessionFiles, type Damaged } from './session-files.js';
import { SessionLoader } from './session-loader.js';
import { Turn } from './turn.js';
import { conversationFromLog, repliesFromLog, type Conversation } from './conversation.js';
import { randomHex } from './random-hex.js';
import { recogniseSide, type SideJob } from './side.js';

export { LiveSession } from './live-session.js';
export { Turn, type TurnPlan } from './turn.js';
export { answerKey, type RetryMark } from './retry.js';

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
   * The client's retry signals (an SDK's retry count, an idempotency key's digest) and `answerKey`
   * of the request's route, model and parameters. A retry of the request the session answered last
   * is answered from the log (retry.ts).
   */
  retry?: RetryMark;
  /** A client key's admission on a ledger the replicas share, asked with the session's claim. */
  admission?: TurnAdmission;
}

/**
 * A client key's budget and rate asked in the statement that claims its session (one round trip
 * less, decision 0008), or alone before a new session is made, so a refused request makes none.
 */
export interface TurnAdmission {
  query: LedgerAdmission;
  /** Throws the refusal (a 429) the ledger's answer calls for. */
  decide(answer: LedgerAnswer): void;
  /** Asks it in a statement of its own. */
  alone(): Promise<void>;
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
  /** Whether a new conversation without tools leaves memory after its first turn (live-session.ts); default: on a store of one process. */
  oneShotsLeave?: boolean;
  /** A session idle this long is no longer located (locator.ts); undefined: every session is. */
  forgetAfterMs?: number;
}

export class SessionManager {
  readonly #store: Store;
  readonly #files: SessionFiles;
  readonly #now: () => Date;
  readonly #warn: (message: string) => void;
  readonly #locator: Locator;
  readonly #live: LiveSet;
  readonly #loader: SessionLoader;
  readonly #heads = new Heads();
  readonly #idleMs: number | undefined;
  readonly #oneShotsLeave: boolean;
  readonly #forgetAfterMs: number | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(store: Store, opts: SessionManagerOptions) {
    this.#store = store;
    this.#files = new SessionFiles(store);
    this.#now = opts.now;
    this.#warn = opts.warn ?? (() => undefined);
    // A live session leaves memory by its locate horizon at the latest: held past it, it would
    // still be continued where a stored one is not, and the inspector already says it is not
    // (docs/decisions/0023-stored-sessions-located-for-a-time.md).
    this.#idleMs = opts.forgetAfterMs === undefined ? opts.idleMs : Math.min(opts.idleMs ?? Infinity, opts.forgetAfterMs);
    // Not on a store shared by replicas: there a session read back costs database round trips, and
    // another replica may take the conversation's next request anyway (docs/scaling.md).
    this.#oneShotsLeave = opts.oneShotsLeave ?? !store.shared;
    this.#forgetAfterMs = opts.forgetAfterMs;
    this.#locator = new Locator(opts.forgetAfterMs === undefined ? undefined : { ms: opts.forgetAfterMs, now: () => this.#now().getTime() });
    this.#live = new LiveSet({ maxCount: opts.maxLive ?? 256, maxBytes: opts.maxLiveBytes ?? 512 * 2 ** 20, onLeave: (s) => this.#loader.leave(s) });
    this.#loader = new SessionLoader({
      store, files: this.#files, live: this.#live, locator: this.#locator, now: this.#now, warn: this.#warn, index: (s) => this.#index(s),
    });
  }

  /** Read what locates every stored session (docs/decisions.md, Session index); a damaged log is skipped and named. */
  async init(): Promise<{ sessions: number; readWhole: number; damaged: Damaged[] }> {
    const { entries, damaged, read } = await this.#files.scan();
    // Oldest first, as sessions leave memory: those idle past the horizon are then not kept (locator.ts).
    for (const entry of entries.sort((a, b) => a.lastActive - b.lastActive)) this.#locator.store(entry, undefined);
    for (const d of damaged) {
      this.#loader.damaged.set(d.id, d.reason);
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
    for (const s of idle) this.#loader.leave(s);
    await Promise.all(idle.map((s) => this.#loader.closing(s.id)));
    return idle.length;
  }

  get liveCount(): number {
    return this.#live.size;
  }

  /** Sessions skipped because their logs cannot be read, with the reason. */
  get damaged(): ReadonlyMap<string, string> {
    return this.#loader.damaged;
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
    const id = this.#locator.find(lookup, (x) => this.#live.peek(x)?.view) ?? (await this.#fromStore(lookup, req.retry !== undefined));
    const session = id === undefined ? undefined : await this.#loader.loadOrForget(id);
    // It left memory while this request waited for it (its first answer sent it out, or another
    // session pushed it out): located again, it is read back.
    if (session !== undefined && this.#live.peek(session.id) !== session) return this.begin(raw);
    if (session === undefined) return this.#start(req, canon, undefined, raw.admission);
    const side = this.#sideJob(req, canon, session);
    if (side !== undefined) return this.#startSide(req, session, side, raw.admission);

    const explicit = req.explicitId !== undefined;
    session.users++;
    // A second turn: a conversation, not a one-shot call.
    session.leavesAfterFirstTurn = false;
    let unlock: (() => void) | undefined;
    let handedOver = false;
    try {
      // A request already running in this session decides forks without waiting for it.
      if (session.inFlightFrom !== undefined) {
        const plan = planRequest(session.view.entries, canon, { explicit, inFlightFrom: session.inFlightFrom, clientDrops: req.recipe.client_drops });
        if (plan.kind === 'fork') return await this.#start(req, canon, { session, plan }, raw.admission);
      }
      unlock = await this.#hold(session, raw.admission).catch((err: unknown) => {
        if ((err as { code?: string }).code !== 'session_not_found') throw err;
        // Removed from the store since it was read here (`proxy sessions prune`, decision 0024):
        // its live copy goes, and the request is located again, as a new conversation.
        this.#loader.removed(session);
        return undefined;
      });
      if (unlock === undefined) return await this.begin(raw);
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
          leaving = elidedLeaving(session, plan.from);
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
    // On a shared store another replica may have written it: the store says (its read fails when not),
    // and its log's last event says whether it is past the horizon, as the locator does here.
    if (live === undefined && !this.#store.shared && this.#locator.stored(id) === undefined) return undefined;
    await live?.log.sync();
    const activeSince = live === undefined && this.#forgetAfterMs !== undefined ? this.#now().getTime() - this.#forgetAfterMs : undefined;
    return conversationFromLog(this.#store, id, seq, activeSince);
  }

  /**
   * The replies to requests `seqs` of session `id`, by that seq (Responses item references,
   * docs/inbound.md): from the live view where it still holds them, else from one read of the log
   * (which holds the partial replies of streams the client stopped, never in the view), under the
   * same rules as `conversationAt`. A reply not found is absent.
   */
  async repliesAt(id: string, seqs: ReadonlySet<number>): Promise<Map<number, AssistantMessage>> {
    const found = new Map<number, AssistantMessage>();
    const live = this.#live.peek(id);
    for (const e of live?.view.entries ?? []) if (e.req !== undefined && seqs.has(e.req)) found.set(e.req, e.msg as AssistantMessage);
    if (found.size === seqs.size) return found;
    if (live === undefined && !this.#store.shared && this.#locator.stored(id) === undefined) return found;
    await live?.log.sync();
    const activeSince = live === undefined && this.#forgetAfterMs !== undefined ? this.#now().getTime() - this.#forgetAfterMs : undefined;
    return repliesFromLog(this.#store, id, seqs, activeSince);
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
  async #startSide(req: Resolved, parent: LiveSession, job: SideJob, admission: TurnAdmission | undefined): Promise<Turn> {
    await admission?.alone();
    const id = this.#newId();
    const log = await this.#store.open(id, { create: true });
    log.releaseEvents();
    const session = this.#loader.make(id, log);
    session.side = true;
    // Never located: nothing could bring it a second request.
    session.leavesAfterFirstTurn = true;
    this.#live.add(session);
    session.users++;
    const turn = this.#turn(session, { kind: 'side', job }, await this.#hold(session));
    await this.#appendOrRelease(turn, async () => {
      await copyParent(this.#store, turn, parent, undefined, [], job);
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
  async #start(
    req: Resolved, canon: readonly IncomingMessage[], parent: { session: LiveSession; plan: Extract<Plan, { kind: 'fork' }> | undefined } | undefined,
    admission?: TurnAdmission,
  ): Promise<Turn> {
    await admission?.alone();
    const id = this.#newId();
    const log = await this.#store.open(id, { create: true });
    log.releaseEvents();
    const session = this.#loader.make(id, log);
    session.leavesAfterFirstTurn = this.#oneShotsLeave && parent === undefined && req.explicitId === undefined && req.tools.length === 0;
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
        await copyParent(this.#store, turn, parent.session, fork.atSeq, ids);
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
   * Write what the request adds (appends.ts), then index the session now, not at release: a
   * concurrent request extending the same prefix must find this session (and fork from it) rather
   * than start a session of its own.
   */
  #appendConversation(turn: Turn, req: Resolved, from: number, opts: AppendOptions = {}): void {
    appendConversation(turn, req, from, opts);
    this.#locator.indexLive(turn.session.id, turn.session.view);
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
   * left memory are. A session live here is caught up when its turn claims it instead. A request the
   * client may be retrying also asks for the session it would repeat the last request of.
   */
  async #fromStore(lookup: Lookup, retry: boolean): Promise<string | undefined> {
    if (!this.#store.shared) return undefined;
    const tips = chainHashes(lookup.h0, lookup.incoming.map((m) => m.key));
    const retryTip = retry ? tips.at(-1) : undefined;
    const entries = (await this.#store.locate({ explicitId: lookup.explicitId, tips: [lookup.h0, ...tips], ...(retryTip === undefined ? {} : { retryTip }) })) as StoredEntry[];
    let found = false;
    for (const entry of entries) {
      if (this.#live.peek(entry.id) !== undefined || this.#loader.loading(entry.id) || this.#loader.damaged.has(entry.id)) continue;
      this.#locator.store(entry, undefined);
      found = true;
    }
    return found ? this.#locator.find(lookup, (x) => this.#live.peek(x)?.view) : undefined;
  }

  /**
   * Wait for the session's turn in this process, then claim its log for the turn (with the key's
   * admission, refused before any lock): what another replica appended meanwhile is folded in
   * before the request is planned against the view. The unlock gives the claim back (once the
   * turn's appends are durable) and lets the next turn run.
   */
  async #hold(session: LiveSession, admission?: TurnAdmission): Promise<() => void> {
    const unlock = await session.queue.acquire();
    let caught;
    try {
      caught = await session.log.claim(admission?.query);
      if (caught.admitted !== undefined) admission!.decide(caught.admitted);
      else await admission?.alone();
    } catch (err) {
      // A refused claim took no lock; one granted and then failed is given back.
      session.log.unclaim().catch(() => undefined);
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

  #turn(session: LiveSession, plan: Turn['plan'], unlock: () => void): Turn {
    return new Turn(session, plan, { now: this.#now, unlock, onRelease: (s) => this.#afterRelease(s) });
  }

  #afterRelease(session: LiveSession): void {
    if (session.users > 0 || session.removed) return;
    // A log whose write failed is closed and read back on the next request: the file, repaired
    // on open, says what was really written.
    if (session.log.writeError !== undefined || session.leavesAfterFirstTurn) {
      // A one-shot call leaves at once, before its reply is indexed: kept, it would cost more by
      // its place in memory and its later push out than a next request costs to read it back
      // (docs/decisions/0021-a-one-shot-call-leaves-memory-at-once.md).
      this.#live.remove(session);
      this.#loader.leave(session);
      return;
    }
    this.#index(session);
    this.#live.released(session);
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
    await Promise.all(live.map((s) => this.#loader.saveAndClose(s).catch(() => undefined)));
    await this.#loader.closed();
  }
}

/**
 * A request sharing the session's explicit id but nothing of its conversation, under another
 * system prompt: a side call (title generation, a compaction prompt), not a rewrite.
 */
function isSideRequest(plan: Plan, req: Resolved, session: LiveSession): boolean {
  return req.explicitId !== undefined && plan.kind === 'rewrite' && plan.from === 0 && session.view.system !== undefined && req.system !== session.view.system;
}

export type { SessionWriter };
