/**
 * The client's request headers that the upstream's wire reads (`Dialect.clientHeaders`: Anthropic's
 * `anthropic-version` and `anthropic-beta`, docs/inbound.md), as the client sent them, unless the
 * route's config sets the same header. They go on the wire only: not in the log, not in the digest.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dialect } from '../dialects/types.js';
import { joinHeaderList } from '../dialects/wire-headers.js';

export function forwardedHeaders(headers: IncomingHttpHeaders, dialect: Dialect, configured: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const names = dialect.clientHeaders ?? [];
  if (names.length === 0) return out;
  const set = new Set(Object.keys(configured).map((h) => h.toLowerCase()));
  for (const name of names) {
    const value = headers[name];
    const text = Array.isArray(value) ? value.join(',') : value;
    if (text !== undefined && text.trim() !== '' && !set.has(name)) out[name] = text;
  }
  return out;
}

/**
 * The forwarded headers onto an encoded request's: the client's value replaces the encoder's, but
 * for a list header (`Dialect.listHeaders`) the two lists are joined, each entry once.
 */
export function addForwarded(headers: Record<string, string>, forwarded: Record<string, string>, dialect: Dialect): void {
  const lists = dialect.listHeaders ?? [];
  for (const [name, value] of Object.entries(forwarded)) {
    const own = lists.includes(name) ? headers[name] : undefined;
    headers[name] = own === undefined ? value : joinHeaderList(own, value);
  }
}
