/**
 * Replay entry points: fold a log into a window, and rebuild the request a logged `llm.req` sent
 * from the events before it and the route, model, origin and params it recorded.
 */
import { ProxyError } from '../core/errors.js';
import type { EventOf, LogEvent } from '../core/events.js';
import { WindowState, type WindowInput, type WindowResult } from './state.js';

export function foldEvents(events: Iterable<LogEvent>): WindowState {
  const state = new WindowState();
  for (const event of events) state.apply(event);
  return state;
}

/** Rebuild the request of the `llm.req` with seq `reqSeq` from the events logged before it. */
export function buildAt(events: readonly LogEvent[], reqSeq: number): WindowResult {
  const req = events.find((e) => e.seq === reqSeq);
  if (req?.type !== 'llm.req') throw new ProxyError('bad_argument', { detail: `seq ${reqSeq} is not a logged request (llm.req)` });
  const state = foldEvents(events.filter((e) => e.seq < reqSeq));
  return state.build(windowInputOf(req));
}

/** What a logged request was built with, as the window takes it. */
export function windowInputOf(req: EventOf<'llm.req'>): WindowInput {
  const input: WindowInput = { route: req.route, model: req.model, origin: req.origin, params: req.params };
  if (req.high_water !== undefined) input.highWater = req.high_water;
  return input;
}
