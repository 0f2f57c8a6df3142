/**
 * What an incoming request does to a session: append its new messages, rewrite the history from
 * the point where it diverged, or fork a new session from there. Pure: the caller says whether the
 * session was named explicitly and what is in flight.
 */
import { replyFingerprint } from './fingerprint.js';
import { matchView } from './incoming.js';
import type { NeutralMessage } from '../core/types.js';
import type { ViewEntry } from './view.js';

export type Plan =
  /**
   * The request extends the view: `incoming[from..]` are new. `cleared`: the entries it sent as
   * tool results the client cleared (clearing.ts), by seq, with the marker in their place.
   */
  | { kind: 'append'; from: number; cleared?: readonly ClearedEntry[] }
  /** The client dropped its oldest messages (client_drops = absorb): append `incoming[from..]`. */
  | { kind: 'absorb'; from: number; dropped: number }
  /** The history diverged at view entry `seq`: entries from it leave; `incoming[from..]` are new. */
  | { kind: 'rewrite'; fromSeq: number; from: number; cleared?: readonly ClearedEntry[] }
  /** Another conversation shares the prefix: a new session from the parent's events before `atSeq`. */
  | { kind: 'fork'; atSeq: number; from: number };

export interface PlanContext {
  /** The session was named by an explicit id (header or body field). */
  explicit: boolean;
  /** View index from which a request still in flight added its messages. */
  inFlightFrom?: number;
  clientDrops: 'follow' | 'absorb';
}

/** An incoming message: its key (and reply fingerprint), and the message itself when known. */
export interface PlanMessage {
  readonly key: string;
  readonly fp?: string | undefined;
  readonly msg?: NeutralMessage;
}

/** A view entry the request sent cleared by the client, and the marker that stands in its place. */
export interface ClearedEntry {
  seq: number;
  text: string;
}

export function planRequest(view: readonly ViewEntry[], incoming: readonly PlanMessage[], ctx: PlanContext): Plan {
  const match = matchView(view, incoming);
  const k = match.length;
  // Present only when the client cleared something.
  const cleared = match.cleared.length === 0 ? {} : { cleared: match.cleared.map((c) => ({ seq: view[c.index]!.seq, text: c.text })) };
  if (k === view.length) {
    // Exactly the conversation a request still running sent: a twin running beside it (parallel
    // sub-agents that open alike), not a turn to queue behind it. It forks after the last entry.
    if (ctx.inFlightFrom !== undefined && incoming.length === k && k > 0) return { kind: 'fork', atSeq: view[k - 1]!.seq + 1, from: k };
    return { kind: 'append', from: k, ...cleared };
  }

  const divergedAt = view[k]!.seq;
  if (ctx.inFlightFrom !== undefined && k >= ctx.inFlightFrom) return { kind: 'fork', atSeq: divergedAt, from: k };

  if (ctx.clientDrops === 'absorb') {
    const dropped = droppedRun(view, incoming, k);
    if (dropped !== undefined) return { kind: 'absorb', from: k + (view.length - (k + dropped)), dropped };
  }

  if (!ctx.explicit && !holdsLatestReply(view, incoming)) return { kind: 'fork', atSeq: divergedAt, from: k };
  return { kind: 'rewrite', fromSeq: divergedAt, from: k, ...cleared };
}

/**
 * The number of view entries the client left out at `k`, when the rest of the view follows in
 * the request unchanged (a client that drops its oldest messages each request).
 */
function droppedRun(view: readonly ViewEntry[], incoming: readonly PlanMessage[], k: number): number | undefined {
  const first = incoming[k]?.key;
  if (first === undefined) return undefined;
  for (let j = k + 1; j < view.length; j++) {
    if (view[j]!.key !== first) continue;
    let ok = true;
    for (let i = j; i < view.length && ok; i++) ok = incoming[k + (i - j)]?.key === view[i]!.key;
    if (ok) return j - k;
  }
  return undefined;
}

/** The request still carries the latest reply the session gave: the same conversation, edited. */
export function holdsLatestReply(view: readonly ViewEntry[], incoming: readonly PlanMessage[]): boolean {
  let latest: string | undefined;
  for (let i = view.length - 1; i >= 0 && latest === undefined; i--) latest = replyFingerprint(view[i]!.msg);
  if (latest === undefined) return false;
  return incoming.some((m) => m.fp === latest);
}
