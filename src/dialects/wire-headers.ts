/** The request headers every dialect sends: defaults, then config headers, then the cache hints' affinity headers; our content type always wins. */
import type { DialectRoute, WireHints } from '../core/route.js';

export function jsonHeaders(route: DialectRoute, hints: WireHints, defaults: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = {};
  const configured = new Set(Object.keys(route.headers).map((h) => h.toLowerCase()));
  for (const [name, value] of Object.entries(defaults)) if (!configured.has(name.toLowerCase())) headers[name] = value;
  for (const source of [route.headers, hints.headers]) {
    for (const [name, value] of Object.entries(source)) {
      if (name.toLowerCase() !== 'content-type') headers[name] = value;
    }
  }
  headers['content-type'] = 'application/json';
  return headers;
}

/** Comma-separated header lists (`anthropic-beta`) joined, each entry once, in order of first appearance. */
export function joinHeaderList(...lists: string[]): string {
  const entries = lists.flatMap((list) => list.split(',').map((x) => x.trim()).filter((x) => x !== ''));
  return [...new Set(entries)].join(',');
}

/** The token of an `Authorization: Bearer ...` header. */
export function bearerOf(header: string | string[] | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(typeof header === 'string' ? header : '');
  return match?.[1]?.trim();
}
