/**
 * The stats of stored sessions, for `proxy sessions`, `proxy stats` and the admin routes (which
 * answer the same JSON). The store is passed in, so this file does no I/O of its own: a LogStore
 * fits `SessionSource` as it is.
 */
import { ProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import { keyTotals, type KeyTotal } from './key-totals.js';
import type { PriceBook } from './prices.js';
import { sessionStats, type SessionStats, type SessionSummary } from './session-totals.js';

export interface SessionSource {
  listSessions(): Promise<string[]>;
  exists(id: string): Promise<boolean>;
  file(id: string): string;
  read(id: string): Promise<{ events: LogEvent[]; torn?: unknown }>;
}

/** A log that could not be read (malformed in the middle): listed with the reason, not dropped. */
export interface UnreadableSession {
  id: string;
  error: string;
}

export interface SessionsReport {
  /** Most recently active first; unreadable logs last. */
  sessions: SessionSummary[];
  /** Each client key over every session, the dearest first; empty where no request carried one. */
  keys: KeyTotal[];
  unreadable: UnreadableSession[];
}

/** Logs read at once: enough to overlap file reads, few enough for a small machine. */
const PARALLEL = 4;

export async function listSessionSummaries(source: SessionSource, prices: PriceBook): Promise<SessionsReport> {
  const ids = await source.listSessions();
  const sessions: SessionSummary[] = [];
  const unreadable: UnreadableSession[] = [];
  for (let i = 0; i < ids.length; i += PARALLEL) {
    const batch = ids.slice(i, i + PARALLEL);
    const results = await Promise.allSettled(batch.map((id) => readStats(source, id, prices)));
    results.forEach((result, j) => {
      if (result.status === 'fulfilled') sessions.push(result.value.session);
      else unreadable.push({ id: batch[j]!, error: result.reason instanceof Error ? result.reason.message : String(result.reason) });
    });
  }
  sessions.sort((a, b) => (b.last_active ?? '').localeCompare(a.last_active ?? '') || a.id.localeCompare(b.id));
  return { sessions, keys: keyTotals(sessions), unreadable };
}

/** One session's rows and totals; `session_not_found` when there is no such log. */
export async function readSessionStats(source: SessionSource, id: string, prices: PriceBook): Promise<SessionStats> {
  const file = source.file(id); // checks the id before any file is touched
  if (!(await source.exists(id))) throw new ProxyError('session_not_found', { session: id, file });
  return readStats(source, id, prices);
}

async function readStats(source: SessionSource, id: string, prices: PriceBook): Promise<SessionStats> {
  const read = await source.read(id);
  return sessionStats(id, read.events, prices, { torn: read.torn !== undefined });
}
