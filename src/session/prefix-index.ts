/**
 * Where a conversation the client sends again is found: each session's client-view prefixes by
 * chain hash (docs/architecture.md 5.2), and each session's latest reply by fingerprint (a client that compacted
 * or dropped its oldest messages still holds it). Rebuilt from the logs on start. Pure.
 */
import type { ClientView } from './view.js';

/** Sessions remembered per prefix hash: enough for the clients that share an opening. */
const MAX_PER_PREFIX = 8;

interface Hit {
  session: string;
  /** The prefix is the session's first `pos` view entries. */
  pos: number;
}

export class PrefixIndex {
  /** Chain hash of a client-view prefix -> the sessions holding it, most recently indexed last. */
  readonly #prefix = new Map<string, Hit[]>();
  /** Session -> its client view's length and last chain hash when last indexed. */
  readonly #indexed = new Map<string, { length: number; tip: string | undefined }>();
  /** Fingerprint of a session's latest reply -> session. */
  readonly #latestReply = new Map<string, string>();
  /** Session -> the fingerprint it holds in #latestReply: one per session, the older one dropped. */
  readonly #replyOf = new Map<string, string>();

  /**
   * Record a session's view prefixes; the session becomes the latest for each one it did not hold
   * at the same place when last indexed. A view that only grew since then (its old tip is still at
   * its old length: chain hashes name the whole prefix) costs its new entries, not its length.
   */
  index(id: string, view: ClientView): void {
    const hashes = view.hashes();
    const before = this.#indexed.get(id);
    const grew = before !== undefined && before.length <= hashes.length && (before.length === 0 || hashes[before.length - 1] === before.tip);
    for (let i = grew ? before.length : 0; i < hashes.length; i++) {
      const list = this.#prefix.get(hashes[i]!);
      if (list === undefined) {
        this.#prefix.set(hashes[i]!, [{ session: id, pos: i + 1 }]);
        continue;
      }
      const at = list.findIndex((h) => h.session === id);
      if (at === list.length - 1 && list[at]!.pos === i + 1) continue;
      if (at >= 0) list.splice(at, 1);
      list.push({ session: id, pos: i + 1 });
      if (list.length > MAX_PER_PREFIX) list.shift();
    }
    this.#indexed.set(id, { length: hashes.length, tip: hashes.at(-1) });
    const latest = view.latestReply();
    if (latest !== undefined) this.rememberReply(latest, id);
  }

  /**
   * The session holding the longest prefix of a request (its chain hashes h1..hn). When several
   * hold it (two clients began alike), one the request extends whole, so that it appends there
   * rather than forking yet another session; the most recently indexed on ties.
   */
  longest(hashes: readonly string[]): string | undefined {
    return this.longestHit(hashes)?.session;
  }

  /** As `longest`, with the length of the prefix shared. */
  longestHit(hashes: readonly string[]): { session: string; length: number } | undefined {
    for (let i = hashes.length - 1; i >= 0; i--) {
      const hits = this.#prefix.get(hashes[i]!)?.filter((h) => h.pos === i + 1);
      if (hits === undefined || hits.length === 0) continue;
      const whole = hits.filter((h) => this.#indexed.get(h.session)?.length === i + 1);
      return { session: (whole.length > 0 ? whole : hits).at(-1)!.session, length: i + 1 };
    }
    return undefined;
  }

  /** How many of the request's messages lead `session`'s view (0: none). */
  matchLength(session: string, hashes: readonly string[]): number {
    for (let i = hashes.length - 1; i >= 0; i--) {
      if (this.#prefix.get(hashes[i]!)?.some((h) => h.session === session && h.pos === i + 1) === true) return i + 1;
    }
    return 0;
  }

  /**
   * Every session remembered as opening with this chain hash (h1), or undefined when there are
   * none, or possibly more than are remembered (the caller must then search by the whole prefix).
   */
  openedWith(h1: string): string[] | undefined {
    const hits = this.#prefix.get(h1)?.filter((h) => h.pos === 1);
    if (hits === undefined || hits.length === 0 || hits.length >= MAX_PER_PREFIX) return undefined;
    return hits.map((h) => h.session);
  }

  /** Forget a session's prefixes (it left memory); its latest reply stays, one per session. */
  remove(id: string, hashes: readonly string[]): void {
    for (const h of hashes) {
      const list = this.#prefix.get(h);
      if (list === undefined) continue;
      const rest = list.filter((hit) => hit.session !== id);
      if (rest.length === 0) this.#prefix.delete(h);
      else if (rest.length !== list.length) this.#prefix.set(h, rest);
    }
    this.#indexed.delete(id);
  }

  /** Forget a session entirely (its log is unreadable). */
  forget(id: string, hashes: readonly string[]): void {
    this.remove(id, hashes);
    this.#dropReply(id);
  }

  /**
   * Record a session's latest reply (as it is indexed, or read from its saved entry). Its earlier
   * one is forgotten: a map that kept every reply's fingerprint grew with every request served.
   */
  rememberReply(fingerprint: string, id: string): void {
    if (this.#replyOf.get(id) === fingerprint) return;
    this.#dropReply(id);
    this.#latestReply.set(fingerprint, id);
    this.#replyOf.set(id, fingerprint);
  }

  #dropReply(id: string): void {
    const fp = this.#replyOf.get(id);
    if (fp === undefined) return;
    this.#replyOf.delete(id);
    if (this.#latestReply.get(fp) === id) this.#latestReply.delete(fp);
  }

  /** The session whose latest reply has this fingerprint. */
  byLatestReply(fingerprint: string): string | undefined {
    return this.#latestReply.get(fingerprint);
  }
}
