/**
 * Text tables for `proxy sessions` and `proxy stats`. Unknown figures print as `unknown`, never
 * as 0; a cost that misses some replies prints as a lower bound (`$0.0123+`).
 */
import type { RequestRow } from './request-rows.js';
import type { SessionsReport } from './collect.js';
import type { SessionStats, SessionSummary, Totals } from './session-totals.js';

export const UNKNOWN = 'unknown';

export function formatTokens(n: number | null): string {
  return n === null ? UNKNOWN : n.toLocaleString('en-US');
}

export function formatRate(rate: number | null): string {
  return rate === null ? UNKNOWN : `${(rate * 100).toFixed(1)}%`;
}

export function formatCost(usd: number | null, unknownReplies = 0): string {
  if (usd === null) return UNKNOWN;
  const text = `$${usd.toFixed(usd >= 100 ? 2 : 4)}`;
  return unknownReplies > 0 ? `${text}+` : text;
}

/** ISO time to the second, or `unknown`. */
export function formatTime(ts: string | null): string {
  return ts === null ? UNKNOWN : ts.replace(/\.\d+Z$/, 'Z');
}

type Align = 'left' | 'right';

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], align: readonly Align[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (align[i] === 'right' ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function renderSessions(report: SessionsReport): string {
  if (report.sessions.length === 0 && report.unreadable.length === 0) return 'no sessions';
  // Client keys only where some request carried one, and last: the columns before keep their places.
  const withKeys = report.sessions.some((s) => s.keys.length > 0);
  const header = ['id', 'model', 'requests', 'prompt tokens', 'token cache rate', 'cost', 'last active', ...(withKeys ? ['keys'] : [])];
  const rows = report.sessions.map((s: SessionSummary) => [
    s.id,
    s.models.length === 0 ? '-' : s.models.join(','),
    String(s.requests),
    formatTokens(s.prompt_tokens),
    formatRate(s.token_cache_rate),
    formatCost(s.cost_usd, s.cost_unknown),
    formatTime(s.last_active),
    ...(withKeys ? [s.keys.length === 0 ? '-' : s.keys.map((k) => `${k.name} (${k.requests}, ${formatCost(k.cost_usd, k.cost_unknown)})`).join(', ')] : []),
  ]);
  const out = [table(header, rows, ['left', 'left', 'right', 'right', 'right', 'right', 'left', 'left'])];
  if (report.keys.length > 0) {
    out.push('', 'per client key, over every session:');
    out.push(table(['key', 'sessions', 'requests', 'prompt tokens', 'cached tokens', 'token cache rate', 'cost'], report.keys.map((k) => [
      k.name, String(k.sessions), String(k.requests), formatTokens(k.prompt_tokens), formatTokens(k.cached_tokens), formatRate(k.token_cache_rate), formatCost(k.cost_usd, k.cost_unknown),
    ]), ['left', 'right', 'right', 'right', 'right', 'right', 'right']));
  }
  for (const u of report.unreadable) out.push(`${u.id}: unreadable: ${u.error}`);
  return out.join('\n');
}

export function renderStats(stats: SessionStats): string {
  const s = stats.session;
  const header = ['seq', 'model', 'cause', 'status', 'prompt', 'cached', 'written', 'reuse', 'completion', 'cost', 'ttfb ms', 'total ms'];
  const rows = stats.requests.map((r: RequestRow) => [
    String(r.seq),
    r.route,
    r.cause ?? UNKNOWN,
    r.status === 'error' ? `error ${r.error ?? ''}`.trim() : r.status,
    formatTokens(r.prompt_tokens),
    formatTokens(r.cached_tokens),
    formatTokens(r.cache_write_tokens),
    formatRate(r.reuse),
    formatTokens(r.completion_tokens),
    formatCost(r.cost_usd),
    r.ttfb_ms === null ? '-' : String(r.ttfb_ms),
    r.total_ms === null ? '-' : String(r.total_ms),
  ]);
  const align: Align[] = ['right', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'];
  return [
    `session ${s.id}${s.torn ? ' (torn last line ignored)' : ''}`,
    `models ${s.models.join(', ') || '-'}; started ${formatTime(s.started)}; last active ${formatTime(s.last_active)}`,
    '',
    stats.requests.length === 0 ? 'no requests' : table(header, rows, align),
    ...failures(stats.requests),
    '',
    renderTotals(s, stats.requests.filter((r) => (r.dropped_blocks ?? 0) > 0).map((r) => r.seq)),
  ].join('\n');
}

/** Under the table, what the upstream said of each call it refused. */
function failures(rows: readonly RequestRow[]): string[] {
  const failed = rows.filter((r) => r.status === 'error' && r.error_message !== null);
  if (failed.length === 0) return [];
  return ['', ...failed.map((r) => `seq ${r.seq}: the upstream answered ${r.error}: ${r.error_message!.replace(/\s+/g, ' ')}`)];
}

/** `droppedAt`: the requests whose reply named thinking blocks the upstream dropped. */
function renderTotals(t: Totals, droppedAt: readonly number[]): string {
  const costNote = t.cost_unknown > 0 && t.cost_usd !== null ? ` (${t.cost_unknown} replies of unknown cost not included)` : '';
  const pairs: [string, string][] = [
    ['requests', `${t.requests} (${t.replies} replies, ${t.errors} errors, ${t.aborted} aborted)`],
    ['prompt tokens', formatTokens(t.prompt_tokens)],
    ['cached tokens', formatTokens(t.cached_tokens)],
    ['cache write tokens', formatTokens(t.cache_write_tokens)],
    ['completion tokens', formatTokens(t.completion_tokens)],
    ['reasoning tokens', formatTokens(t.reasoning_tokens)],
    ['token cache rate', `${formatRate(t.token_cache_rate)}${t.token_cache_rate === null ? '' : ` (${formatTokens(t.rate_basis.cached_tokens)} of ${formatTokens(t.rate_basis.prompt_tokens)} prompt tokens over ${t.rate_basis.replies} replies)`}`],
    ['cost', `${formatCost(t.cost_usd, t.cost_unknown)}${costNote}`],
  ];
  // Only where a route made explicit context caches: their storage is part of the cost above.
  if (t.storage_token_hours !== null) {
    const usd = t.storage_usd === null ? 'cost unknown: the route has no price.cache_storage' : `${formatCost(t.storage_usd, 0)}, in the cost above`;
    pairs.push(['cache storage', `${t.storage_token_hours.toFixed(1)} token-hours (${usd})`]);
  }
  // Only where the upstream dropped some: reasoning the model did not read (docs/decisions/0009).
  if ((t.dropped_blocks ?? 0) > 0) {
    pairs.push(['thinking blocks dropped', `${t.dropped_blocks} by the upstream, bound to a prefix that changed (seq ${droppedAt.join(', ')})`]);
  }
  const width = Math.max(...pairs.map(([k]) => k.length));
  return ['Totals', ...pairs.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
}
