/**
 * One request pipeline for every inbound wire, as named stages: admit (the inbound dialect reads
 * the body, with any items it names in the log put in first, `resolveReferences`; route), locate
 * (the session's turn), build (window, hints, encoding, `llm.req`), call
 * (the upstream, always streaming, so the first byte and a client that leaves are both seen;
 * tried again and on fallbacks before that byte, attempts.ts; all within a deadline), relay
 * (re-encoded in the client's wire as it comes), and record (the reply logged durably before the
 * answer ends). Every failure takes one path (`fail`), and the turn is released however
 * the request ends. Each stage has its file here; this one runs them in order.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { presetOf } from '../../config/presets.js';
import { ProxyError } from '../../core/errors.js';
import type { InboundDialect } from '../../dialects/types.js';
import { OPERATION, requestAttributes, sentAttributes } from '../../tracing/gen-ai.js';
import { NO_TRACE, type RequestTrace } from '../../tracing/request-trace.js';
import type { AppDeps } from '../app.js';
import { summaryOf } from '../request-log.js';
import { admit, continueFrom, limit, resolveReferences } from './admit.js';
import { build } from './build.js';
import { CountedFailure, type Call } from './call.js';
import { emptyReply, fail, logAborted } from './outcome.js';
import { answerFromLog, relay, relayError } from './relay.js';
import { send } from './send.js';

/**
 * The metric labels of each request once its route is known. Errors thrown before a stream starts
 * are answered, and counted in proxy_requests_total, by the app's error handler, which reads them
 * here (a request that failed before it had a route counts under UNROUTED).
 */
export const routeLabels = new WeakMap<FastifyRequest, { provider: string; model: string }>();

export const UNROUTED = { provider: 'none', model: 'none' } as const;

/** The request's span (docs/observability.md, Traces) around the stages; its end is the request's. */
export async function handleRequest(inbound: InboundDialect, req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<void> {
  const trace = deps.tracing?.begin(req.headers) ?? NO_TRACE;
  try {
    await handle(inbound, req, reply, deps, trace);
    trace.end();
  } catch (err) {
    trace.end(err instanceof CountedFailure ? err.error : err);
    throw err;
  }
}

async function handle(inbound: InboundDialect, req: FastifyRequest, reply: FastifyReply, deps: AppDeps, trace: RequestTrace): Promise<void> {
  const started = performance.now();
  const resolve = inbound.resolveReferences;
  const a = admit(inbound, req, deps, resolve === undefined ? req.body : await resolveReferences(resolve, inbound, req, deps));
  routeLabels.set(req, a.labels);
  await limit(a, deps);
  trace.name(`${OPERATION} ${a.route.dialect.model}`);
  trace.set(requestAttributes(presetOf(a.route.preset).genAi ?? a.route.preset, a.route.dialect.model, a.route.name));
  if (a.client.continues !== undefined) await continueFrom(a, deps);
  const summary = summaryOf(req);
  Object.assign(summary, { route: a.route.name, provider: a.route.provider, stream: a.client.stream });
  const match = trace.stage('session.match');
  const turn = await deps.sessions.begin(a.incoming).catch((err: unknown) => {
    match.end(err);
    throw err;
  });
  match.set({ 'prefix_proxy.session.id': turn.session.id, 'prefix_proxy.plan': turn.plan.kind });
  match.end();
  trace.set({ 'prefix_proxy.session.id': turn.session.id });
  summary.session = turn.session.id;
  const call: Call = {
    req, deps, a, turn, started, abort: new AbortController(), clientGone: false, deadlinePassed: false, previousPrompt: turn.session.previousPrompt,
    origin: { provider: a.route.provider, model: a.route.dialect.model }, logged: false, trace,
  };
  const onClose = () => {
    if (reply.raw.writableFinished) return;
    call.clientGone = true;
    // Its retry may come before this request has logged what it got: not a concurrent branch.
    turn.abandon();
    call.abort.abort();
  };
  reply.raw.on('close', onClose);
  let deadlineTimer: NodeJS.Timeout | undefined;
  try {
    // A client that left while its request waited for the session's turn: its 'close' has passed.
    if (req.raw.socket.destroyed) onClose();
    if (turn.plan.kind === 'answered') return answerFromLog(call, reply, turn.plan.reply, turn.plan.req);
    const stage = trace.stage('window.build');
    const built = await build(call);
    // The limit the upstream got (the route's cap, or the client's own), as gen_ai.request.model is the model it got.
    trace.set(sentAttributes(built.maxTokens));
    stage.set({ 'prefix_proxy.break_cause': built.cause, 'prefix_proxy.window.est_tokens': built.estTokens, 'prefix_proxy.window.trimmed': built.trimmed });
    stage.end();
    deadlineTimer = setTimeout(() => {
      call.deadlinePassed = true;
      call.abort.abort();
    }, a.route.timeouts.deadline_ms);
    const answer = await send(call, built.encoded);
    if (answer === undefined) return await logAborted(call, emptyReply(), undefined);
    if (answer.kind === 'status') return await relayError(call, reply, answer);
    await relay(call, reply, answer, built.digest);
  } catch (err) {
    const thrown = err instanceof CountedFailure ? err.error : err;
    summary.error = thrown instanceof ProxyError ? thrown.code : 'internal_error';
    await fail(call, err);
  } finally {
    clearTimeout(deadlineTimer);
    reply.raw.off('close', onClose);
    turn.release();
  }
}
