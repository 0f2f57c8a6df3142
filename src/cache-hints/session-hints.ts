/**
 * Session key and the hints that carry it (docs/architecture.md section 7). The key is the SHA-256 of the
 * session's lineage (its own id, or the conversation a fork or side call came from; docs/decisions.md,
 * Lineage key), never the id: the same across a resume, saying nothing else. Hints go on the wire
 * only; the NeutralRequest and its digest never see them.
 */
import { sha256Hex } from '../core/canonical.js';
import type { HintsRecord } from '../core/events.js';
import type { EncodedRequest, WireHints } from '../core/route.js';
import type { Route } from '../config/routes.js';

/**
 * Codex's own session headers. A ChatGPT-plan credential's requests read almost nothing from the
 * cache without them (0.9-5.6%) and 84.3% with them (docs/decisions.md, Session keys).
 */
export const CODEX_HEADERS = ['session-id', 'thread-id', 'x-client-request-id'] as const;

export function sessionKey(sessionId: string): string {
  return sha256Hex(sessionId);
}

/**
 * `session`: the key as `prompt_cache_key` and in the preset's affinity headers; `header`: in the
 * headers only, for servers that refuse unknown fields; `off`: nowhere. Codex headers join
 * whenever the key is sent at all.
 */
export function hintsFor(route: Route, sessionId: string): WireHints {
  const hints: WireHints = { bodyKey: false, headers: {} };
  if (route.cacheKey !== 'off') {
    const key = sessionKey(sessionId);
    for (const name of route.affinityHeaders) hints.headers[name] = key;
    if (route.codexHeaders) for (const name of CODEX_HEADERS) hints.headers[name] = key;
    hints.bodyKey = route.cacheKey === 'session';
    // Only a key that goes somewhere is handed over: what the hints hold is what is sent.
    if (hints.bodyKey || Object.keys(hints.headers).length > 0) hints.sessionKey = key;
  }
  if (route.promptCache !== 'off') hints.promptCache = route.promptCache;
  if (route.cacheControl !== 'off') {
    hints.cacheControl = route.cacheControl;
    hints.cacheControlAt = route.topLevelCacheControl ? 'top-level' : 'breakpoints';
  }
  return hints;
}

/** What was sent, for `llm.req`: whether the body carried the key, which headers, which cache ask. */
export function hintsRecord(hints: WireHints, encoded: Pick<EncodedRequest, 'cacheBreakpoints' | 'promptCache'> = {}): HintsRecord {
  const breakpoints = encoded.cacheBreakpoints;
  const record: HintsRecord = {};
  if (hints.bodyKey && hints.sessionKey !== undefined) record.session_key = true;
  const headers = Object.keys(hints.headers).sort();
  if (headers.length > 0) record.headers = headers;
  if (hints.cacheControl !== undefined) record.cache_control = hints.cacheControl;
  if (breakpoints !== undefined && breakpoints > 0) record.breakpoints = breakpoints;
  if (encoded.promptCache !== undefined) record.prompt_cache = { mode: encoded.promptCache.mode, marks: [...encoded.promptCache.marks] };
  return record;
}
