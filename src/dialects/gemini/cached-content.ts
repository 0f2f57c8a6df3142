/**
 * Explicit context caches (ai.google.dev/api/caching): where a request's prompt may be cut between
 * a `cachedContents` entry and the request that names it, and the entry's body. Pure: which prefix
 * is cached is decided by src/proxy/gemini-caches.ts and handed to the encoder as a hint.
 */
import { canonicalDigest } from '../../core/canonical.js';
import type { DialectRoute, EncodedRequest } from '../../core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { jsonHeaders } from '../wire-headers.js';
import { promptOf } from './encode-request.js';

type WireRole = 'lead' | 'user' | 'model';

function roleOf(m: NeutralMessage, i: number): WireRole {
  if (i === 0 && m.role === 'system') return 'lead';
  return m.role === 'assistant' ? 'model' : 'user';
}

/**
 * Message counts `n` at which the prompt may be cut: the first `n` messages go in the cache, the
 * rest in the request. A cut lies after the leading system prompt or between a model turn and the
 * user turn after it, so no content is split and the request starts with a user turn (function
 * responses to calls in the cache included, as the API reads the two as one conversation). At
 * least one message stays in the request. Ascending.
 */
export function cacheCuts(messages: readonly NeutralMessage[]): number[] {
  const cuts: number[] = [];
  for (let n = 1; n < messages.length; n++) {
    const before = roleOf(messages[n - 1]!, n - 1);
    if (roleOf(messages[n]!, n) === 'user' && before !== 'user') cuts.push(n);
  }
  return cuts;
}

/** The entry's body and its key: equal keys, equal cached prompts (the TTL is not part of it). */
export interface CacheCreate {
  encoded: EncodedRequest;
  key: string;
}

/** `POST /cachedContents` holding the system instruction, tools, tool config and the first `n` messages. */
export function encodeCacheCreate(req: NeutralRequest, n: number, route: DialectRoute, ttlSeconds: number, opts: Pick<EncodeOptions, 'resolveImage'>): CacheCreate {
  const prompt = promptOf(req, opts);
  const held: Record<string, unknown> = { model: `models/${route.model}`, contents: prompt.contents.slice(0, prompt.ends[n - 1] ?? 0) };
  if (prompt.systemInstruction !== undefined) held.systemInstruction = prompt.systemInstruction;
  if (prompt.tools !== undefined) held.tools = prompt.tools;
  if (prompt.toolConfig !== undefined) held.toolConfig = prompt.toolConfig;
  const body = JSON.stringify({ ...held, ttl: ttlText(ttlSeconds) });
  return { encoded: { path: '/cachedContents', headers: jsonHeaders(route, { bodyKey: false, headers: {} }), body }, key: canonicalDigest(held) };
}

/** `PATCH /cachedContents/{id}` moving the expiry `ttlSeconds` from now. */
export function encodeCacheExtend(name: string, route: DialectRoute, ttlSeconds: number): EncodedRequest {
  return { path: `/${name}?updateMask=ttl`, headers: jsonHeaders(route, { bodyKey: false, headers: {} }), body: JSON.stringify({ ttl: ttlText(ttlSeconds) }) };
}

/** The entry's name and tokens from the create answer; undefined when it holds neither. */
export function readCacheCreated(body: unknown): { name: string; tokens: number } | undefined {
  const b = body as { name?: unknown; usageMetadata?: { totalTokenCount?: unknown } } | null;
  const name = b?.name;
  const tokens = b?.usageMetadata?.totalTokenCount;
  return typeof name === 'string' && typeof tokens === 'number' ? { name, tokens } : undefined;
}

function ttlText(seconds: number): string {
  return `${Math.max(1, Math.round(seconds))}s`;
}
