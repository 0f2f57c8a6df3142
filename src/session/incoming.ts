/**
 * The messages of an incoming request, with their canonical forms computed only when asked. A
 * request that extends its session is recognised by comparing its messages with the session's
 * view as they are (strings equal: the same message under any canonical rule); canonical text,
 * fingerprints and chain hashes are computed only where that cannot decide. Pure.
 */
import type { NeutralMessage } from '../core/types.js';
import { canonicalMessage, replyFingerprint } from './fingerprint.js';

export class IncomingMessage {
  readonly msg: NeutralMessage;
  #canonical: string | undefined;
  #fp: string | null | undefined;

  constructor(msg: NeutralMessage) {
    this.msg = msg;
  }

  get canonical(): string {
    this.#canonical ??= canonicalMessage(this.msg);
    return this.#canonical;
  }

  get fp(): string | undefined {
    if (this.#fp === undefined) this.#fp = replyFingerprint(this.msg) ?? null;
    return this.#fp ?? undefined;
  }
}

/** A view entry and an incoming message are the same message to the client. */
export function sameMessage(entry: { msg: NeutralMessage; canonical: string }, incoming: { msg?: NeutralMessage; canonical: string }): boolean {
  if (incoming.msg !== undefined && identical(entry.msg, incoming.msg)) return true;
  return entry.canonical === incoming.canonical;
}

/** Equal as they stand (true means canonically equal too; false means "compare canonically"). */
function identical(a: NeutralMessage, b: NeutralMessage): boolean {
  switch (a.role) {
    case 'system':
      return b.role === 'system' && a.content === b.content;
    case 'user':
      return b.role === 'user' && typeof a.content === 'string' && a.content === b.content;
    case 'tool':
      return b.role === 'tool' && a.tool_call_id === b.tool_call_id && a.content === b.content;
    case 'assistant': {
      if (b.role !== 'assistant' || (a.content ?? '') !== (b.content ?? '')) return false;
      const x = a.tool_calls ?? [];
      const y = b.tool_calls ?? [];
      return x.length === y.length && x.every((c, i) => c.id === y[i]!.id && c.name === y[i]!.name && c.arguments === y[i]!.arguments);
    }
  }
}

/** How many leading messages of the request are the view's. */
export function matchLength(view: readonly { msg: NeutralMessage; canonical: string }[], incoming: readonly IncomingMessage[]): number {
  const common = Math.min(view.length, incoming.length);
  let k = 0;
  while (k < common && sameMessage(view[k]!, incoming[k]!)) k++;
  return k;
}
