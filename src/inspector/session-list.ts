/**
 * `GET /api/sessions`: the sessions active in the period (last activity inside it), filtered by
 * model (route or upstream model), client key name, a substring of the id and a break cause (a
 * request of the period with that cause: the overview's count by cause, session by session),
 * sorted and cut to one page. Unknown figures sort last whichever the direction.
 */
import type { BreakCause } from '../core/events.js';
import { PERIODS, type Period, type Sort } from './query.js';
import { continuedUntil, type SessionEntry, type SessionItem } from './session-entry.js';

export interface ListQuery {
  period: Period;
  model: string | undefined;
  key: string | undefined;
  q: string | undefined;
  cause: BreakCause | undefined;
  sort: Sort;
  dir: 'asc' | 'desc';
  offset: number;
  limit: number;
}

export interface SessionPage {
  total: number;
  offset: number;
  limit: number;
  items: (Omit<SessionItem, 'totals'> & { continued_until: string | null })[];
}

const VALUE: Record<Sort, (s: SessionItem) => number | string | null> = {
  last_active: (s) => s.last_active,
  cost: (s) => s.cost_usd ?? s.totals.known_cost_usd,
  savings: (s) => s.savings_usd,
  requests: (s) => s.requests,
  cache_share: (s) => s.cache_share,
  prompt_tokens: (s) => s.prompt_tokens,
};

/** `locateDays`: the config's `[sessions] locate_days`, for each item's `continued_until`. */
export function listSessions(entries: Iterable<SessionEntry>, query: ListQuery, now: number, locateDays: number): SessionPage {
  const span = PERIODS[query.period];
  const from = span === undefined ? undefined : new Date(now - span).toISOString();
  const q = query.q?.toLowerCase();
  // A request counts in the period as the overview counts it (overview.ts).
  const since = span === undefined ? -Infinity : now - span;
  const matched: SessionItem[] = [];
  for (const { item, rows, times } of entries) {
    if (from !== undefined && (item.last_active === null || item.last_active < from)) continue;
    if (query.model !== undefined && !item.routes.includes(query.model) && item.model !== query.model) continue;
    if (query.key !== undefined && item.key !== query.key) continue;
    if (q !== undefined && !item.id.toLowerCase().includes(q)) continue;
    if (query.cause !== undefined && !rows.some((r, i) => r.cause === query.cause && times[i]! >= since && times[i]! <= now)) continue;
    matched.push(item);
  }
  const value = VALUE[query.sort];
  const sign = query.dir === 'asc' ? 1 : -1;
  matched.sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    if (va === null || vb === null) return va === vb ? byId(a, b) : va === null ? 1 : -1;
    const c = va < vb ? -1 : va > vb ? 1 : 0;
    return c * sign || byId(a, b);
  });
  const page = matched.slice(query.offset, query.offset + query.limit).map(({ totals: _totals, ...item }) => ({ ...item, continued_until: continuedUntil(item, locateDays) }));
  return { total: matched.length, offset: query.offset, limit: query.limit, items: page };
}

/** Plain code-unit order: ISO times and ids sort right without a locale's cost. */
function byId(a: SessionItem, b: SessionItem): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
