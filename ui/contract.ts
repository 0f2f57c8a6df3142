/**
 * The inspector's JSON API as the page reads it (issue 28; served by src/inspector). Only types:
 * the tests import them too. A figure the provider did not report is null: shown as unknown.
 */
export type Period = '1h' | '24h' | '7d' | 'all';
export const PERIODS: readonly Period[] = ['1h', '24h', '7d', 'all'];

export interface Totals {
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  completion_tokens: number | null;
  /** Signed thinking blocks the upstream dropped as bound to a prefix that changed; null: no reply. */
  dropped_blocks: number | null;
  /** Cached over prompt tokens, 0..1; null: unknown. */
  cache_share: number | null;
  /** null: unknown (never shown as 0). */
  cost_usd: number | null;
  unknown_cost_requests: number;
  uncached_cost_usd: number | null;
  savings_usd: number | null;
}

export interface Overview {
  period: Period;
  from: string | null;
  to: string | null;
  totals: Totals;
  causes: { cause: string; requests: number }[];
  by_route: (Totals & { route: string; model: string })[];
  by_key: (Totals & { key: string })[];
  series: { t: string | number; requests: number; cost_usd: number | null; cache_share: number | null }[];
  /** Sessions whose log cannot be read: left out of every figure above. */
  unreadable_sessions: number;
  /** The client keys with a budget or a rate, and what each spent in its current window. */
  budgets: KeyBudget[];
}

/** src/inspector/budgets.ts KeyBudget. */
export interface KeyBudget {
  key: string;
  source: 'config' | 'stored';
  budget_usd: number | null;
  budget_period: 'day' | 'month' | 'total';
  spent_usd: number;
  resets_at: string | null;
  requests_per_minute: number | null;
}

export type SortKey = 'last_active' | 'cost' | 'savings' | 'requests' | 'cache_share' | 'prompt_tokens';
export type SideKind = 'compaction' | 'title';
export interface ParentRef { session: string; seq: number }

export interface SessionItem {
  id: string;
  client: string | null;
  route: string | null;
  model: string | null;
  key: string | null;
  requests: number;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_share: number | null;
  cost_usd: number | null;
  savings_usd: number | null;
  last_active: string | null;
  /** When a request continuing it starts a new session instead (last activity + locate_days); null: never. */
  continued_until: string | null;
  parent: ParentRef | null;
  side: SideKind | null;
}

export interface Page<T> { total: number; offset: number; limit: number; items: T[] }

/** A session whose log cannot be read, and why (the error `proxy sessions` prints for it). */
export interface Unreadable { id: string; error: string }

/** `GET /api/sessions`: a page of sessions, and every session left out of it as unreadable (the first 50 named). */
export interface SessionsPage extends Page<SessionItem> { unreadable: { total: number; items: Unreadable[] } }

/** One request of a session: src/stats/request-rows.ts RequestRow and its running sums. */
export interface RequestRow {
  seq: number;
  ts: string;
  route: string;
  model: string;
  provider: string;
  cause: string | null;
  est_tokens: number;
  status: string;
  error: string | null;
  /** What the upstream's error body said. */
  error_message: string | null;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  cache_write_tokens: number | null;
  completion_tokens: number | null;
  reasoning_tokens: number | null;
  /** Thinking blocks of this request the upstream dropped (docs/decisions/0009); null until its reply. */
  dropped_blocks: number | null;
  reuse: number | null;
  cost_usd: number | null;
  cost_source: string | null;
  storage_token_hours: number | null;
  storage_usd: number | null;
  ttfb_ms: number | null;
  total_ms: number | null;
  cumulative_cost_usd: number | null;
  cumulative_savings_usd: number | null;
  uncached_tokens: number | null;
}

/** A request's own row, as the session page has it but without the running sums, and its cost uncached. */
export type RequestFigures = Omit<RequestRow, 'cumulative_cost_usd' | 'cumulative_savings_usd'> & { uncached_cost_usd: number | null; savings_usd: number | null };

export type TimelineKind = 'elide' | 'fold' | 'cap' | 'summary' | 'rewrite' | 'side' | 'fork';
export interface TimelineMark { seq: number; kind: TimelineKind; detail: unknown }

export interface SessionDetail {
  id: string;
  client: string | null;
  route: string | null;
  model: string | null;
  key: string | null;
  parent: ParentRef | null;
  side: SideKind | null;
  children: { id: string; kind: 'fork' | 'side'; seq: number }[];
  totals: Totals;
  total_requests: number;
  offset: number;
  limit: number;
  requests: RequestRow[];
  timeline: TimelineMark[];
  continued_until: string | null;
}

export interface UpstreamMessage { role: string; content: unknown; [field: string]: unknown }

export interface RequestDetail {
  seq: number;
  route: string;
  model: string;
  wire: string;
  digest: { logged: string | null; rebuilt: string | null; verified: boolean; problem?: string };
  upstream: { model: string; messages: UpstreamMessage[]; params?: Record<string, unknown>; tools?: unknown[] };
  hints: Hints;
  reasoning_back: ReasoningBack[];
  /** How many of those blocks the upstream dropped as bound to a prefix that changed; null until the reply. */
  dropped_blocks: number | null;
  diff: FirstDifference | null;
  /** As `proxy diff` prints it: first, none, trim, ...; and the predecessor's seq. */
  cause?: string;
  previous?: number | null;
  figures: RequestFigures;
  /** Where the call failed: the upstream's status and its own words, or the transport's error. */
  failure: { status: number | null; message: string | null; error: string | null; attempts: number | null } | null;
}

/** The hints the request's `llm.req` recorded (src/core/events.ts, HintsRecord), and two the API derives from them. */
export interface Hints {
  session_key?: boolean;
  headers?: string[];
  cache_control?: string;
  breakpoints?: number;
  prompt_cache?: { mode: string; marks: number[] };
  gemini_cache?: { name: string; messages: number; tokens: number; created?: true; kept_until?: string };
  cache_key_sent?: boolean;
  affinity_headers?: string[];
  [other: string]: unknown;
}

/** An assistant message of the rebuilt request that carries reasoning given back to the model. */
export interface ReasoningBack { index: number; thinking_chars: number; blocks: { kind: string; origin: string }[] }

export interface FirstDifference {
  /** `model`, `tools`, `params`, `messages` or `messages[i].<key>` (what `proxy diff` names). */
  path: string;
  cause: string;
  /** The field's value in the predecessor and in this request, as text; null where absent. */
  before: unknown;
  after: unknown;
  /** Where the two texts first part: character offset and 1-based line, and the lines around it. */
  context: { at?: number; line?: number; before?: string[]; after?: string[] } | string | null;
  /** The message index; -1 for model, tools and params. */
  index?: number;
  truncated?: boolean;
}

/** The live stream's `request` event. */
export interface LiveRequest extends Partial<RequestRow> { session: string; seq: number }
