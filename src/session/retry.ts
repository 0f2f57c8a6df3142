/**
 * A client's retry of a request the log already answered (an SDK retrying after a dropped
 * connection): the same messages, the same route, model and parameters, and nothing logged since
 * the reply. Pure.
 */
import { canonicalDigest } from '../core/canonical.js';
import type { RequestParams } from '../core/types.js';
import { matchLength, type IncomingMessage } from './incoming.js';
import type { Answered } from './live-session.js';
import type { ViewEntry } from './view.js';

/**
 * The key a retry must repeat: what the log records of a request besides its messages. A digest,
 * not the canonical text: every live session keeps its last one.
 */
export function answerKey(route: string, model: string, params: RequestParams): string {
  return canonicalDigest({ model, route, params });
}

export function isRetryOf(view: readonly ViewEntry[], answered: Answered, incoming: readonly IncomingMessage[], key: string): boolean {
  if (key !== answered.params || view.length !== answered.viewLength) return false;
  // The retry holds every entry before the reply, and not the reply.
  return incoming.length === answered.viewLength - 1 && matchLength(view, incoming) === incoming.length;
}
