/**
 * Upstream calls: one undici Pool per origin, kept alive; connect, headers and body timeouts as
 * separate error codes; the call aborted when the client goes away. No fetch, no web streams on
 * the request path (docs/architecture.md 12).
 */
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { ProxyError } from '../core/errors.js';
import type { EncodedRequest } from '../core/route.js';

export interface Timeouts {
  connect_ms: number;
  headers_ms: number;
  body_ms: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connect_ms: 10_000, headers_ms: 300_000, body_ms: 300_000 };

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

export class Upstreams {
  readonly #pools = new Map<string, Pool>();

  async send(provider: string, baseUrl: string, req: EncodedRequest, timeouts: Timeouts, signal: AbortSignal): Promise<UpstreamResponse> {
    const url = new URL(baseUrl.replace(/\/+$/, '') + req.path);
    const pool = this.#pool(url.origin, timeouts.connect_ms);
    try {
      const res = await pool.request({
        method: 'POST',
        path: url.pathname + url.search,
        headers: req.headers,
        body: req.body,
        signal,
        headersTimeout: timeouts.headers_ms,
        bodyTimeout: timeouts.body_ms,
      });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw classifyTransportError(err, provider, timeouts);
    }
  }

  #pool(origin: string, connectMs: number): Pool {
    let pool = this.#pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, { connections: 128, connect: { timeout: connectMs }, keepAliveTimeout: 30_000 });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((p) => p.close().catch(() => undefined)));
    this.#pools.clear();
  }
}

/** The one place that turns a transport failure into a ProxyError. */
export function classifyTransportError(err: unknown, provider: string, timeouts: Timeouts): unknown {
  if (err instanceof ProxyError) return err;
  if (err instanceof undiciErrors.ConnectTimeoutError) return new ProxyError('upstream_connect_timeout', { provider, ms: timeouts.connect_ms }, { cause: err });
  if (err instanceof undiciErrors.HeadersTimeoutError) return new ProxyError('upstream_headers_timeout', { provider, ms: timeouts.headers_ms }, { cause: err });
  if (err instanceof undiciErrors.BodyTimeoutError) return new ProxyError('upstream_body_timeout', { provider, ms: timeouts.body_ms }, { cause: err });
  if (isAbort(err)) return err;
  const detail = err instanceof Error ? `${(err as NodeJS.ErrnoException).code ?? err.name}: ${err.message}` : String(err);
  return new ProxyError('upstream_unreachable', { provider, detail }, { cause: err });
}

export function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err instanceof undiciErrors.RequestAbortedError);
}
