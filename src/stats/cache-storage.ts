/**
 * How long each explicit context cache of a session was held, read from its log alone: the
 * `gemini_cache` hint of every `llm.req` names the entry the request read, whether it made it, and
 * `kept_until`, when the proxy deletes it unless a later request uses it
 * (src/proxy/gemini-caches.ts). An entry is held from the request that made it until the first
 * later request that names another entry or none (it was replaced or dropped there), else until
 * its last `kept_until` (deleted as idle). The token-hours go to the request that made the entry:
 * storing it was that request's decision (docs/decisions/0007-gemini-explicit-caching.md).
 */
import type { EventOf, LogEvent } from '../core/events.js';

const HOUR_MS = 3_600_000;

interface Held {
  creator: number;
  name: string;
  tokens: number;
  from: number;
  until: number;
}

/** Token-hours by the seq of the `llm.req` that made each entry; events before `from` are skipped. */
export function storageByCreator(events: readonly LogEvent[], from = 0): Map<number, number> {
  const out = new Map<number, number>();
  let held: Held | undefined;
  const end = (at: number): void => {
    if (held === undefined) return;
    const hours = Math.max(0, Math.min(at, held.until) - held.from) / HOUR_MS;
    out.set(held.creator, (out.get(held.creator) ?? 0) + held.tokens * hours);
    held = undefined;
  };
  for (const e of events) {
    if (e.seq < from || e.type !== 'llm.req') continue;
    const hint = (e as EventOf<'llm.req'>).hints?.gemini_cache;
    const at = Date.parse(e.ts);
    if (held !== undefined && hint?.name !== held.name) end(at);
    // Logs from before `kept_until` was recorded price nothing: when the entry went is unknown.
    if (hint?.kept_until === undefined) continue;
    const until = Date.parse(hint.kept_until);
    if (held === undefined && hint.created === true) held = { creator: e.seq, name: hint.name, tokens: hint.tokens, from: at, until };
    else if (held !== undefined) held.until = until;
  }
  end(Number.POSITIVE_INFINITY);
  return out;
}
