/**
 * The call stage: the upstream request, tried again and on the route's fallbacks while no byte of
 * the reply has come (attempts.ts), within the route's deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ProxyError } from '../../core/errors.js';
import { histogramOf } from '../../metrics/series.js';
import { OPERATION } from '../../tracing/gen-ai.js';
import { UpstreamAttempts, type Answer } from '../attempts.js';
import { deploymentHeaders } from '../deployment-headers.js';
import { summaryOf } from '../request-log.js';
import { classifyTransportError, isAbort } from '../upstream.js';
import type { build } from './build.js';
import { upstreamFailure, type Call } from './call.js';

/** Upstream error bodies are read this far: enough for any provider's JSON error, bounded against a runaway page. */
const MAX_ERROR_BYTES = 65_536;

/**
 * The upstream call, retried and sent to the route's fallbacks while no byte of the reply has come
 * (attempts.ts); undefined when the client left before it answered.
 */
export async function send(call: Call, encoded: Awaited<ReturnType<typeof build>>['encoded']): Promise<Answer | undefined> {
  const { a, deps } = call;
  call.callStarted = performance.now();
  histogramOf(deps.metrics.duration, a.labels, 'phase', 'overhead').observe((call.callStarted - call.started) / 1000);
  const summary = summaryOf(call.req);
  summary.overhead_ms = Math.round((call.callStarted - call.started) * 10) / 10;
  call.upstreamStage = call.trace.stage('upstream', `${OPERATION} ${a.route.dialect.model}`);
  call.trace.inject(call.upstreamStage, encoded.headers);
  const { upstream } = deps.config;
  const attempts = new UpstreamAttempts(
    { deployments: a.route.deployments, retries: a.route.retries, backoff: { baseMs: upstream.retryBaseMs, maxDelayMs: upstream.retryMaxDelayMs }, maxErrorBytes: MAX_ERROR_BYTES },
    {
      send: (d, signal) => {
        const headers = deploymentHeaders(encoded.headers, a.route.deployments[0]!, d, { first: a.apiKey, passThrough: a.passThroughKey }, a.dialect.authHeaders);
        return deps.upstreams.send(d.provider, d.baseUrl, { ...encoded, headers }, d.timeouts, signal);
      },
      onRetry: (reason, d) => deps.metrics.upstreamRetries.inc({ provider: d.provider, model: a.labels.model, reason }),
      random: Math.random,
      now: () => deps.now().getTime(),
      sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    },
  );
  call.attempts = attempts;
  try {
    return await attempts.call(call.abort.signal);
  } catch (err) {
    if (call.clientGone && isAbort(err)) return undefined;
    throw upstreamFailure(call, transportFailure(call, err), 'transport');
  } finally {
    call.upstreamStage?.set({ 'server.address': attempts.deployment.baseUrl, 'prefix_proxy.upstream.attempts': attempts.attempts });
    summary.attempts = attempts.attempts;
    if (attempts.deployment !== a.route.deployments[0]) summary.deployment = attempts.deployment.provider;
  }
}

/** A transport failure as the client hears it: the deadline's own code when it was the deadline that cut it. */
export function transportFailure(call: Call, err: unknown): unknown {
  const d = call.attempts?.deployment ?? call.a.route.deployments[0]!;
  if (call.deadlinePassed) return new ProxyError('upstream_deadline', { provider: d.provider, ms: call.a.route.timeouts.deadline_ms }, { cause: err });
  return classifyTransportError(err, d.provider, d.timeouts);
}
