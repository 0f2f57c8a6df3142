/**
 * One session held in memory: its log's writer, and the window and client view folded from that
 * log. Every event reaches the three through `fold`, whether read on load or appended by a turn,
 * so what memory holds is what the log says.
 */
import type { LogEvent } from '../core/events.js';
import type { NeutralReply, NeutralRequest, RequestParams } from '../core/types.js';
import type { SessionWriter } from '../store/types.js';
import { StartTracker, WindowState, type StartPoint } from '../window/index.js';
import { catalogKey, NO_CATALOG_KEY } from './fingerprint.js';
import { answerKey } from './retry.js';
import { TurnQueue } from './turn-queue.js';
import { ClientView } from './view.js';

/** The last request the session answered in full: what a client's retry of it is compared with. */
export interface Answered {
  /** View length with the reply: a retry sends exactly the entries before it. */
  viewLength: number;
  /** answerKey of the request's route, model and parameters (retry.ts). */
  params: string;
  reply: NeutralReply;
  /** Seq of the `llm.req` the reply answered (the reply's id on wires whose ids name it). */
  req: number;
  /** The digest of the idempotency key that request came with, if any (its `llm.req`). */
  idempotency?: string;
}

export class LiveSession {
  readonly id: string;
  readonly log: SessionWriter;
  readonly window = new WindowState();
  readonly view = new ClientView();
  /** Follows where a window can be built from; saved beside the log when the session leaves memory. */
  readonly tracker = new StartTracker();
  readonly queue = new TurnQueue();
  readonly explicitIds: string[] = [];
  /**
   * The conversation this session descends from (its own id unless it is a fork or a side call):
   * the cache key upstream, so a fork lands where its parent's prefix is cached.
   */
  lineage: string;
  /**
   * A side request's session (a compaction or title prompt on its parent's prefix): it answers its
   * one request and is never located by a later one (docs/how-it-works.md, Side requests).
   */
  side = false;
  /** The route of the last request logged: a side request is built on the prefix only on the same route. */
  lastRoute: string | undefined;
  /** The parameters of the last request logged (a side request keeps those the upstream's cache is keyed on). */
  lastRequestParams: RequestParams | undefined;
  /** catalogKey of the tools the log holds. */
  catalogKey = NO_CATALOG_KEY;
  /**
   * View length before the running request added its messages; set while a request runs and its
   * client is still there (a request diverging from it then is a concurrent branch: a fork).
   */
  inFlightFrom: number | undefined;
  /** Turns holding or waiting for this session; a session in use never leaves memory. */
  users = 0;
  /**
   * Leaves memory as its first turn is released, unless a second turn came meanwhile: a side
   * request's session (never located), and a new conversation that sent no tools (most are one-shot
   * calls: a title, a summary, a team's API call; a second request reads its few events back).
   * docs/decisions/0021-a-one-shot-call-leaves-memory-at-once.md.
   */
  leavesAfterFirstTurn = false;
  /** Its store no longer holds it (`proxy sessions prune`, decision 0024): out of memory, never indexed again. */
  removed = false;
  lastActive: number;
  /** The last request built in this process, for cache-break attribution. */
  previousRequest: NeutralRequest | undefined;
  /** Prompt tokens the upstream reported for the last reply, for prefix reuse. */
  previousPrompt: number | undefined;
  answered: Answered | undefined;
  /** The point this session was loaded from, if it was loaded from a saved one. */
  loadedFrom: StartPoint | undefined;
  #lastParams: string | undefined;
  #lastIdempotency: string | undefined;

  constructor(id: string, log: SessionWriter, now: number) {
    this.id = id;
    this.log = log;
    this.lineage = id;
    this.lastActive = now;
  }

  /** Bytes of log this session holds in memory, a measure of its footprint for the live set. */
  get bytes(): number {
    return Math.max(1, this.log.size - (this.loadedFrom?.start.offset ?? 0));
  }

  fold(event: LogEvent, offset: number): void {
    this.tracker.apply(event, offset);
    this.window.apply(event);
    this.view.apply(event);
    switch (event.type) {
      case 'session.start':
        this.explicitIds.push(...event.ids);
        this.lineage = event.lineage ?? event.parent?.session ?? this.lineage;
        this.side = event.side !== undefined;
        return;
      case 'catalog':
        this.catalogKey = catalogKey(event.tools);
        return;
      case 'llm.req':
        this.lastRoute = event.route;
        this.lastRequestParams = event.params;
        this.#lastParams = answerKey(event.route, event.model, event.params);
        this.#lastIdempotency = event.idempotency;
        return;
      case 'llm.resp':
        if (event.aborted === true || this.#lastParams === undefined) {
          this.answered = undefined;
          return;
        }
        this.previousPrompt = event.reply.usage?.prompt_tokens;
        this.answered = {
          viewLength: this.view.entries.length, params: this.#lastParams, reply: event.reply, req: event.req,
          ...(this.#lastIdempotency === undefined ? {} : { idempotency: this.#lastIdempotency }),
        };
        return;
      case 'client.msg':
      case 'client.rewrite':
        this.answered = undefined;
        return;
      default:
        return;
    }
  }
}
