/** The sessions list: its query (kept in the URL's hash) and its read. */
import { getJson } from '../../api.js';
import { PERIODS, type Period, type SessionsPage, type SortKey } from '../../contract.js';
import type { Dir } from '../../parts/table-parts.js';

export const PAGE_SIZE = 50;
const SORTS: readonly SortKey[] = ['last_active', 'cost', 'savings', 'requests', 'cache_share', 'prompt_tokens'];

/** The causes a session can be filtered by: every break (not a first request, not an extension). */
export const CAUSES = ['trim', 'system', 'tools', 'client_rewrite', 'model_switch', 'params', 'summary', 'provider_miss'] as const;

export interface SessionsQuery {
  period: Period;
  model: string;
  key: string;
  q: string;
  /** A break cause: sessions with a request of the period that broke for it; '' for any. */
  cause: string;
  sort: SortKey;
  dir: Dir;
  offset: number;
}

export function readQuery(query: URLSearchParams): SessionsQuery {
  const period = query.get('period');
  const sort = query.get('sort');
  const offset = Number(query.get('offset') ?? 0);
  return {
    period: PERIODS.includes(period as Period) ? (period as Period) : 'all',
    model: query.get('model') ?? '',
    key: query.get('key') ?? '',
    q: query.get('q') ?? '',
    cause: (CAUSES as readonly string[]).includes(query.get('cause') ?? '') ? query.get('cause')! : '',
    sort: SORTS.includes(sort as SortKey) ? (sort as SortKey) : 'last_active',
    dir: query.get('dir') === 'asc' ? 'asc' : 'desc',
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** The query as hash parameters, defaults left out. */
export function writeQuery(q: SessionsQuery): Record<string, string> {
  return {
    period: q.period === 'all' ? '' : q.period,
    model: q.model,
    key: q.key,
    q: q.q,
    cause: q.cause,
    sort: q.sort === 'last_active' ? '' : q.sort,
    dir: q.dir === 'desc' ? '' : q.dir,
    offset: q.offset === 0 ? '' : String(q.offset),
  };
}

export function loadSessions(q: SessionsQuery, signal: AbortSignal): Promise<SessionsPage> {
  return getJson<SessionsPage>('sessions', { ...q, limit: PAGE_SIZE }, signal);
}
