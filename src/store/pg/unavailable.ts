/**
 * A database that cannot be reached is the operator's outage, not a bug: the request hears a 503
 * it may retry (`store_unavailable`), never a 500 or a hang (docs/scaling.md, Outages). These are
 * the driver's and the server's ways of saying so: a socket refused, reset or timed out, a
 * connection ended under a query, the server shutting down or starting up (SQLSTATE classes 08 and
 * 57P), the pool's connect timeout.
 */
import { isProxyError, ProxyError } from '../../core/errors.js';

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const MESSAGES = [/connection terminated/i, /timeout exceeded when trying to connect/i, /not queryable/i, /query read timeout/i, /connection ended/i];

export function isUnavailable(err: unknown): boolean {
  if (isProxyError(err)) return err.code === 'store_unavailable';
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (SOCKET_CODES.has(code) || code.startsWith('08') || code.startsWith('57P')) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return MESSAGES.some((re) => re.test(message));
}

/** `err` as `store_unavailable` when it says the database cannot be reached; else unchanged. */
export function asUnavailable(err: unknown): unknown {
  if (!isUnavailable(err) || isProxyError(err)) return err;
  const e = err as { code?: string; message?: string };
  const detail = [e.code, e.message].filter((x) => x !== undefined && x !== '').join(': ');
  return new ProxyError('store_unavailable', { detail: detail === '' ? 'connection lost' : detail }, { headers: { 'retry-after': '1' } });
}

/** Runs `fn`, its failure to reach the database turned into `store_unavailable`. */
export async function reaching<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asUnavailable(err);
  }
}
