/**
 * Gemini's explicit context caches, one per session on a route with `gemini_cache = "explicit"`
 * (docs/decisions/0007-gemini-explicit-caching.md): the session's stable prefix (system
 * instruction, tools, the conversation up to its last cut) goes in a `cachedContents` entry once it
 * is at least `minTokens` long; later requests name it while their prefix still equals it. The
 * entry is replaced when a trim (or a changed tool list) moves the prefix, or when the conversation
 * has grown to twice what it holds; its TTL is extended while the session is live; it is deleted
 * when the session has been idle `idleMs`, and at close. A failed call leaves the request on
 * implicit caching. The wire work is the dialect's (cached-content.ts); the calls are `api`'s.
 */
import type { Route } from '../config/routes.js';
import type { DialectRoute, EncodedRequest } from '../core/route.js';
import { estimateMessageTokens, estimateTextTokens } from '../core/estimate.js';
import type { NeutralRequest } from '../core/types.js';
import { cacheCuts, encodeCacheCreate, encodeCacheExtend } from '../dialects/gemini/cached-content.js';
import type { ResolvedImage } from '../dialects/types.js';

export interface CacheTarget {
  baseUrl: string;
  apiKey?: string;
}

export interface CacheApi {
  create(target: CacheTarget, req: EncodedRequest): Promise<{ name: string; tokens: number }>;
  extend(target: CacheTarget, req: EncodedRequest): Promise<void>;
  delete(target: CacheTarget, name: string): Promise<void>;
}

export interface CacheOptions {
  now: () => number;
  /** A session unused this long has its entry deleted. */
  idleMs: number;
  /** Gemini 2.5 Flash's minimum (the API refuses a smaller entry). */
  minTokens?: number;
  warn?: (line: string) => void;
  /** An entry ended (deleted, replaced or dropped): the token-hours it was held, for the metrics. */
  stored?: (route: Route, tokenHours: number) => void;
}

/** What a request reads: the hint for the encoder, and what `llm.req` records. */
export interface CacheUse {
  name: string;
  messages: number;
  tokens: number;
  created: boolean;
  /**
   * When the entry is deleted unless a later request of the session uses it (now + the idle time):
   * the log records it so the stats can price the storage without the proxy's memory.
   */
  keptUntil: number;
}

/** Totals since start, for the bench and `stats()`; token-hours of gone and live entries alike. */
export interface CacheTotals {
  live: number;
  created: number;
  replaced: number;
  deleted: number;
  failed: number;
  tokensWritten: number;
  tokenHours: number;
}

interface Entry {
  route: Route;
  target: CacheTarget;
  dialect: DialectRoute;
  name: string;
  key: string;
  messages: number;
  tokens: number;
  createdAt: number;
  expiresAt: number;
  lastUsed: number;
}

const HOUR_MS = 3_600_000;
/** The TTL outlasts the idle time by this much: the entry expires by itself if the proxy dies. */
const TTL_MARGIN_MS = 60_000;

export class GeminiCaches {
  readonly #api: CacheApi;
  readonly #opts: Required<Omit<CacheOptions, 'warn' | 'stored'>> & Pick<CacheOptions, 'warn' | 'stored'>;
  readonly #entries = new Map<string, Entry>();
  /** The prefix key a create was refused for, per session: not asked again until the prefix moves. */
  readonly #refused = new Map<string, string>();
  readonly #totals: Omit<CacheTotals, 'live' | 'tokenHours'> = { created: 0, replaced: 0, deleted: 0, failed: 0, tokensWritten: 0 };
  #settledTokenHours = 0;
  #sweeper: NodeJS.Timeout | undefined;
  /** Deletes under way: a request does not wait for them, close does. */
  readonly #deleting = new Set<Promise<void>>();

  constructor(api: CacheApi, opts: CacheOptions) {
    this.#api = api;
    this.#opts = { minTokens: 1024, ...opts };
  }

  get #ttlMs(): number {
    return this.#opts.idleMs + TTL_MARGIN_MS;
  }

  /**
   * The entry this session's request reads, made or replaced as needed; undefined: the whole
   * prompt goes (too short yet, or the upstream refused). Sweeps idle sessions first, without
   * waiting for their deletes.
   */
  async use(session: string, route: Route, req: NeutralRequest, apiKey: string | undefined, resolveImage: (sha: string) => ResolvedImage): Promise<CacheUse | undefined> {
    const now = this.#opts.now();
    void this.sweep(now);
    const target: CacheTarget = { baseUrl: route.deployments[0]!.baseUrl, ...(apiKey === undefined ? {} : { apiKey }) };
    const opts = { resolveImage };
    const ttlSeconds = this.#ttlMs / 1000;
    let entry = this.#entries.get(session);
    if (entry !== undefined) {
      entry.lastUsed = now;
      const holds = entry.messages < req.messages.length && entry.dialect.model === route.dialect.model
        && encodeCacheCreate(req, entry.messages, route.dialect, ttlSeconds, opts).key === entry.key;
      if (!holds) {
        this.#totals.replaced++;
        void this.#drop(session, entry, now);
        entry = undefined;
      }
    }
    const cut = cacheCuts(req.messages).at(-1);
    const wanted = cut !== undefined && estimatePrefix(req, cut) >= this.#opts.minTokens ? cut : undefined;
    // Grown to twice what the entry holds: the uncached tail is worth holding too.
    if (entry !== undefined && wanted !== undefined && wanted > entry.messages && estimatePrefix(req, wanted) >= 2 * estimatePrefix(req, entry.messages)) {
      this.#totals.replaced++;
      void this.#drop(session, entry, now);
      entry = undefined;
    }
    if (entry !== undefined && entry.expiresAt - now < this.#ttlMs / 2 && !(await this.#extend(entry, now))) {
      // An entry that could not be kept may be gone before the request lands: this one goes whole.
      void this.#drop(session, entry, now);
      return undefined;
    }
    const keptUntil = now + this.#opts.idleMs;
    if (entry !== undefined) return { name: entry.name, messages: entry.messages, tokens: entry.tokens, created: false, keptUntil };
    if (wanted === undefined) return undefined;
    const create = encodeCacheCreate(req, wanted, route.dialect, ttlSeconds, opts);
    if (this.#refused.get(session) === create.key) return undefined;
    try {
      const made = await this.#api.create(target, create.encoded);
      const fresh: Entry = { route, target, dialect: route.dialect, name: made.name, key: create.key, messages: wanted, tokens: made.tokens, createdAt: now, expiresAt: now + this.#ttlMs, lastUsed: now };
      this.#entries.set(session, fresh);
      this.#refused.delete(session);
      this.#totals.created++;
      this.#totals.tokensWritten += made.tokens;
      return { name: fresh.name, messages: fresh.messages, tokens: fresh.tokens, created: true, keptUntil };
    } catch (err) {
      this.#totals.failed++;
      this.#refused.set(session, create.key);
      this.#opts.warn?.(`gemini cache for route ${route.name}: ${(err as Error).message}; the request goes whole`);
      return undefined;
    }
  }

  /** Delete the entries of sessions unused since `now - idleMs`; resolves with how many went. */
  async sweep(now = this.#opts.now()): Promise<number> {
    const idle = [...this.#entries].filter(([, e]) => e.lastUsed <= now - this.#opts.idleMs);
    await Promise.all(idle.map(([session, e]) => this.#drop(session, e, now)));
    for (const [session] of idle) this.#refused.delete(session);
    return idle.length;
  }

  /** Sweep now and then (at most every minute), without holding the process open. */
  startSweeping(): void {
    if (this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1_000, this.#opts.idleMs / 2)));
    this.#sweeper.unref();
  }

  /** Delete every entry (the proxy closes). */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const now = this.#opts.now();
    for (const [session, e] of this.#entries) void this.#drop(session, e, now);
    await Promise.all([...this.#deleting]);
  }

  /** The entry a session reads now, if any. */
  entryOf(session: string): { name: string; messages: number; tokens: number } | undefined {
    const e = this.#entries.get(session);
    return e === undefined ? undefined : { name: e.name, messages: e.messages, tokens: e.tokens };
  }

  totals(now = this.#opts.now()): CacheTotals {
    let open = 0;
    for (const e of this.#entries.values()) open += tokenHours(e, now);
    return { ...this.#totals, live: this.#entries.size, tokenHours: this.#settledTokenHours + open };
  }

  async #extend(entry: Entry, now: number): Promise<boolean> {
    try {
      await this.#api.extend(entry.target, encodeCacheExtend(entry.name, entry.dialect, this.#ttlMs / 1000));
      entry.expiresAt = now + this.#ttlMs;
      return true;
    } catch (err) {
      this.#opts.warn?.(`gemini cache ${entry.name}: extending its TTL failed: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * Out of the map at once: a request of the session meanwhile makes its own. Storage is counted to
   * here; the delete runs on, tracked until it ends.
   */
  #drop(session: string, entry: Entry, now: number): Promise<void> {
    if (this.#entries.get(session) === entry) this.#entries.delete(session);
    const held = tokenHours(entry, now);
    this.#settledTokenHours += held;
    this.#totals.deleted++;
    this.#opts.stored?.(entry.route, held);
    const done = this.#api.delete(entry.target, entry.name).catch((err: unknown) => {
      // Gone already (expired) or unreachable: its TTL ends it.
      this.#opts.warn?.(`gemini cache ${entry.name}: delete failed: ${(err as Error).message}`);
    }).finally(() => this.#deleting.delete(done));
    this.#deleting.add(done);
    return done;
  }
}

function tokenHours(entry: Entry, now: number): number {
  return (entry.tokens * Math.max(0, Math.min(now, entry.expiresAt) - entry.createdAt)) / HOUR_MS;
}

/** The first `n` messages with the system prompt and tools, estimated. */
function estimatePrefix(req: NeutralRequest, n: number): number {
  let tokens = req.tools.length === 0 ? 0 : estimateTextTokens(JSON.stringify(req.tools));
  for (const m of req.messages.slice(0, n)) tokens += estimateMessageTokens(m);
  return tokens;
}
