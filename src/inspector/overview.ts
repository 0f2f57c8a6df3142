/**
 * `GET /api/overview`: the period's requests, tokens, cache share, cost and savings, by cause, by
 * route and by client key, and as a series of buckets. A request belongs to the period its
 * `llm.req` was written in.
 */
import type { PricedRow, Totals } from './figures.js';
import { totalsOfRows } from './figures.js';
import { PERIODS, type Period } from './query.js';
import type { SessionEntry } from './session-entry.js';

/** Buckets in the series, whatever the period. */
const BUCKETS = 60;

export interface Overview {
  period: Period;
  from: string | null;
  to: string;
  totals: Totals;
  causes: { cause: string; requests: number }[];
  by_route: ({ route: string; model: string } & Totals)[];
  by_key: ({ key: string } & Totals)[];
  series: { t: string; requests: number; cost_usd: number | null; cache_share: number | null }[];
  /** Added: the bucket width, ms. */
  bucket_ms: number;
}

export function overviewOf(entries: Iterable<SessionEntry>, period: Period, now: number): Overview {
  const span = PERIODS[period];
  const from = span === undefined ? -Infinity : now - span;
  const rows: PricedRow[] = [];
  const times: number[] = [];
  const byRoute = new Map<string, { route: string; model: string; rows: PricedRow[] }>();
  const byKey = new Map<string, PricedRow[]>();
  for (const entry of entries) {
    entry.rows.forEach((row, i) => {
      const t = entry.times[i]!;
      if (t < from || t > now) return;
      rows.push(row);
      times.push(t);
      const rk = `${row.route}\n${row.model}`;
      let r = byRoute.get(rk);
      if (r === undefined) byRoute.set(rk, (r = { route: row.route, model: row.model, rows: [] }));
      r.rows.push(row);
      let k = byKey.get(entry.item.key);
      if (k === undefined) byKey.set(entry.item.key, (k = []));
      k.push(row);
    });
  }
  const causes = new Map<string, number>();
  for (const row of rows) causes.set(row.cause ?? 'unknown', (causes.get(row.cause ?? 'unknown') ?? 0) + 1);

  const start = span !== undefined ? from : times.reduce((a, b) => Math.min(a, b), now);
  const bucketMs = Math.max(1, Math.ceil((now - start) / BUCKETS));
  const buckets: PricedRow[][] = Array.from({ length: BUCKETS }, () => []);
  rows.forEach((row, i) => buckets[Math.min(BUCKETS - 1, Math.floor((times[i]! - start) / bucketMs))]!.push(row));

  return {
    period,
    from: span === undefined ? (times.length === 0 ? null : new Date(start).toISOString()) : new Date(from).toISOString(),
    to: new Date(now).toISOString(),
    totals: totalsOfRows(rows),
    causes: [...causes].map(([cause, requests]) => ({ cause, requests })).sort((a, b) => b.requests - a.requests || a.cause.localeCompare(b.cause)),
    by_route: [...byRoute.values()].map((r) => ({ route: r.route, model: r.model, ...totalsOfRows(r.rows) })).sort((a, b) => b.requests - a.requests),
    by_key: [...byKey].map(([key, list]) => ({ key, ...totalsOfRows(list) })).sort((a, b) => b.requests - a.requests),
    series: buckets.map((list, i) => {
      const t = totalsOfRows(list);
      return { t: new Date(start + i * bucketMs).toISOString(), requests: t.requests, cost_usd: t.cost_usd, cache_share: t.cache_share };
    }),
    bucket_ms: bucketMs,
  };
}
