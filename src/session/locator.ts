/**
 * Which session a request belongs to (docs/architecture.md 5). Live sessions are found by every
 * prefix of their view (chain hashes, PrefixIndex); a session that left memory leaves a bounded
 * entry: its explicit ids, the chain hash of its whole view (its tip), its latest reply. A request
 * that extends a stored session whole, names it, or still holds its latest reply finds it; a fork
 * from the middle of a stored session starts a session of its own. Pure.
 */
import { chainHashes } from './fingerprint.js';
import { matchLength, type IncomingMessage } from './incoming.js';
import { PrefixIndex } from './prefix-index.js';
import type { NeutralMessage } from '../core/types.js';
import type { ClientView } from './view.js';

/** What locates a session that is not in memory; saved beside its log. */
export interface StoredEntry {
  id: string;
  /** Chain hash of the session's whole client view (h0 when the view is empty). */
  tip: string;
  /** View entries the tip covers. */
  length: number;
  latestReply?: string;
  /**
   * What tells the latest reply from another of the same text (`isTheReply`): the key of the
   * message it answered ('' when it opens the view), and its tool call ids when it made calls.
   * Absent in entries saved before they were kept: the reply is then taken on its text.
   */
  replyTo?: string;
  replyCalls?: string[];
  /**
   * Chain hash of the view without its last entry, when that entry is a reply: what a client's
   * retry of the request it answered sends (docs/decisions.md, Retries answered from the log).
   */
  retryTip?: string;
  ids: string[];
  lineage: string;
  /** Milliseconds since the epoch. */
  lastActive: number;
  /** A side request's session: listed, never located (docs/how-it-works.md, Side requests). */
  side?: true;
}

export interface Lookup {
  explicitId: string | undefined;
  /** A session the request says it continues (a reply id it names): taken when known and no explicit id names one. */
  continues?: string | undefined;
  h0: string;
  incoming: readonly IncomingMessage[];
}

/**
 * A stored session idle longer than `ms` is no longer located: its entry leaves memory, and a
 * request that continues it starts a session of its own (its log stays; listing, the inspector and
 * replay read it). Without one every stored session is kept, and memory grows with them (~0.9 KB
 * each; docs/decisions/0023-stored-sessions-located-for-a-time.md).
 */
export interface Horizon {
  ms: number;
  /** Milliseconds since the epoch. */
  now: () => number;
}

export class Locator {
  readonly #horizon: Horizon | undefined;
  readonly #index = new PrefixIndex();
  /** Explicit id -> sessions it named, most recent last. */
  readonly #explicit = new Map<string, string[]>();
  /** Stored (not live) sessions: id -> entry, and tip -> id. */
  readonly #stored = new Map<string, StoredEntry>();
  readonly #byTip = new Map<string, string>();
  readonly #byRetryTip = new Map<string, string>();
  /** With a horizon: the entries in the order stored, from `#head` on (some replaced since). */
  #order: StoredEntry[] = [];
  #head = 0;

  constructor(horizon?: Horizon) {
    this.#horizon = horizon;
  }

  get storedCount(): number {
    return this.#stored.size;
  }

  /** Every session known, live or stored. */
  *ids(live: Iterable<string>): Iterable<string> {
    yield* this.#stored.keys();
    for (const id of live) if (!this.#stored.has(id)) yield id;
  }

  stored(id: string): StoredEntry | undefined {
    this.#forgetIdle();
    return this.#stored.get(id);
  }

  /**
   * The session for a request, or undefined for a new one. `live` gives a live session's view.
   * The common case (a live session whose whole view the request extends) costs no hashing.
   */
  find(req: Lookup, live: (id: string) => ClientView | undefined): string | undefined {
    this.#forgetIdle();
    if (req.explicitId !== undefined) {
      const named = this.#explicit.get(req.explicitId);
      if (named === undefined || named.length === 0) return undefined;
      return named.length === 1 ? named[0] : this.#longestIn(named, req, live);
    }
    if (req.continues !== undefined && (live(req.continues) !== undefined || this.#stored.has(req.continues))) return req.continues;
    const quick = this.#extendedLive(req, live);
    if (quick !== undefined) return quick;
    const hashes = chainHashes(req.h0, req.incoming.map((m) => m.key));
    const best = this.#index.longestHit(hashes);
    // A stored session whose whole view the request extends, if it is longer than any live match.
    for (let i = hashes.length - 1; i >= (best?.length ?? 0); i--) {
      const id = this.#byTip.get(hashes[i]!);
      if (id !== undefined) return id;
    }
    // A stored session whose view is the whole request and one reply: the request's retry.
    const retried = hashes.length > (best?.length ?? 0) ? this.#byRetryTip.get(hashes.at(-1)!) : undefined;
    if (retried !== undefined) return retried;
    if (best !== undefined) return best.session;
    for (let i = req.incoming.length - 1; i >= 0; i--) {
      const fp = req.incoming[i]!.fp;
      const hit = fp === undefined ? undefined : this.#index.byLatestReply(fp);
      if (hit !== undefined && isTheReply(live(hit)?.latestReplyEntry() ?? this.#stored.get(hit), req.incoming[i]!, req.incoming[i - 1])) return hit;
    }
    return undefined;
  }

  /** A live session's view changed: index every prefix of it. */
  indexLive(id: string, view: ClientView): void {
    this.#dropStored(id);
    this.#index.index(id, view);
  }

  /**
   * A live session left memory: keep only its bounded entry. An entry idle past the horizon is
   * not kept, and the oldest kept ones that have become so go with it.
   */
  store(entry: StoredEntry, view: ClientView | undefined): void {
    if (view !== undefined) this.#index.remove(entry.id, view.hashes());
    this.#dropStored(entry.id);
    const cutoff = this.#forgetIdle();
    if (cutoff !== undefined && entry.lastActive < cutoff) {
      this.#letGo(entry);
      return;
    }
    this.#stored.set(entry.id, entry);
    if (cutoff !== undefined) this.#order.push(entry);
    if (entry.side === true) return;
    this.#byTip.set(entry.tip, entry.id);
    if (entry.retryTip !== undefined) this.#byRetryTip.set(entry.retryTip, entry.id);
    if (entry.latestReply !== undefined) this.#index.rememberReply(entry.latestReply, entry.id);
    for (const x of entry.ids) this.name(x, entry.id);
  }

  /** A session whose log cannot be read: requests no longer find it. */
  forget(id: string, view: ClientView | undefined): void {
    this.#index.forget(id, view?.hashes() ?? []);
    this.#dropStored(id);
    this.#unname(id, [...this.#explicit.keys()]);
  }

  name(explicitId: string, id: string): void {
    const list = this.#explicit.get(explicitId) ?? [];
    if (!list.includes(id)) list.push(id);
    this.#explicit.set(explicitId, list);
  }

  /**
   * Entries are swept in the order they were stored, which is the order their sessions left memory
   * (startup stores them oldest first): the idle ones are at the front, so this looks only as far
   * as the first that is not. A session read back and stored again is met at its new place. A list
   * of its own, not the map's order: a map iterated from the front after deletions there walks over
   * every deleted slot until it is rebuilt (22 µs a store at a month of entries, bench/stored-sessions.ts).
   */
  #forgetIdle(): number | undefined {
    if (this.#horizon === undefined) return undefined;
    const cutoff = this.#horizon.now() - this.#horizon.ms;
    const order = this.#order;
    for (; this.#head < order.length; this.#head++) {
      const entry = order[this.#head]!;
      // One stored again since (read back and left again), or made live: not this entry's to drop.
      if (this.#stored.get(entry.id) !== entry) continue;
      if (entry.lastActive >= cutoff) break;
      this.#letGo(entry);
    }
    // Let go of what was passed, and of entries replaced since, once they are most of the list.
    const rest = order.length - this.#head;
    if (this.#head > 1024 && this.#head > rest) {
      this.#order = order.slice(this.#head);
      this.#head = 0;
    } else if (rest > 2 * this.#stored.size + 1024) {
      this.#order = order.slice(this.#head).filter((e) => this.#stored.get(e.id) === e);
      this.#head = 0;
    }
    return cutoff;
  }

  /** An entry past the horizon: nothing finds its session any more, by tip, reply or name. */
  #letGo(entry: StoredEntry): void {
    this.#dropStored(entry.id);
    this.#unname(entry.id, entry.ids);
    this.#index.forget(entry.id, []);
  }

  /** These explicit ids no longer find the session. */
  #unname(id: string, names: readonly string[]): void {
    for (const name of names) {
      const list = this.#explicit.get(name);
      if (list === undefined) continue;
      const rest = list.filter((x) => x !== id);
      if (rest.length === 0) this.#explicit.delete(name);
      else if (rest.length !== list.length) this.#explicit.set(name, rest);
    }
  }

  #dropStored(id: string): void {
    const entry = this.#stored.get(id);
    if (entry === undefined) return;
    this.#stored.delete(id);
    if (this.#byTip.get(entry.tip) === id) this.#byTip.delete(entry.tip);
    if (entry.retryTip !== undefined && this.#byRetryTip.get(entry.retryTip) === id) this.#byRetryTip.delete(entry.retryTip);
  }

  /**
   * A live session that opened like the request (its first chain hash) and whose whole view the
   * request extends. Undefined when the live sessions alone cannot decide.
   */
  #extendedLive(req: Lookup, live: (id: string) => ClientView | undefined): string | undefined {
    if (req.incoming.length === 0) return undefined;
    const openers = this.#index.openedWith(chainHashes(req.h0, [req.incoming[0]!.openerKey])[0]!);
    if (openers === undefined) return undefined;
    let best: { id: string; length: number } | undefined;
    for (const id of openers) {
      const view = live(id);
      if (view === undefined) return undefined;
      if (view.h0 !== req.h0) continue;
      const n = view.entries.length;
      if (n > 0 && matchLength(view.entries, req.incoming) === n && (best === undefined || n >= best.length)) best = { id, length: n };
    }
    return best?.id;
  }

  /** Among the sessions an explicit id named, the one sharing the longest prefix (latest on ties). */
  #longestIn(named: readonly string[], req: Lookup, live: (id: string) => ClientView | undefined): string | undefined {
    let hashes: string[] | undefined;
    let best: string | undefined;
    let bestLen = -1;
    for (const id of named) {
      const view = live(id);
      let len: number;
      if (view !== undefined) {
        len = matchLength(view.entries, req.incoming);
      } else {
        const entry = this.#stored.get(id);
        hashes ??= chainHashes(req.h0, req.incoming.map((m) => m.key));
        len = entry !== undefined && entry.length > 0 && hashes[entry.length - 1] === entry.tip ? entry.length : 0;
      }
      if (len >= bestLen) {
        best = id;
        bestLen = len;
      }
    }
    return best;
  }
}

/** What a stored entry keeps to tell its latest reply (`ClientView.latestReplyEntry`) from another of the same text (`isTheReply`). */
export function replyMarks(latest: { msg: NeutralMessage; prompt: string | undefined }): Pick<StoredEntry, 'replyTo' | 'replyCalls'> {
  const calls = latest.msg.role === 'assistant' ? (latest.msg.tool_calls ?? []).map((c) => c.id) : [];
  return { replyTo: latest.prompt ?? '', ...(calls.length === 0 ? {} : { replyCalls: calls }) };
}

/**
 * Whether a session's latest reply is the one the request holds, not only the same text: two
 * sessions can end on the same short reply ("Done."). A reply with tool calls is told by its call
 * ids; a reply of text alone by the message it answered, which a compacted history keeps only when
 * it kept that turn (a text reply after a summary starts a session of its own). `latest` is a live
 * session's latest reply, or a stored session's entry; an entry saved without these marks is taken
 * on its reply alone.
 */
function isTheReply(latest: { msg: NeutralMessage; prompt: string | undefined } | StoredEntry | undefined, reply: IncomingMessage, before: IncomingMessage | undefined): boolean {
  if (latest === undefined) return true;
  const ids = callIds(reply.logged);
  if ('msg' in latest) {
    if (ids !== '') return ids === callIds(latest.msg);
    return latest.prompt === undefined || latest.prompt === before?.key;
  }
  if (latest.replyTo === undefined) return true;
  if (ids !== '') return ids === (latest.replyCalls ?? []).join('\u0000');
  return latest.replyTo === '' || latest.replyTo === before?.key;
}

function callIds(msg: NeutralMessage): string {
  return msg.role === 'assistant' ? (msg.tool_calls ?? []).map((c) => c.id).join('\u0000') : '';
}
