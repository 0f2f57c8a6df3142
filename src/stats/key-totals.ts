/**
 * Each client key's use over every session (`proxy sessions`, `/admin/sessions`): what a team
 * gateway's operator asks first, who spent what and whose agent reads its cache. The token cache
 * rate is sum over sum (docs/decisions/0113-token-cache-rate-is-sum-over-sum.md) over the key's
 * replies that reported a cache read, whichever session they are in. Pure.
 */
import type { KeyUsage, SessionSummary } from './session-totals.js';

export interface KeyTotal {
  name: string;
  /** Sessions with at least one request under the key. */
  sessions: number;
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  completion_tokens: number | null;
  token_cache_rate: number | null;
  rate_basis: KeyUsage['rate_basis'];
  cost_usd: number | null;
  cost_unknown: number;
}

/** One entry per key name, the dearest first (unknown costs last), then by name. */
export function keyTotals(sessions: readonly SessionSummary[]): KeyTotal[] {
  const byName = new Map<string, KeyTotal>();
  for (const session of sessions) {
    for (const k of session.keys) {
      const t = byName.get(k.name) ?? {
        name: k.name, sessions: 0, requests: 0, prompt_tokens: null, cached_tokens: null, completion_tokens: null,
        token_cache_rate: null, rate_basis: { replies: 0, prompt_tokens: 0, cached_tokens: 0 }, cost_usd: null, cost_unknown: 0,
      };
      byName.set(k.name, t);
      t.sessions++;
      t.requests += k.requests;
      t.prompt_tokens = add(t.prompt_tokens, k.prompt_tokens);
      t.cached_tokens = add(t.cached_tokens, k.cached_tokens);
      t.completion_tokens = add(t.completion_tokens, k.completion_tokens);
      t.rate_basis = {
        replies: t.rate_basis.replies + k.rate_basis.replies,
        prompt_tokens: t.rate_basis.prompt_tokens + k.rate_basis.prompt_tokens,
        cached_tokens: t.rate_basis.cached_tokens + k.rate_basis.cached_tokens,
      };
      t.cost_usd = add(t.cost_usd, k.cost_usd);
      t.cost_unknown += k.cost_unknown;
    }
  }
  const out = [...byName.values()];
  for (const t of out) t.token_cache_rate = t.rate_basis.prompt_tokens > 0 ? t.rate_basis.cached_tokens / t.rate_basis.prompt_tokens : null;
  return out.sort((a, b) => (b.cost_usd ?? -1) - (a.cost_usd ?? -1) || a.name.localeCompare(b.name));
}

/** A sum where null is "none known": null only while both are. */
function add(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : a + b;
}
