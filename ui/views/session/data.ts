/**
 * A session: every request (read a page at a time, the pages after the first in parallel), the
 * stacked token bars uPlot draws, and where breaks and the window's timeline marks fall.
 */
import type uPlot from 'uplot';
import { getJson } from '../../api.js';
import type { LiveRequest, RequestRow, SessionDetail, TimelineMark } from '../../contract.js';
import { isBreak } from '../../format.js';

/** Requests asked for per read (the server's own cap, 5,000): one read for most sessions; the page follows a smaller limit. */
const READ = 5000;

export async function loadSession(id: string, signal: AbortSignal): Promise<SessionDetail> {
  const path = `sessions/${encodeURIComponent(id)}`;
  const first = await getJson<SessionDetail>(path, { offset: 0, limit: READ }, signal);
  const step = first.requests.length;
  if (step === 0 || first.requests.length >= first.total_requests) return first;
  const rest: Promise<SessionDetail>[] = [];
  for (let offset = step; offset < first.total_requests; offset += step) rest.push(getJson<SessionDetail>(path, { offset, limit: step }, signal));
  const pages = await Promise.all(rest);
  const requests = [...first.requests];
  const timeline = [...first.timeline];
  const seen = new Set(timeline.map(markKey));
  for (const page of pages) {
    requests.push(...page.requests);
    for (const mark of page.timeline) if (!seen.has(markKey(mark))) { seen.add(markKey(mark)); timeline.push(mark); }
  }
  return { ...first, requests: dedupeBySeq(requests), timeline: timeline.sort((a, b) => a.seq - b.seq) };
}

function markKey(m: TimelineMark): string {
  return `${m.seq}\n${m.kind}\n${JSON.stringify(m.detail)}`;
}

function dedupeBySeq(rows: RequestRow[]): RequestRow[] {
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** A request the live stream announced, appended with its running sums if the server left them out. */
export function withLive(session: SessionDetail, live: LiveRequest): SessionDetail {
  if (session.requests.some((r) => r.seq === live.seq)) return session;
  const prev = session.requests.at(-1);
  const row: RequestRow = {
    ts: new Date().toISOString(), route: session.route ?? '', model: session.model ?? '', provider: '', cause: null, est_tokens: 0,
    status: 'ok', error: null, error_message: null, prompt_tokens: null, cached_tokens: null, cache_write_tokens: null, completion_tokens: null,
    reasoning_tokens: null, dropped_blocks: null, reuse: null, cost_usd: null, cost_source: null, storage_token_hours: null, storage_usd: null, ttfb_ms: null, total_ms: null,
    cumulative_cost_usd: null, cumulative_savings_usd: null, uncached_tokens: null,
    ...live,
  };
  const saved = (live as { savings_usd?: number | null }).savings_usd;
  if (live.cumulative_cost_usd === undefined && row.cost_usd !== null) row.cumulative_cost_usd = (prev?.cumulative_cost_usd ?? 0) + row.cost_usd;
  if (live.cumulative_savings_usd === undefined && saved !== undefined && saved !== null) row.cumulative_savings_usd = (prev?.cumulative_savings_usd ?? 0) + saved;
  return { ...session, total_requests: session.total_requests + 1, requests: [...session.requests, row] };
}

export function uncachedOf(r: RequestRow): number | null {
  if (r.uncached_tokens !== null && r.uncached_tokens !== undefined) return r.uncached_tokens;
  if (r.prompt_tokens === null) return null;
  return Math.max(0, r.prompt_tokens - (r.cached_tokens ?? 0) - (r.cache_write_tokens ?? 0));
}

/**
 * x = the request's place (1..n); then the stack's running tops, drawn tallest first so each
 * layer covers the one above it: output, uncached input, written to cache, read from cache.
 */
export function tokenBars(rows: readonly RequestRow[]): uPlot.AlignedData {
  const n = rows.length;
  const x = new Float64Array(n);
  const cached = new Array<number>(n);
  const written = new Array<number>(n);
  const uncached = new Array<number>(n);
  const output = new Array<number>(n);
  rows.forEach((r, i) => {
    x[i] = i + 1;
    cached[i] = r.cached_tokens ?? 0;
    written[i] = cached[i]! + (r.cache_write_tokens ?? 0);
    uncached[i] = written[i]! + (uncachedOf(r) ?? 0);
    output[i] = uncached[i]! + (r.completion_tokens ?? 0);
  });
  return [x as unknown as number[], output, uncached, written, cached];
}

export function cumulative(rows: readonly RequestRow[]): uPlot.AlignedData {
  return [rows.map((_, i) => i + 1), rows.map((r) => r.cumulative_cost_usd), rows.map((r) => r.cumulative_savings_usd)];
}

export interface Mark { index: number; seq: number; label: string; kind: string }

/** Requests whose cached prefix broke (not the first, not an extension), at their place in the chart. */
export function breaks(rows: readonly RequestRow[]): Mark[] {
  const out: Mark[] = [];
  rows.forEach((r, i) => { if (isBreak(r.cause)) out.push({ index: i, seq: r.seq, label: r.cause, kind: r.cause }); });
  return out;
}

/** Each timeline mark at the first request sent after it (the one it changed). */
export function timelineMarks(rows: readonly RequestRow[], timeline: readonly TimelineMark[]): Mark[] {
  const out: Mark[] = [];
  let i = 0;
  for (const mark of [...timeline].sort((a, b) => a.seq - b.seq)) {
    while (i < rows.length && rows[i]!.seq < mark.seq) i++;
    out.push({ index: Math.min(i, Math.max(rows.length - 1, 0)), seq: mark.seq, label: describe(mark), kind: mark.kind });
  }
  return out;
}

export function describe(mark: TimelineMark): string {
  const d = mark.detail;
  if (d === null || d === undefined || d === '') return mark.kind;
  if (typeof d === 'string' || typeof d === 'number') return `${mark.kind}: ${d}`;
  return `${mark.kind}: ${Object.entries(d as Record<string, unknown>).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ')}`;
}
