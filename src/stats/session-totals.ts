/**
 * A session's totals over its request rows. The token cache rate is sum(cached) / sum(prompt)
 * over the replies that reported both, with a positive prompt count (docs/decisions.md, Token
 * cache rate is sum over sum): never an average of per-request rates, and unknown (null)
 * rather than 0 when no reply reported a cache read against a positive prompt total. Token sums
 * are null when no reply reported that figure at all.
 */
import type { LogEvent } from '../core/events.js';
import type { PriceBook } from './prices.js';
import { requestRows, type RequestRow } from './request-rows.js';

export interface Totals {
  requests: number;
  /** Requests with a reply (aborted ones included). */
  replies: number;
  errors: number;
  aborted: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  completion_tokens: number | null;
  reasoning_tokens: number | null;
  /** Signed thinking blocks the upstream dropped over the replies (RequestRow's); null: no reply. */
  dropped_blocks: number | null;
  /** sum(cached) / sum(prompt) over `rate_basis`; null: unknown. */
  token_cache_rate: number | null;
  /** The replies the rate is taken over: those reporting both cached and a positive prompt. */
  rate_basis: { replies: number; prompt_tokens: number; cached_tokens: number };
  /** Sum of the known costs; null when no reply's cost is known. */
  cost_usd: number | null;
  /** Replies whose cost is unknown: when above 0, `cost_usd` is a lower bound. */
  cost_unknown: number;
  /** Token-hours of explicit context caches held (included in `cost_usd` where priced); null: none made. */
  storage_token_hours: number | null;
  /** Their known cost, already in `cost_usd`; null when none is known. */
  storage_usd: number | null;
}

/** What one client key spent in a session (`proxy sessions`; docs/scaling.md, Keys without restarts). */
export interface KeyUsage {
  name: string;
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  completion_tokens: number | null;
  /** What its token cache rate is made of (Totals' `rate_basis`): summed over sessions by key-totals.ts. */
  rate_basis: Totals['rate_basis'];
  /** Sum of the known costs; null when none is known. */
  cost_usd: number | null;
  cost_unknown: number;
}

export interface SessionSummary extends Totals {
  id: string;
  /** Routes the session's requests went to, in order of first use. */
  models: string[];
  /** Per client key, in order of first use; requests without a key are in no entry. */
  keys: KeyUsage[];
  started: string | null;
  last_active: string | null;
  /** The log's last line was torn (a crash mid-write); everything before it is counted. */
  torn: boolean;
}

export interface SessionStats {
  session: SessionSummary;
  requests: RequestRow[];
}

export function totalsOf(rows: readonly RequestRow[]): Totals {
  const sum = (key: 'prompt_tokens' | 'cached_tokens' | 'cache_write_tokens' | 'completion_tokens' | 'reasoning_tokens' | 'dropped_blocks' | 'storage_token_hours' | 'storage_usd'): number | null => {
    let total: number | null = null;
    for (const row of rows) {
      const value = row[key];
      if (value !== null) total = (total ?? 0) + value;
    }
    return total;
  };
  const basis = { replies: 0, prompt_tokens: 0, cached_tokens: 0 };
  let cost: number | null = null;
  let costUnknown = 0;
  let replies = 0;
  for (const row of rows) {
    if (row.status !== 'ok' && row.status !== 'aborted') continue;
    replies++;
    if (row.cached_tokens !== null && row.prompt_tokens !== null && row.prompt_tokens > 0) {
      basis.replies++;
      basis.prompt_tokens += row.prompt_tokens;
      basis.cached_tokens += row.cached_tokens;
    }
    if (row.cost_usd === null) costUnknown++;
    else cost = (cost ?? 0) + row.cost_usd;
  }
  return {
    requests: rows.length,
    replies,
    errors: rows.filter((r) => r.status === 'error').length,
    aborted: rows.filter((r) => r.status === 'aborted').length,
    prompt_tokens: sum('prompt_tokens'),
    cached_tokens: sum('cached_tokens'),
    cache_write_tokens: sum('cache_write_tokens'),
    completion_tokens: sum('completion_tokens'),
    reasoning_tokens: sum('reasoning_tokens'),
    dropped_blocks: sum('dropped_blocks'),
    token_cache_rate: basis.prompt_tokens > 0 ? basis.cached_tokens / basis.prompt_tokens : null,
    rate_basis: basis,
    cost_usd: cost,
    cost_unknown: costUnknown,
    storage_token_hours: sum('storage_token_hours'),
    storage_usd: sum('storage_usd'),
  };
}

/** Rows and totals of one session's events (the whole log, or what was read of it). */
export function sessionStats(id: string, events: readonly LogEvent[], prices: PriceBook, opts: { torn?: boolean } = {}): SessionStats {
  const rows = requestRows(events, prices);
  const models: string[] = [];
  for (const row of rows) if (!models.includes(row.route)) models.push(row.route);
  return {
    session: {
      id,
      models,
      keys: keyUsage(events, rows),
      started: events[0]?.ts ?? null,
      last_active: events.at(-1)?.ts ?? null,
      torn: opts.torn ?? false,
      ...totalsOf(rows),
    },
    requests: rows,
  };
}

/** The rows grouped by the client key each `llm.req` names (`key_name`). */
function keyUsage(events: readonly LogEvent[], rows: readonly RequestRow[]): KeyUsage[] {
  const keyOf = new Map<number, string>();
  for (const e of events) if (e.type === 'llm.req' && e.key_name !== undefined) keyOf.set(e.seq, e.key_name);
  const byKey = new Map<string, RequestRow[]>();
  for (const row of rows) {
    const key = keyOf.get(row.seq);
    if (key === undefined) continue;
    const list = byKey.get(key) ?? [];
    if (list.length === 0) byKey.set(key, list);
    list.push(row);
  }
  return [...byKey].map(([name, list]) => {
    const t = totalsOf(list);
    return {
      name, requests: t.requests, prompt_tokens: t.prompt_tokens, cached_tokens: t.cached_tokens, completion_tokens: t.completion_tokens,
      rate_basis: t.rate_basis, cost_usd: t.cost_usd, cost_unknown: t.cost_unknown,
    };
  });
}
