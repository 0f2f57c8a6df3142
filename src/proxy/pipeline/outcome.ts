/**
 * How a request ends in the log: the reply recorded durably before the answer's last byte (with
 * its metrics and the client's spend), a client that left recorded as aborted, and the one
 * failure path (`fail`).
 */
import { ProxyError } from '../../core/errors.js';
import type { NeutralReply } from '../../core/types.js';
import { redactDeep } from '../../log/redact.js';
import { recordPrices } from '../../metrics/prices.js';
import { recordCacheSaving } from '../../metrics/savings.js';
import { counterOf, histogramOf } from '../../metrics/series.js';
import { contentAttributes, prefixAttributes, usageAttributes } from '../../tracing/gen-ai.js';
import { isProviderMiss, recordReply } from '../record.js';
import { addUsage, summaries } from '../request-log.js';
import { attemptFields, CountedFailure, endUpstream, timings, type Call } from './call.js';

/** The reply into the log (durably) and the metrics. */
export async function recordAnswer(call: Call, final: NeutralReply, firstByte: number | undefined): Promise<void> {
  const { a, deps, turn } = call;
  const cause = call.reqEvent!.cause;
  const providerMiss = isProviderMiss(cause, final.usage?.cached_tokens, call.previousPrompt);
  const summary = summaries.get(call.req);
  if (summary !== undefined) {
    addUsage(summary, final.usage);
    if (firstByte !== undefined) summary.ttft_ms = Math.round((firstByte - call.callStarted!) * 10) / 10;
  }
  turn.append({
    type: 'llm.resp', req: call.reqEvent!.seq, reply: final, origin: call.origin, timings: timings(call.callStarted!, firstByte),
    ...(providerMiss ? { provider_miss: true as const } : {}), ...attemptFields(call),
  });
  call.logged = true;
  // The reply, its cost on a ledger the replicas share, and the end of the turn's claim: on the
  // database, one commit (decision 0008); on files, the log's sync.
  const charge = deps.limits?.sharedCharge(a.key, a.route, final.usage);
  const sync = call.trace.stage('log.sync');
  await turn.session.log.endTurn(charge).catch((err: unknown) => {
    sync.end(err);
    throw err;
  });
  sync.end();
  call.trace.set({ ...usageAttributes(final.usage, final.finish_reason), ...prefixAttributes(cause, final.usage?.cached_tokens, call.previousPrompt) });
  if (call.trace.captureContent) call.trace.set(contentAttributes(redactDeep(a.client.messages).value, redactDeep({ content: final.content, tool_calls: final.tool_calls }).value));
  await deps.limits?.charge(a.key, a.route, final.usage, charge !== undefined);
  recordReply(deps.metrics, a.labels, a.route, final, call.previousPrompt);
  recordCacheSaving(deps.metrics, a.labels, a.route, final.usage);
  if (a.route.price !== undefined) recordPrices(deps.metrics, a.labels, a.route.figures.prices);
  counterOf(deps.metrics.cacheBreaks, a.labels, 'cause', providerMiss ? 'provider_miss' : (cause ?? 'none')).inc();
  counterOf(deps.metrics.requests, a.labels, 'status', '200').inc();
  histogramOf(deps.metrics.duration, a.labels, 'phase', 'total').observe((performance.now() - call.started) / 1000);
  deps.live?.answered(turn.session.id);
}

/**
 * The one failure path. A request whose `llm.req` is in the log gets its `llm.error`, synced (a
 * log that cannot be written then is not what the client hears about). Before the stream started,
 * the error goes to the app's error handler (answered in the client's dialect, counted there);
 * after, as an error frame, and the stream ends.
 */
export async function fail(call: Call, thrown: unknown): Promise<void> {
  const err = thrown instanceof CountedFailure ? thrown.error : thrown;
  endUpstream(call, err);
  if (call.reqEvent !== undefined && !call.logged) {
    // A streamed client got part of a reply: the log says what, as a failure, never as a reply.
    const partial = call.stream !== undefined && call.partial !== undefined && hasContent(call.partial) ? { partial: call.partial } : {};
    try {
      call.turn.append({ type: 'llm.error', req: call.reqEvent.seq, error: err instanceof Error ? err.message : String(err), ...attemptFields(call), ...partial });
      call.logged = true;
      await call.turn.session.log.endTurn();
    } catch {
      // The log itself failed: the session is read back from disk on its next request.
    }
  }
  const raw = call.raw;
  if (raw === undefined || call.stream === undefined) throw err;
  const proxyErr = err instanceof ProxyError ? err : new ProxyError('internal_error', { detail: String(err) });
  counterOf(call.deps.metrics.requests, call.a.labels, 'status', String(proxyErr.status)).inc();
  if (!raw.writableEnded) raw.end(call.stream.error(proxyErr));
}

export async function logAborted(call: Call, partial: NeutralReply, firstByte: number | undefined): Promise<void> {
  endUpstream(call);
  call.turn.append({ type: 'llm.resp', req: call.reqEvent!.seq, reply: partial, origin: call.origin, timings: timings(call.callStarted!, firstByte), aborted: true });
  call.logged = true;
  await call.turn.session.log.endTurn();
}

function hasContent(reply: NeutralReply): boolean {
  return (reply.content ?? '') !== '' || (reply.thinking ?? '') !== '' || (reply.tool_calls?.length ?? 0) > 0;
}

export function emptyReply(): NeutralReply {
  return { content: null, finish_reason: null };
}
