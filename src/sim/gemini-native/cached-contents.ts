/**
 * Explicit context caches (ai.google.dev/api/caching, `cachedContents`): create, get, list, patch
 * (its TTL or expiry only) and delete, on the simulator's clock. An entry past its expiry is gone,
 * as on the API (a 403 "CachedContent not found"). Storage is billed per token-hour from creation
 * to deletion or expiry, so the entries' token-hours are kept, live and gone alike.
 */
import { cacheNotFound, invalidArgument } from './errors.js';
import { fields, modelId, readContents, readSystemInstruction, type Content, type Json } from './request.js';
import type { Prompt } from './render.js';

/** Gemini 2.5 Flash's documented minimum; the API answers a smaller cache with a 400. */
export const MIN_CACHE_TOKENS = 1024;
/** The API's default when neither `ttl` nor `expireTime` is given: one hour. */
const DEFAULT_TTL_MS = 3_600_000;
const HOUR_MS = 3_600_000;
const CREATE = ['model', 'displayName', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'ttl', 'expireTime', 'name'];

export interface CacheEntry extends Prompt {
  name: string;
  /** The model id, without `models/`. */
  model: string;
  displayName: string | null;
  toolConfig: unknown;
  tokens: number;
  createTime: number;
  updateTime: number;
  expireTime: number;
}

export interface CachedContentStats {
  live: number;
  created: number;
  deleted: number;
  expired: number;
  /** Tokens held now by live entries. */
  liveTokens: number;
  /** Sum over every entry of its tokens times the hours it was (or has been so far) stored. */
  tokenHours: number;
}

export class CachedContents {
  readonly #live = new Map<string, CacheEntry>();
  /** Token-hours of entries that are gone, settled when they went. */
  #settled = 0;
  #created = 0;
  #deleted = 0;
  #expired = 0;

  /** `count` renders a prompt to its token count (the simulator's tokeniser). */
  create(raw: Json, now: number, count: (prompt: Prompt) => number): CacheEntry {
    const body = fields(raw, CREATE, 'cached_content');
    if (typeof body.model !== 'string' || body.model === '') throw invalidArgument('* CachedContent.model: model is required\n');
    const contents: Content[] = readContents(body.contents, false, 'CachedContent');
    const systemInstruction = body.systemInstruction === undefined ? null : readSystemInstruction(body.systemInstruction);
    const tools = body.tools === undefined ? [] : Array.isArray(body.tools) ? body.tools : [];
    const prompt: Prompt = { tools, systemInstruction, contents };
    const tokens = count(prompt);
    if (tokens < MIN_CACHE_TOKENS) {
      throw invalidArgument(`Cached content is too small. total_token_count=${tokens}, min_total_token_count=${MIN_CACHE_TOKENS}`);
    }
    this.#created++;
    const name = `cachedContents/sim${String(this.#created).padStart(6, '0')}`;
    const entry: CacheEntry = {
      ...prompt, name, model: modelId(body.model), displayName: typeof body.displayName === 'string' ? body.displayName : null,
      toolConfig: body.toolConfig, tokens, createTime: now, updateTime: now, expireTime: expiry(body, now) ?? now + DEFAULT_TTL_MS,
    };
    this.#live.set(name, entry);
    return entry;
  }

  /** A live entry, or the API's 403. `name` is `cachedContents/{id}`. */
  get(name: string, now: number): CacheEntry {
    this.#expire(now);
    const entry = this.#live.get(name);
    if (entry === undefined) throw cacheNotFound();
    return entry;
  }

  /** Only the expiry can change (`ttl` or `expireTime`); the body's other fields are refused. */
  patch(name: string, raw: Json, now: number): CacheEntry {
    const entry = this.get(name, now);
    const body = fields(raw, ['ttl', 'expireTime', 'name'], 'cached_content');
    const when = expiry(body, now);
    if (when === null) throw invalidArgument('* UpdateCachedContentRequest: ttl or expire_time must be set\n');
    entry.expireTime = when;
    entry.updateTime = now;
    return entry;
  }

  delete(name: string, now: number): void {
    const entry = this.get(name, now);
    this.#settle(entry, now);
    this.#live.delete(name);
    this.#deleted++;
  }

  /** Live entries in creation order, a page at a time (`pageToken` is the offset). */
  list(now: number, pageSize: number, pageToken: string | null): { entries: CacheEntry[]; next: string | null } {
    this.#expire(now);
    const all = [...this.#live.values()];
    const from = pageToken === null ? 0 : Number(pageToken);
    if (!Number.isInteger(from) || from < 0) throw invalidArgument('Invalid page token.');
    const size = pageSize > 0 ? Math.min(pageSize, 1000) : 100;
    return { entries: all.slice(from, from + size), next: from + size < all.length ? String(from + size) : null };
  }

  stats(now: number): CachedContentStats {
    this.#expire(now);
    let open = 0;
    let liveTokens = 0;
    for (const entry of this.#live.values()) {
      open += (entry.tokens * (now - entry.createTime)) / HOUR_MS;
      liveTokens += entry.tokens;
    }
    return { live: this.#live.size, created: this.#created, deleted: this.#deleted, expired: this.#expired, liveTokens, tokenHours: this.#settled + open };
  }

  clear(): void {
    this.#live.clear();
    this.#settled = 0;
    this.#created = 0;
    this.#deleted = 0;
    this.#expired = 0;
  }

  #expire(now: number): void {
    for (const [name, entry] of this.#live) {
      if (entry.expireTime > now) continue;
      this.#settle(entry, entry.expireTime);
      this.#live.delete(name);
      this.#expired++;
    }
  }

  #settle(entry: CacheEntry, end: number): void {
    this.#settled += (entry.tokens * Math.max(0, end - entry.createTime)) / HOUR_MS;
  }
}

/** The resource as the API returns it (the cached prompt itself is input only). */
export function resource(entry: CacheEntry): Json {
  return {
    name: entry.name,
    model: `models/${entry.model}`,
    ...(entry.displayName === null ? {} : { displayName: entry.displayName }),
    createTime: new Date(entry.createTime).toISOString(),
    updateTime: new Date(entry.updateTime).toISOString(),
    expireTime: new Date(entry.expireTime).toISOString(),
    usageMetadata: { totalTokenCount: entry.tokens },
  };
}

/** `ttl` ("300s", "1.5s") or `expireTime` (RFC 3339), not both; null when neither. */
function expiry(body: Json, now: number): number | null {
  if (body.ttl !== undefined && body.expireTime !== undefined) throw invalidArgument('Only one of ttl and expire_time may be set.');
  if (body.ttl !== undefined) {
    const match = typeof body.ttl === 'string' ? /^(\d+(?:\.\d{1,9})?)s$/.exec(body.ttl) : null;
    if (match === null) throw invalidArgument(`Invalid value at 'cached_content.ttl' (type.googleapis.com/google.protobuf.Duration), ${JSON.stringify(body.ttl)}`);
    return now + Math.round(Number(match[1]) * 1000);
  }
  if (body.expireTime !== undefined) {
    const at = typeof body.expireTime === 'string' ? Date.parse(body.expireTime) : Number.NaN;
    if (!Number.isFinite(at)) throw invalidArgument(`Invalid value at 'cached_content.expire_time' (type.googleapis.com/google.protobuf.Timestamp), ${JSON.stringify(body.expireTime)}`);
    return at;
  }
  return null;
}

