/**
 * One request's state as it passes the pipeline's stages (docs/architecture.md 12), and the small
 * helpers every stage shares: a failure counted once, the upstream span ended once, what the log
 * says of the attempts.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Route } from '../../config/routes.js';
import type { ClientKey } from '../../config/types.js';
import { ProxyError } from '../../core/errors.js';
import type { EventOf } from '../../core/events.js';
import type { NeutralReply, Origin } from '../../core/types.js';
import type { ClientRequest, ClientStream, Dialect, InboundDialect } from '../../dialects/types.js';
import { counterOf, type RouteLabels } from '../../metrics/series.js';
import type { Incoming, Turn } from '../../session/manager.js';
import type { RequestTrace, Stage } from '../../tracing/request-trace.js';
import type { AppDeps } from '../app.js';
import type { UpstreamAttempts } from '../attempts.js';

export interface Admitted {
  inbound: InboundDialect;
  client: ClientRequest;
  route: Route;
  dialect: Dialect;
  labels: RouteLabels;
  incoming: Incoming;
  /** The client's key when keys are configured: its spend is charged. */
  key: ClientKey | undefined;
  apiKey: string | undefined;
  /** The client's bearer, passed through to a deployment that has no key of its own. */
  passThroughKey: string | undefined;
  /** The client's headers that the upstream's wire reads (`Dialect.clientHeaders`). */
  forwarded: Record<string, string>;
}

/** One request's state as it passes the stages. */
export interface Call {
  req: FastifyRequest;
  deps: AppDeps;
  a: Admitted;
  turn: Turn;
  started: number;
  /**
   * Aborts the upstream part: when the client leaves (`clientGone`) or when the route's
   * `deadline_ms` has passed since it began (`deadlinePassed`). One controller for both: a signal
   * combined per request (AbortSignal.any) cost ~1% of a request's CPU.
   */
  abort: AbortController;
  clientGone: boolean;
  deadlinePassed: boolean;
  attempts?: UpstreamAttempts;
  /** What a streamed client had received when the upstream failed after its first byte. */
  partial?: NeutralReply;
  /** Prompt tokens of the session's previous reply, read before this one replaces it. */
  previousPrompt: number | undefined;
  origin: Origin;
  reqEvent?: EventOf<'llm.req'>;
  /** Set once the outcome (reply or error) is in the log. */
  logged: boolean;
  callStarted?: number;
  raw?: ServerResponse;
  stream?: ClientStream;
  trace: RequestTrace;
  /** The upstream call's span (every attempt), from send until the reply is read or fails. */
  upstreamStage?: Stage;
}

/** An upstream failure already counted in proxy_upstream_errors_total. */
export class CountedFailure {
  constructor(readonly error: unknown) {}
}

/** Count an upstream failure once, as it is classified. */
export function upstreamFailure(call: Call, failure: unknown, fallback: string): CountedFailure {
  const status = failure instanceof ProxyError ? failure.code : fallback;
  counterOf(call.deps.metrics.upstreamErrors, call.a.labels, 'status', status).inc();
  return new CountedFailure(failure);
}

/** The upstream span ends once: when the reply is read, or at the failure that stopped it. */
export function endUpstream(call: Call, error?: unknown): void {
  call.upstreamStage?.end(error);
  call.upstreamStage = undefined;
}

/** What the log says of the attempts: their number when more than one, the deployment when a fallback's. */
export function attemptFields(call: Call): { attempts?: number; deployment?: string } {
  const at = call.attempts;
  if (at === undefined) return {};
  return {
    ...(at.attempts > 1 ? { attempts: at.attempts } : {}),
    ...(at.deployment !== call.a.route.deployments[0] ? { deployment: at.deployment.provider } : {}),
  };
}

export function timings(callStarted: number, firstByte: number | undefined) {
  const now = performance.now();
  return { ...(firstByte === undefined ? {} : { ttfb_ms: Math.round(firstByte - callStarted) }), total_ms: Math.round(now - callStarted) };
}
