/**
 * The inspector's figures, taken from `src/stats` (the rows and totals `proxy stats --json` prints)
 * and extended with what the page adds: each reply's cost at uncached input prices and the
 * saving against it. A price that is unknown stays unknown (null), never 0.
 */
import type { RequestRow } from '../stats/request-rows.js';
import type { PriceBook } from '../stats/prices.js';
import { totalsOf } from '../stats/session-totals.js';
import { costOf } from '../pricing/cost.js';

/** A request row as `proxy stats` gives it, plus the uncached cost of the same tokens. */
export interface PricedRow extends RequestRow {
  /** The same tokens with nothing read from or written to a cache, at the route's prices; null: unknown. */
  uncached_cost_usd: number | null;
  savings_usd: number | null;
  /** prompt - cached - written; null when the prompt was not reported. */
  uncached_tokens: number | null;
}

export interface Totals {
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  completion_tokens: number | null;
  /** Signed thinking blocks the upstream dropped (`proxy stats`' own); null: no reply. */
  dropped_blocks: number | null;
  /** `proxy stats`' token cache rate: sum(cached) / sum(prompt) over the replies reporting both. */
  cache_share: number | null;
  /** Null when any reply's cost is unknown (`known_cost_usd` is then a lower bound). */
  cost_usd: number | null;
  unknown_cost_requests: number;
  uncached_cost_usd: number | null;
  savings_usd: number | null;
  /** The sum of the known costs: `proxy stats`' `cost_usd`. */
  known_cost_usd: number | null;
  replies: number;
  errors: number;
  aborted: number;
}

export function pricedRows(rows: readonly RequestRow[], prices: PriceBook): PricedRow[] {
  return rows.map((row) => {
    const uncached = uncachedCost(row, prices);
    const savings = uncached !== null && row.cost_usd !== null ? uncached - row.cost_usd : null;
    const uncachedTokens = row.prompt_tokens === null ? null : Math.max(0, row.prompt_tokens - (row.cached_tokens ?? 0) - (row.cache_write_tokens ?? 0));
    // One literal, one hidden class: the overview sums tens of thousands of these per call.
    return {
      seq: row.seq, ts: row.ts, route: row.route, model: row.model, provider: row.provider, cause: row.cause, est_tokens: row.est_tokens,
      status: row.status, error: row.error, error_message: row.error_message, prompt_tokens: row.prompt_tokens, cached_tokens: row.cached_tokens,
      cache_write_tokens: row.cache_write_tokens, completion_tokens: row.completion_tokens, reasoning_tokens: row.reasoning_tokens,
      dropped_blocks: row.dropped_blocks, reuse: row.reuse, cost_usd: row.cost_usd, cost_source: row.cost_source, storage_token_hours: row.storage_token_hours, storage_usd: row.storage_usd,
      ttfb_ms: row.ttfb_ms, total_ms: row.total_ms, uncached_cost_usd: uncached, savings_usd: savings, uncached_tokens: uncachedTokens,
    };
  });
}

/** The reply's tokens as plain input and output, at its route's prices (the catalogue's). */
function uncachedCost(row: RequestRow, prices: PriceBook): number | null {
  if (row.status !== 'ok' && row.status !== 'aborted') return null;
  if (row.prompt_tokens === null) return null;
  const split = costOf(prices(row.route), {
    prompt_tokens: row.prompt_tokens,
    ...(row.completion_tokens === null ? {} : { completion_tokens: row.completion_tokens }),
  });
  return split === undefined ? null : split.input + split.cache_read + split.cache_write + split.output;
}

/** Totals over rows, through `totalsOf` so that they equal `proxy stats`' own. */
export function totalsOfRows(rows: readonly PricedRow[]): Totals {
  const t = totalsOf(rows);
  let uncached = 0;
  let uncachedKnown = true;
  for (const row of rows) {
    if (row.status !== 'ok' && row.status !== 'aborted') continue;
    if (row.uncached_cost_usd === null) uncachedKnown = false;
    else uncached += row.uncached_cost_usd;
  }
  const cost = t.cost_unknown > 0 ? null : (t.cost_usd ?? 0);
  const uncachedCost = uncachedKnown ? uncached : null;
  return {
    requests: t.requests,
    prompt_tokens: t.prompt_tokens,
    cached_tokens: t.cached_tokens,
    cache_write_tokens: t.cache_write_tokens,
    completion_tokens: t.completion_tokens,
    dropped_blocks: t.dropped_blocks,
    cache_share: t.token_cache_rate,
    cost_usd: cost,
    unknown_cost_requests: t.cost_unknown,
    uncached_cost_usd: uncachedCost,
    savings_usd: cost !== null && uncachedCost !== null ? uncachedCost - cost : null,
    known_cost_usd: t.cost_usd,
    replies: t.replies,
    errors: t.errors,
    aborted: t.aborted,
  };
}
