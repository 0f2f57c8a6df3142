/**
 * One structured line per conversation request for the operator (pino, `[log] level`): where it
 * went, how it ended, what it cost the cache, how long each phase took. Never a body, a message
 * or a credential: the session id is the proxy's own, the rest are counts, names and times.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { BreakCause } from '../core/events.js';
import type { Usage } from '../core/types.js';

export interface RequestSummary {
  /** The client key's name (`[auth] keys`). */
  client?: string;
  session?: string;
  route?: string;
  provider?: string;
  stream?: boolean;
  cause?: BreakCause;
  prompt_tokens?: number;
  cached_tokens?: number;
  completion_tokens?: number;
  overhead_ms?: number;
  ttft_ms?: number;
  /** Upstream calls made (retries and fallbacks included); absent when none was. */
  attempts?: number;
  /** The provider that answered or failed last, when it was a fallback of the route's own. */
  deployment?: string;
  /** Answered from the log (a client's retry): no upstream call. */
  from_log?: true;
  /** The code of the error the request ended with. */
  error?: string;
  /** Client fields left out because the upstream model refuses them (docs/wires.md). */
  dropped?: string[];
}

/** What the pipeline learnt of each request, for the line written when its response is done. */
export const summaries = new WeakMap<FastifyRequest, RequestSummary>();

export function summaryOf(req: FastifyRequest): RequestSummary {
  let s = summaries.get(req);
  if (s === undefined) {
    s = {};
    summaries.set(req, s);
  }
  return s;
}

export function addUsage(s: RequestSummary, usage: Usage | undefined): void {
  if (usage?.prompt_tokens !== undefined) s.prompt_tokens = usage.prompt_tokens;
  if (usage?.cached_tokens !== undefined) s.cached_tokens = usage.cached_tokens;
  if (usage?.completion_tokens !== undefined) s.completion_tokens = usage.completion_tokens;
}

export function writeLine(log: FastifyBaseLogger, req: FastifyRequest, status: number, totalMs: number): void {
  const s = summaries.get(req) ?? {};
  const line = { method: req.method, path: req.routeOptions.url, status, total_ms: Math.round(totalMs * 10) / 10, ...s };
  if (status >= 500) log.error(line, 'request');
  else log.info(line, 'request');
}
