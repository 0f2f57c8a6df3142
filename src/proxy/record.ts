/**
 * A reply's usage into the metrics: tokens, cost at the route's prices (the provider's own
 * reported cost preferred), and prefix reuse against the predecessor's prompt. Unknown usage
 * records nothing: it is not zero.
 */
import type { Route } from '../config/routes.js';
import type { NeutralReply } from '../core/types.js';
import type { Metrics } from '../metrics/registry.js';
import { counterOf, histogramOf, routeLabels, type RouteLabels } from '../metrics/series.js';
import { costOf, storageCostOf } from '../pricing/cost.js';

export function recordReply(
  metrics: Metrics,
  labels: RouteLabels,
  route: Pick<Route, 'price'>,
  reply: NeutralReply,
  previousPrompt: number | undefined,
): void {
  if (reply.dropped_blocks !== undefined) counterOf(metrics.droppedBlocks, labels).inc(reply.dropped_blocks);
  const u = reply.usage;
  if (u === undefined) return;
  if (u.prompt_tokens !== undefined) counterOf(metrics.promptTokens, labels).inc(u.prompt_tokens);
  if (u.cached_tokens !== undefined) counterOf(metrics.cachedPromptTokens, labels).inc(u.cached_tokens);
  if (u.cache_write_tokens !== undefined) counterOf(metrics.cacheWriteTokens, labels).inc(u.cache_write_tokens);
  if (u.completion_tokens !== undefined) counterOf(metrics.completionTokens, labels).inc(u.completion_tokens);
  if (u.reasoning_tokens !== undefined) counterOf(metrics.reasoningTokens, labels).inc(u.reasoning_tokens);
  if (u.prompt_eval_ms !== undefined) histogramOf(metrics.promptEvalSeconds, labels).observe(u.prompt_eval_ms / 1000);
  if (u.cached_tokens !== undefined && previousPrompt !== undefined && previousPrompt > 0) {
    histogramOf(metrics.prefixReuse, labels).observe(Math.min(1, u.cached_tokens / previousPrompt));
  }
  const split = costOf(route.price, u);
  if (split !== undefined) {
    const total = split.input + split.cache_read + split.cache_write + split.output;
    // The provider's own figure wins; the split keeps the priced proportions.
    const scale = u.cost_usd !== undefined && total > 0 ? u.cost_usd / total : 1;
    for (const kind of ['input', 'cache_read', 'cache_write', 'output'] as const) {
      if (split[kind] > 0) counterOf(metrics.cost, labels, 'kind', kind).inc(split[kind] * scale);
    }
  } else if (u.cost_usd !== undefined && u.cost_usd > 0) {
    counterOf(metrics.cost, labels, 'kind', 'input').inc(u.cost_usd);
  }
}

/**
 * The prefix held (the request extends its predecessor) but the provider read fewer cached
 * tokens than the predecessor's prompt allows: expiry, eviction or a cold replica. Providers
 * cache in blocks (128 tokens at OpenAI), so up to two blocks short still counts as a hit.
 * Unknown usage is never a miss.
 */
/**
 * An explicit context cache ended (src/proxy/gemini-caches.ts): the token-hours it was held, and
 * their cost as `kind="cache_storage"` when the route has a storage price.
 */
export function recordStorage(metrics: Metrics, route: Pick<Route, 'price' | 'provider' | 'label'>, tokenHours: number): void {
  const labels = routeLabels(route);
  counterOf(metrics.cacheStorage, labels).inc(tokenHours);
  const usd = storageCostOf(route.price, tokenHours);
  if (usd !== undefined && usd > 0) counterOf(metrics.cost, labels, 'kind', 'cache_storage').inc(usd);
}

export function isProviderMiss(cause: string | undefined, cached: number | undefined, previousPrompt: number | undefined): boolean {
  if (cause !== 'none' || cached === undefined || previousPrompt === undefined || previousPrompt < 1024) return false;
  return cached < previousPrompt - 256;
}
