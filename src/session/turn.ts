/**
 * One request's hold on its session: it appends events (each folded into the session as it is
 * written), records what was sent and what came back, and releases the session however it ends.
 */
import type { EventBody, LogEvent } from '../core/events.js';
import type { NeutralReply, NeutralRequest } from '../core/types.js';
import type { LiveSession } from './live-session.js';
import type { Plan } from './plan.js';
import type { SideJob } from './side.js';

export type TurnPlan =
  | Plan
  | { kind: 'new' }
  /** A client's retry of the request the session answered last: answered from the log. */
  | { kind: 'answered'; reply: NeutralReply; req: number }
  /** A side request on its parent's prefix, in a session of its own (side.ts). */
  | { kind: 'side'; job: SideJob };

export class Turn {
  readonly session: LiveSession;
  readonly plan: TurnPlan;
  /** The events this turn appended so far. */
  readonly appended: LogEvent[] = [];
  readonly #now: () => Date;
  readonly #unlock: () => void;
  readonly #onRelease: (session: LiveSession) => void;
  #released = false;

  constructor(session: LiveSession, plan: TurnPlan, deps: { now: () => Date; unlock: () => void; onRelease: (session: LiveSession) => void }) {
    this.session = session;
    this.plan = plan;
    this.#now = deps.now;
    this.#unlock = deps.unlock;
    this.#onRelease = deps.onRelease;
  }

  /** Append an event to the session's log and fold it into its window and view. */
  append<B extends EventBody>(body: B): B & { seq: number; ts: string } {
    const log = this.session.log;
    const now = this.#now();
    const event = log.append(body, now.toISOString());
    this.appended.push(event);
    this.session.fold(event, log.offsetOf(event.seq) ?? 0);
    this.session.lastActive = now.getTime();
    return event as unknown as B & { seq: number; ts: string };
  }

  /** The request as built, for the next request's cache-break attribution. */
  sent(request: NeutralRequest): void {
    this.session.previousRequest = request;
  }

  /** The client went away: a request diverging from this one is its retry, not a concurrent branch. */
  abandon(): void {
    if (!this.#released) this.session.inFlightFrom = undefined;
  }

  get released(): boolean {
    return this.#released;
  }

  /** Let the session's next request run. Idempotent: every way out of a request calls it. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.session.users--;
    this.session.inFlightFrom = undefined;
    this.#unlock();
    this.#onRelease(this.session);
  }
}
