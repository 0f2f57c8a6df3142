/**
 * Every metric the proxy exports (docs/architecture.md section 8), in one registry. Label values are bounded:
 * providers and routes come from config, statuses and causes from fixed sets; never a session id
 * or a raw model string a client made up.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'provider' | 'model' | 'status'>;
  promptTokens: Counter<'provider' | 'model'>;
  cachedPromptTokens: Counter<'provider' | 'model'>;
  cacheWriteTokens: Counter<'provider' | 'model'>;
  completionTokens: Counter<'provider' | 'model'>;
  reasoningTokens: Counter<'provider' | 'model'>;
  cacheBreaks: Counter<'provider' | 'model' | 'cause'>;
  prefixReuse: Histogram<'provider' | 'model'>;
  windowTrims: Counter<'provider' | 'model'>;
  duration: Histogram<'provider' | 'model' | 'phase'>;
  cost: Counter<'provider' | 'model' | 'kind'>;
  /** What cache reads saved against the input price (savings.ts); needs the route's prices. */
  costSaved: Counter<'provider' | 'model'>;
  /** Signed reasoning blocks the upstream said it dropped as invalid (docs/decisions/0009). */
  droppedBlocks: Counter<'provider' | 'model'>;
  /** Token-hours of explicit context caches held, counted when each entry ends. */
  cacheStorage: Counter<'provider' | 'model'>;
  /** Each priced route's prices and their source (prices.ts). */
  modelPrice: Gauge<'provider' | 'model' | 'kind' | 'source'>;
  activeSessions: Gauge;
  upstreamErrors: Counter<'provider' | 'model' | 'status'>;
  promptEvalSeconds: Histogram<'provider' | 'model'>;
  retriesAnswered: Counter<'provider' | 'model'>;
  upstreamRetries: Counter<'provider' | 'model' | 'reason'>;
  /** Client keys' names come from config: a bounded label. */
  clientSpend: Counter<'client'>;
  clientRefused: Counter<'client' | 'reason'>;
  /** Kinds are the redaction rules' own names (src/log/redact-rules.ts): a bounded label. */
  redactions: Counter<'kind'>;
}

export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry });
  const pm = ['provider', 'model'] as const;
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    requests: counter('proxy_requests_total', 'Requests answered, by final HTTP status.', [...pm, 'status']),
    promptTokens: counter('proxy_prompt_tokens_total', 'Prompt tokens the upstream reported (cached and cache-written included).', pm),
    cachedPromptTokens: counter('proxy_cached_prompt_tokens_total', 'Prompt tokens read from the provider cache.', pm),
    cacheWriteTokens: counter('proxy_cache_write_tokens_total', 'Prompt tokens written to the provider cache.', pm),
    completionTokens: counter('proxy_completion_tokens_total', 'Completion tokens the upstream reported.', pm),
    reasoningTokens: counter('proxy_reasoning_tokens_total', 'Reasoning tokens the upstream reported.', pm),
    cacheBreaks: counter('proxy_cache_breaks_total', 'Requests by why their prefix differed from the predecessor (none: it did not).', [...pm, 'cause']),
    prefixReuse: new Histogram({
      name: 'proxy_prefix_reuse_ratio', help: 'Cached tokens over the predecessor request\'s prompt tokens.',
      labelNames: pm, buckets: [0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 1], registers: [registry],
    }),
    windowTrims: counter('proxy_window_trims_total', 'Requests on which the window crossed high water and trimmed.', pm),
    duration: new Histogram({
      name: 'proxy_request_duration_seconds', help: 'overhead: inside the proxy before the upstream call; ttft: to the first upstream byte; total.',
      labelNames: [...pm, 'phase'], buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers: [registry],
    }),
    cost: counter('proxy_cost_usd_total', 'Cost in USD at the configured prices (or as the provider reported it).', [...pm, 'kind']),
    droppedBlocks: counter('proxy_reasoning_blocks_dropped_total', 'Signed thinking blocks the upstream dropped as invalid after a trim or summary edited their prefix (Anthropic drop_block).', pm),
    cacheStorage: counter('proxy_cache_storage_token_hours_total', 'Token-hours explicit context caches (Gemini cachedContents) were held, counted when each entry ends; their cost is proxy_cost_usd_total{kind="cache_storage"}.', pm),
    costSaved: counter('proxy_cost_saved_usd_total', 'USD saved by cache reads at the configured prices: cached tokens x (input - cache_read price).', pm),
    modelPrice: new Gauge({
      name: 'proxy_model_price_usd_per_million', help: 'A route\'s price per million tokens by kind, and its source: config or catalogue.',
      labelNames: [...pm, 'kind', 'source'], registers: [registry],
    }),
    activeSessions: new Gauge({ name: 'proxy_active_sessions', help: 'Sessions held in memory.', registers: [registry] }),
    upstreamErrors: counter('proxy_upstream_errors_total', 'Upstream failures by status (or transport error code).', [...pm, 'status']),
    promptEvalSeconds: new Histogram({
      name: 'proxy_prompt_eval_seconds', help: 'Prompt evaluation time the upstream reported (Ollama).',
      labelNames: pm, buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60], registers: [registry],
    }),
    upstreamRetries: counter('proxy_upstream_retries_total', 'Upstream calls tried again (or on a fallback) after a failure before the first byte, by the failed deployment and why it failed.', [...pm, 'reason']),
    retriesAnswered: counter('proxy_retries_answered_total', 'Client retries of a request the log had answered, answered from the log without an upstream call.', pm),
    clientSpend: counter('proxy_client_spend_usd_total', 'USD each client key spent, at the routes\' prices (or as the provider reported it), counted against its budget.', ['client']),
    clientRefused: counter('proxy_client_refused_total', 'Requests refused with a 429 by client key: reason budget (over its budget_usd) or rate (over its requests_per_minute).', ['client', 'reason']),
    redactions: counter('proxy_redactions_total', 'Credentials replaced in what the log wrote, by kind (the redaction rule that found them).', ['kind']),
  };
}
