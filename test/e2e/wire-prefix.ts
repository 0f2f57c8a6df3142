/**
 * What the provider's cache could have read, measured on the upstream requests as they went on
 * the wire (recorded by the tap) with the simulator's own rendering and token rule, so that none
 * of the proxy's accounting (llm.req causes, usage it logged) enters the measure.
 */
import { parseMessagesRequest } from '../../src/sim/anthropic/request.js';
import { renderRequest } from '../../src/sim/anthropic/render.js';
import { MIN_CACHEABLE_TOKENS } from '../../src/sim/anthropic/prompt-cache.js';
import { BLOCK_TOKENS, TOKEN_BYTES } from '../../src/sim/tokens.js';
import type { TappedRequest } from './harness.js';

/** A request as the simulated model reads it, with what its cache keys the messages on. */
export interface RenderedRequest {
  bytes: Buffer;
  /** Bytes of the tools and system prompt, which the cache keys on the prefix alone. */
  headBytes: number;
  /** What the message blocks are cached under besides their prefix (tool_choice, thinking, effort). */
  messageKey: string;
}

/** A Messages request as the simulated model reads it (its cache and its signatures use the same text). */
export function renderAnthropic(req: TappedRequest): RenderedRequest {
  const parsed = parseMessagesRequest(JSON.stringify(req.body));
  const segments = renderRequest(parsed);
  const head = segments.filter((s) => s.where.startsWith('tools.') || s.where.startsWith('system.')).map((s) => s.text).join('');
  return { bytes: Buffer.from(segments.map((s) => s.text).join(''), 'utf8'), headBytes: Buffer.byteLength(head, 'utf8'), messageKey: parsed.messageCacheKey };
}

/** `[elided seq=N]`, or a merged run's `[elided seq=A-B]` (window-v2). */
const ELIDED = /\[elided seq=\d+(?:-\d+)?\]/g;

function markers(rendered: Buffer): Set<string> {
  return new Set(rendered.toString('utf8').match(ELIDED) ?? []);
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Tokens a cache keyed on 128-token blocks can give for a prefix of `bytes`: whole blocks, none below 1024 tokens. */
export function cacheableTokens(bytes: number): number {
  const tokens = Math.floor(bytes / TOKEN_BYTES);
  return tokens < MIN_CACHEABLE_TOKENS ? 0 : Math.floor(tokens / BLOCK_TOKENS) * BLOCK_TOKENS;
}

/**
 * Tokens in the whole 128-token blocks of a prompt the simulator counted as `promptTokens`. Its
 * last token may be a partial 4-byte chunk (src/sim/tokens.ts), so a count that is a multiple of
 * 128 may end inside its last block, which a longer prompt then does not share: count that block
 * out (test/sim/caching.test.ts shows it).
 */
export function wholeBlockTokens(promptTokens: number): number {
  return promptTokens < 1 ? 0 : Math.floor((promptTokens - 1) / BLOCK_TOKENS) * BLOCK_TOKENS;
}

export interface PrefixStep {
  /** Tokens of the whole rendered prompt. */
  prompt: number;
  /**
   * The window elided something new in this request: an elision marker the request before did
   * not have (a new `[elided seq=N]`, or a run's `[elided seq=A-B]` that now names a later entry).
   */
  trimmed: boolean;
  /** Bytes this request shares with the one before it, as both went on the wire. */
  commonBytes: number;
  /**
   * What an unchanged prefix lets the cache give: the whole previous request (a conversation
   * that only grows), or, where the window trimmed, what the trim left of it; where the request's
   * message key changed (`keyChanged`), the tools and system alone. 0 for the first.
   */
  ideal: number;
  /** Its messages are cached under another key than the request before's (thinking turned off or on). */
  keyChanged: boolean;
}

/**
 * Per request: the ideal read. Not simply the common prefix with the previous request: where the
 * proxy itself changed the prefix (a rewrite, a lost thinking block) that common prefix shrinks
 * with the loss, and the measure would excuse the very break it should count. Only the window's
 * trim, one per high-water crossing, may shorten what the previous request left to read; and a
 * changed message key (the API's rule) leaves the tools and system. Callers hold the key changes
 * to the trims that force them.
 */
export function prefixSteps(rendered: readonly RenderedRequest[]): PrefixStep[] {
  return rendered.map((cur, k) => {
    const prompt = Math.ceil(cur.bytes.length / TOKEN_BYTES);
    if (k === 0) return { prompt, trimmed: false, commonBytes: 0, ideal: 0, keyChanged: false };
    const prev = rendered[k - 1]!;
    const before = markers(prev.bytes);
    const trimmed = [...markers(cur.bytes)].some((m) => !before.has(m));
    const commonBytes = commonPrefix(prev.bytes, cur.bytes);
    const keyChanged = cur.messageKey !== prev.messageKey;
    const reach = keyChanged ? Math.min(commonBytes, cur.headBytes) : trimmed ? commonBytes : prev.bytes.length;
    return { prompt, trimmed, commonBytes, ideal: cacheableTokens(reach), keyChanged };
  });
}
