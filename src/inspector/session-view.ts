/**
 * `GET /api/sessions/:id`: one session's requests and totals, read from its log through the same
 * function as `proxy stats SESSION --json` (sessionStats), with cumulative cost and savings, the
 * window's timeline, and the forks and side requests taken from it.
 */
import { ProxyError } from '../core/errors.js';
import type { EventOf } from '../core/events.js';
import type { PriceBook } from '../stats/prices.js';
import { sessionStats } from '../stats/session-totals.js';
import type { Store } from '../store/types.js';
import { pricedRows, totalsOfRows, type PricedRow, type Totals } from './figures.js';
import { continuedUntil, type SessionEntry } from './session-entry.js';
import { timelineOf, type Child, type TimelineEntry } from './timeline.js';

export interface SessionDetail {
  id: string;
  client: string;
  route: string;
  model: string;
  key: string;
  parent: { session: string; seq: number } | null;
  side: 'compaction' | 'title' | null;
  children: Child[];
  totals: Totals;
  total_requests: number;
  offset: number;
  limit: number;
  requests: DetailRow[];
  timeline: TimelineEntry[];
  /** Added: as `proxy stats`' session: first and last event times, routes used, a torn last line left out. */
  started: string | null;
  last_active: string | null;
  /** When a request continuing it starts a new session instead (session-entry.ts, `continuedUntil`). */
  continued_until: string | null;
  routes: string[];
  torn: boolean;
}

export interface DetailRow extends PricedRow {
  /** Sum of the costs up to this request; null from the first reply of unknown cost on. */
  cumulative_cost_usd: number | null;
  cumulative_savings_usd: number | null;
}

export async function sessionDetail(
  store: Pick<Store, 'file' | 'exists' | 'read'>,
  id: string,
  prices: PriceBook,
  entries: ReadonlyMap<string, SessionEntry>,
  page: { offset: number; limit: number },
  locateDays: number,
): Promise<SessionDetail> {
  const file = store.file(id); // checks the id before the store is asked
  if (!(await store.exists(id))) throw new ProxyError('session_not_found', { session: id, file });
  const log = await store.read(id);
  const stats = sessionStats(id, log.events, prices, { torn: log.torn !== undefined });
  const rows = pricedRows(stats.requests, prices);
  const start = log.events[0]?.type === 'session.start' ? (log.events[0] as EventOf<'session.start'>) : undefined;
  const children = childrenOf(id, entries);
  const own = entries.get(id)?.item;
  const firstReq = rows[0];
  return {
    id,
    client: start?.side?.client ?? own?.client ?? '-',
    route: firstReq?.route ?? '-',
    model: firstReq?.model ?? '-',
    key: own?.key ?? '-',
    parent: start?.parent ?? null,
    side: start?.side?.kind ?? null,
    children,
    totals: totalsOfRows(rows),
    total_requests: rows.length,
    offset: page.offset,
    limit: page.limit,
    requests: cumulative(rows).slice(page.offset, page.offset + page.limit),
    timeline: timelineOf(log.events, children),
    started: stats.session.started,
    last_active: stats.session.last_active,
    continued_until: continuedUntil({ last_active: stats.session.last_active, side: start?.side?.kind ?? null }, locateDays),
    routes: stats.session.models,
    torn: stats.session.torn,
  };
}

function cumulative(rows: readonly PricedRow[]): DetailRow[] {
  let cost: number | null = 0;
  let savings: number | null = 0;
  return rows.map((row) => {
    const replied = row.status === 'ok' || row.status === 'aborted';
    if (replied) {
      cost = cost === null || row.cost_usd === null ? null : cost + row.cost_usd;
      savings = savings === null || row.savings_usd === null ? null : savings + row.savings_usd;
    }
    return { ...row, cumulative_cost_usd: cost, cumulative_savings_usd: savings };
  });
}

/** Sessions whose log names this one as its parent, in the order they branched. */
export function childrenOf(id: string, entries: ReadonlyMap<string, SessionEntry>): Child[] {
  const out: Child[] = [];
  for (const [childId, { item }] of entries) {
    if (item.parent?.session === id) out.push({ id: childId, kind: item.side === null ? 'fork' : 'side', seq: item.parent.seq });
  }
  return out.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : 1));
}
