/**
 * What the inspector keeps of one session between requests: its list item and its priced rows,
 * folded from the log once per log length (the log stays the only copy of the data).
 */
import { ownFrom, type EventOf, type LogEvent } from '../core/events.js';
import type { PriceBook } from '../stats/prices.js';
import { sessionStats } from '../stats/session-totals.js';
import { pricedRows, totalsOfRows, type PricedRow, type Totals } from './figures.js';

export interface SessionItem {
  id: string;
  /** The side request's client (`Claude Code`, ...), else the inbound wire the requests came in on, else "-". */
  client: string;
  /** The route (config model name) of the session's first request, "-" before any. */
  route: string;
  /** The upstream model of the first request, "-" before any. */
  model: string;
  /** The client key's configured name, "-" without keys. */
  key: string;
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_share: number | null;
  cost_usd: number | null;
  savings_usd: number | null;
  last_active: string | null;
  parent: { session: string; seq: number } | null;
  side: 'compaction' | 'title' | null;
  /** Added: the rest of the session's totals, and whether a torn last line was left out. */
  started: string | null;
  routes: string[];
  totals: Totals;
  torn: boolean;
}

/**
 * When a request that continues a session stops finding it and starts a new one: its last activity
 * plus `[sessions] locate_days` (docs/decisions/0023-stored-sessions-located-for-a-time.md). Null
 * when sessions are located for ever (0), before any event, and for a side request's session, which
 * nothing continues.
 */
export function continuedUntil(item: Pick<SessionItem, 'last_active' | 'side'>, locateDays: number): string | null {
  if (locateDays === 0 || item.last_active === null || item.side !== null) return null;
  return new Date(Date.parse(item.last_active) + locateDays * 86_400_000).toISOString();
}

export interface SessionEntry {
  /** The log's length when it was read (bytes): the entry is current while the length is. */
  size: number;
  item: SessionItem;
  rows: PricedRow[];
  /** Each row's time in ms, for the overview's periods. */
  times: number[];
}

export function entryOf(id: string, events: readonly LogEvent[], prices: PriceBook, size: number, torn: boolean): SessionEntry {
  const stats = sessionStats(id, events, prices, { torn });
  const rows = pricedRows(stats.requests, prices);
  const totals = totalsOfRows(rows);
  const start = events[0]?.type === 'session.start' ? (events[0] as EventOf<'session.start'>) : undefined;
  const firstReq = firstOwnRequest(events, start);
  return {
    size,
    rows,
    times: rows.map((r) => Date.parse(r.ts)),
    item: {
      id,
      client: start?.side?.client ?? firstReq?.inbound ?? '-',
      route: firstReq?.route ?? '-',
      model: firstReq?.model ?? '-',
      key: firstReq?.key_name ?? '-',
      requests: totals.requests,
      prompt_tokens: totals.prompt_tokens,
      cached_tokens: totals.cached_tokens,
      cache_share: totals.cache_share,
      cost_usd: totals.cost_usd,
      savings_usd: totals.savings_usd,
      last_active: stats.session.last_active,
      parent: start?.parent ?? null,
      side: start?.side?.kind ?? null,
      started: stats.session.started,
      routes: stats.session.models,
      totals,
      torn: stats.session.torn,
    },
  };
}

/** The first request the session made itself (a fork's log opens with its parent's). */
function firstOwnRequest(events: readonly LogEvent[], start: EventOf<'session.start'> | undefined): EventOf<'llm.req'> | undefined {
  const inherited = ownFrom(start);
  for (const e of events) if (e.type === 'llm.req' && e.seq >= inherited) return e;
  return undefined;
}
