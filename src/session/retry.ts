/**
 * A client's retry of a request the log already answered (an SDK retrying after a dropped
 * connection): marked as one, the same messages, the same route, model and parameters, and nothing
 * logged since the reply. Pure.
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

/** What a request says of being a retry (src/proxy/retries.ts), with its answerKey. */
export interface RetryMark {
  /** The client counts it as a retry (an SDK's retry count above 0). */
  marked: boolean;
  /** Digest of its idempotency key: a retry of the answered request if that one carried the same. */
  idempotency?: string;
  /** answerKey of its route, model and parameters. */
  key: string;
}

export function isRetryOf(view: readonly ViewEntry[], answered: Answered, incoming: readonly IncomingMessage[], retry: RetryMark): boolean {
  const repeated = retry.idempotency !== undefined && retry.idempotency === answered.idempotency;
  if (!(retry.marked || repeated)) return false;
  if (retry.key !== answered.params || view.length !== answered.viewLength) return false;
  // The retry holds every entry before the reply, and not the reply.
  return incoming.length === answered.viewLength - 1 && matchLength(view, incoming) === incoming.length;
}
