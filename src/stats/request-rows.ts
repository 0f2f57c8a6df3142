/**
 * One row per model request of a session, folded from its log: what the provider reported, how
 * much of the predecessor's prompt it read back, why the prefix broke, and what it cost. A figure
 * the provider did not report is `null` (unknown), never 0: a reported 0 stays 0.
 */
import { ownFrom, type BreakCause, type EventOf, type LogEvent } from '../core/events.js';
import type { Usage } from '../core/types.js';
import { storageCostOf, totalCost, type CostSource } from '../pricing/cost.js';
import { storageByCreator } from './cache-storage.js';
import { upstreamMessage } from './upstream-message.js';
import type { PriceBook } from './prices.js';

export type RequestStatus = 'ok' | 'aborted' | 'error' | 'pending';

export interface RequestRow {
  /** Seq of the `llm.req` event. */
  seq: number;
  ts: string;
  /** The route (config model name, or `provider/model`): the metrics' `model` label. */
  route: string;
  /** Upstream model id. */
  model: string;
  provider: string;
  /** Why the prefix differed from the predecessor's, as logged; null in logs that did not record it. */
  cause: BreakCause | null;
  est_tokens: number;
  status: RequestStatus;
  /** For `error`: the upstream status, or the transport error's text. */
  error: string | null;
  /** For `error` with an upstream answer: what its body says (upstream-message.ts). */
  error_message: string | null;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  completion_tokens: number | null;
  reasoning_tokens: number | null;
  /**
   * Signed thinking blocks of the request the upstream dropped as bound to a prefix that changed
   * (Anthropic's `input_transformations`, docs/decisions/0009); 0 when the reply named none, null
   * until there is a reply.
   */
  dropped_blocks: number | null;
  /**
   * Cached tokens over the predecessor's prompt tokens (the predecessor: the session's previous
   * completed reply, as the live proxy counts it). Not capped: above 1 the provider read more than
   * the predecessor's prompt.
   */
  reuse: number | null;
  /**
   * Tokens in, tokens out, and the storage of the explicit context cache this request made
   * (`storage_usd`); null when unknown, which a held cache without a storage price makes it.
   */
  cost_usd: number | null;
  cost_source: CostSource | null;
  /** Token-hours the explicit context cache this request made was held (cache-storage.ts); null: it made none. */
  storage_token_hours: number | null;
  /** Their cost at the route's `price.cache_storage`; null when it made none or has no such price. */
  storage_usd: number | null;
  ttfb_ms: number | null;
  total_ms: number | null;
}

/** The request rows of one session's events, in log order. */
export function requestRows(events: readonly LogEvent[], prices: PriceBook): RequestRow[] {
  const rows: RequestRow[] = [];
  const bySeq = new Map<number, RequestRow>();
  let previousPrompt: number | undefined;
  // A fork's log opens with its parent's events, up to where it diverged: those requests are the
  // parent's, counted there, so they only set the predecessor here.
  const inherited = ownFrom(events[0]);
  for (const event of events) {
    if (event.seq < inherited) {
      if (event.type === 'llm.resp' && event.aborted !== true) previousPrompt = event.reply.usage?.prompt_tokens;
      continue;
    }
    if (event.type === 'llm.req') {
      const row = newRow(event);
      rows.push(row);
      bySeq.set(event.seq, row);
    } else if (event.type === 'llm.resp') {
      const row = bySeq.get(event.req);
      if (row === undefined) continue; // its request is before the part of the log that was read
      applyReply(row, event, previousPrompt, prices);
      // The live proxy's predecessor is the last reply it relayed in full (src/proxy/pipeline/).
      if (event.aborted !== true) previousPrompt = event.reply.usage?.prompt_tokens;
    } else if (event.type === 'llm.error') {
      const row = bySeq.get(event.req);
      if (row === undefined) continue;
      row.status = 'error';
      row.error = event.status !== undefined ? String(event.status) : (event.error ?? 'unknown error');
      row.error_message = event.body === undefined ? null : upstreamMessage(event.body);
    }
  }
  for (const [seq, tokenHours] of storageByCreator(events, inherited)) {
    const row = bySeq.get(seq);
    if (row !== undefined) applyStorage(row, tokenHours, prices);
  }
  return rows;
}

function applyStorage(row: RequestRow, tokenHours: number, prices: PriceBook): void {
  row.storage_token_hours = tokenHours;
  const usd = storageCostOf(prices(row.route), tokenHours);
  row.storage_usd = usd ?? null;
  if (usd === undefined) row.cost_usd = null;
  else if (row.cost_usd !== null) row.cost_usd += usd;
}

function newRow(event: EventOf<'llm.req'>): RequestRow {
  return {
    seq: event.seq,
    ts: event.ts,
    route: event.route,
    model: event.model,
    provider: event.origin.provider,
    cause: event.cause ?? null,
    est_tokens: event.est_tokens,
    status: 'pending',
    error: null,
    error_message: null,
    prompt_tokens: null,
    cached_tokens: null,
    cache_write_tokens: null,
    completion_tokens: null,
    reasoning_tokens: null,
    dropped_blocks: null,
    reuse: null,
    cost_usd: null,
    cost_source: null,
    storage_token_hours: null,
    storage_usd: null,
    ttfb_ms: null,
    total_ms: null,
  };
}

function applyReply(row: RequestRow, event: EventOf<'llm.resp'>, previousPrompt: number | undefined, prices: PriceBook): void {
  const u: Usage | undefined = event.reply.usage;
  row.status = event.aborted === true ? 'aborted' : 'ok';
  if (event.provider_miss === true) row.cause = 'provider_miss';
  row.prompt_tokens = u?.prompt_tokens ?? null;
  row.cached_tokens = u?.cached_tokens ?? null;
  row.cache_write_tokens = u?.cache_write_tokens ?? null;
  row.completion_tokens = u?.completion_tokens ?? null;
  row.reasoning_tokens = u?.reasoning_tokens ?? null;
  row.dropped_blocks = event.reply.dropped_blocks ?? 0;
  if (u?.cached_tokens !== undefined && previousPrompt !== undefined && previousPrompt > 0) {
    row.reuse = u.cached_tokens / previousPrompt;
  }
  const cost = totalCost(prices(row.route), u);
  if (cost !== undefined) {
    row.cost_usd = cost.usd;
    row.cost_source = cost.source;
  }
  row.ttfb_ms = event.timings.ttfb_ms ?? null;
  row.total_ms = event.timings.total_ms;
}
