/**
 * One request pipeline for every inbound wire, as named stages: admit (the inbound dialect reads
 * the body; route), locate (the session's turn), build (window, hints, encoding, `llm.req`), call
 * (the upstream, always streaming, so the first byte and a client that leaves are both seen;
 * tried again and on fallbacks before that byte, attempts.ts; all within a deadline), relay
 * (re-encoded in the client's wire as it comes), and record (the reply logged durably before the
 * answer ends). Every failure takes one path (`fail`), and the turn is released however
 * the request ends.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hintsFor, hintsRecord } from '../cache-hints/session-hints.js';
import { presetOf } from '../config/presets.js';
import { resolveRoute, type Route } from '../config/routes.js';
import { ProxyError } from '../core/errors.js';
import type { BreakCause, EventOf } from '../core/events.js';
import type { NeutralReply, NeutralRequest, Origin } from '../core/types.js';
import { replyDeltas } from '../dialects/reply-deltas.js';
import { dialectFor } from '../dialects/registry.js';
import { createEventDecoder } from '../dialects/stream-decoder.js';
import type { ClientRequest, ClientStream, Dialect, InboundDialect, ReplyMeta, StreamDelta, UpstreamError } from '../dialects/types.js';
import { recordPrices } from '../metrics/prices.js';
import { recordCacheSaving } from '../metrics/savings.js';
import { answerKey, type Incoming, type Turn } from '../session/manager.js';
import { firstDifference } from '../window/index.js';
import type { AppDeps } from './app.js';
import type { ClientKey } from '../config/types.js';
import { isProviderMiss, recordReply } from './record.js';
import { forwardedHeaders } from './forwarded-headers.js';
import { redactDeep } from '../log/redact.js';
import { addUsage, summaries, summaryOf } from './request-log.js';
import { explicitSessionId } from './session-id.js';
import { withoutVolatile } from '../window/volatile-lines.js';
import { withoutRefused } from '../dialects/extra-fields.js';
import { classifyTransportError, isAbort } from './upstream.js';
import { UpstreamAttempts, type Answer } from './attempts.js';
import { deploymentHeaders } from './deployment-headers.js';
import { contentAttributes, OPERATION, prefixAttributes, requestAttributes, usageAttributes } from '../tracing/gen-ai.js';
import { NO_TRACE, type RequestTrace, type Stage } from '../tracing/request-trace.js';

/** Upstream error bodies are read this far: enough for any provider's JSON error, bounded against a runaway page. */
const MAX_ERROR_BYTES = 65_536;

/**
 * The metric labels of each request once its route is known. Errors thrown before a stream starts
 * are answered, and counted in proxy_requests_total, by the app's error handler, which reads them
 * here (a request that failed before it had a route counts under UNROUTED).
 */
export const routeLabels = new WeakMap<FastifyRequest, { provider: string; model: string }>();
export const UNROUTED = { provider: 'none', model: 'none' } as const;

interface Admitted {
  inbound: InboundDialect;
  client: ClientRequest;
  route: Route;
  dialect: Dialect;
  labels: { provider: string; model: string };
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
interface Call {
  req: FastifyRequest;
  deps: AppDeps;
  a: Admitted;
  turn: Turn;
  started: number;
  abort: AbortController;
  clientGone: boolean;
  /** Aborts the upstream part when the route's `deadline_ms` has passed since it began. */
  deadline: AbortController;
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
class CountedFailure {
  constructor(readonly error: unknown) {}
}

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
  const a = admit(inbound, req, deps);
  routeLabels.set(req, a.labels);
  trace.name(`${OPERATION} ${a.route.dialect.model}`);
  trace.set(requestAttributes(presetOf(a.route.preset).genAi ?? a.route.preset, a.route.dialect.model, a.route.name, a.client.params.max_tokens));
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
    req, deps, a, turn, started, abort: new AbortController(), clientGone: false, deadline: new AbortController(), previousPrompt: turn.session.previousPrompt,
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
    const built = build(call);
    stage.set({ 'prefix_proxy.break_cause': built.cause, 'prefix_proxy.window.est_tokens': built.estTokens, 'prefix_proxy.window.trimmed': built.trimmed });
    stage.end();
    deadlineTimer = setTimeout(() => call.deadline.abort(), a.route.timeouts.deadline_ms);
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

/** Read the body in the client's wire, resolve the route. Throws a 4xx for bad input. */
function admit(inbound: InboundDialect, req: FastifyRequest, deps: AppDeps): Admitted {
  const presented = inbound.apiKey(req.headers);
  const key = deps.auth?.identify(presented);
  const parsed = inbound.parse(req.body, (url, detail, param) => deps.images.put(url, detail, param));
  const route = resolveRoute(deps.config, parsed.model);
  deps.auth?.allow(key, route.name);
  if (key !== undefined) summaryOf(req).client = key.name;
  deps.limits?.admit(key);
  // Lines that change every request (a per-request nonce) never reach the log, so never the prefix.
  const unredacted = withoutVolatile(parsed, route.volatileLines);
  // Parameters go into llm.req, which the log redacts: they go upstream as the log holds them,
  // so that replay rebuilds the digest (a credential in `metadata` never leaves either), less the
  // fields the upstream refuses (named in the record).
  const params = withoutRefused(redactDeep(unredacted.params).value, route.dialect.wire, route.refuses);
  const client = { ...unredacted, params };
  const retry = deps.retries?.isRetry(req.headers) === true;
  const dialect = dialectFor(route.dialect.wire);
  return {
    inbound,
    client,
    route,
    dialect,
    labels: { provider: route.provider, model: route.label },
    key,
    // A client key is the proxy's own: it is never passed on to the upstream.
    apiKey: route.apiKey ?? (key === undefined ? presented : undefined),
    passThroughKey: key === undefined ? presented : undefined,
    forwarded: forwardedHeaders(req.headers, dialect, route.dialect.headers),
    incoming: {
      explicitId: explicitSessionId(req.headers, client.idFields, deps.config.sessions),
      system: client.system,
      tools: client.tools,
      messages: client.messages,
      recipe: route.recipe,
      ...(retry ? { retry: answerKey(route.name, route.dialect.model, client.params) } : {}),
    },
  };
}

/**
 * A request that names a logged reply instead of sending the conversation (Responses'
 * `previous_response_id`): the conversation up to that reply goes before its messages, and the
 * session that holds it is the one the request continues (docs/inbound.md).
 */
async function continueFrom(a: Admitted, deps: AppDeps): Promise<void> {
  const ref = a.client.continues!;
  const before = await deps.sessions.conversationAt(ref.session, ref.seq);
  if (before === undefined) throw new ProxyError('previous_response_not_found', { id: ref.id }, { param: 'previous_response_id' });
  a.incoming.messages = [...before.messages, ...a.incoming.messages];
  a.incoming.system ??= before.system;
  a.incoming.continues = ref.session;
}

/** The window, the hints and the wire body; `llm.req` is written before anything is sent. */
function build(call: Call) {
  const { a, turn, deps } = call;
  const params = a.client.params;
  const built = turn.session.window.build({ route: a.route.name, model: a.route.dialect.model, origin: call.origin, params });
  // The lineage's key: a fork or side call lands on the replica that holds its parent's prefix.
  const hints = hintsFor(a.route, turn.session.lineage);
  const cause = breakCause(turn, built.request);
  // Encoded before llm.req is written: the record names the breakpoints the dialect placed. The
  // digest is the neutral request's, which encoding does not touch.
  const encoded = a.dialect.encodeRequest(built.request, a.route.dialect, hints, { stream: true, resolveImage: (sha) => deps.images.resolve(sha), ...(deps.wireMemo === undefined ? {} : { memo: deps.wireMemo }) });
  call.reqEvent = turn.append({
    type: 'llm.req', digest: built.digest, recipe_version: turn.session.window.recipe?.version ?? a.route.recipe.version,
    route: a.route.name, model: a.route.dialect.model, origin: call.origin, params, elided: built.elided, est_tokens: built.estTokens,
    hints: hintsRecord(hints, encoded.cacheBreakpoints), cause,
  });
  turn.sent(built.request);
  summaryOf(call.req).cause = cause;
  if (built.trimmed) deps.metrics.windowTrims.inc(a.labels);
  Object.assign(encoded.headers, a.forwarded);
  if (a.apiKey !== undefined) Object.assign(encoded.headers, a.dialect.authHeaders(a.apiKey));
  return { encoded, digest: built.digest, cause, estTokens: built.estTokens, trimmed: built.trimmed };
}

/**
 * The upstream call, retried and sent to the route's fallbacks while no byte of the reply has come
 * (attempts.ts); undefined when the client left before it answered.
 */
async function send(call: Call, encoded: ReturnType<typeof build>['encoded']): Promise<Answer | undefined> {
  const { a, deps } = call;
  call.callStarted = performance.now();
  deps.metrics.duration.observe({ ...a.labels, phase: 'overhead' }, (call.callStarted - call.started) / 1000);
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
    return await attempts.call(AbortSignal.any([call.abort.signal, call.deadline.signal]));
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
function transportFailure(call: Call, err: unknown): unknown {
  const d = call.attempts?.deployment ?? call.a.route.deployments[0]!;
  if (call.deadline.signal.aborted) return new ProxyError('upstream_deadline', { provider: d.provider, ms: call.a.route.timeouts.deadline_ms }, { cause: err });
  return classifyTransportError(err, d.provider, d.timeouts);
}

/** What the log says of the attempts: their number when more than one, the deployment when a fallback's. */
function attemptFields(call: Call): { attempts?: number; deployment?: string } {
  const at = call.attempts;
  if (at === undefined) return {};
  return {
    ...(at.attempts > 1 ? { attempts: at.attempts } : {}),
    ...(at.deployment !== call.a.route.deployments[0] ? { deployment: at.deployment.provider } : {}),
  };
}

/** A non-2xx upstream answer: logged, then passed on in the client's dialect with its retry headers. */
async function relayError(call: Call, reply: FastifyReply, upstream: Extract<Answer, { kind: 'status' }>): Promise<void> {
  const { a, deps, turn } = call;
  const text = upstream.text;
  endUpstream(call, { code: `upstream_${upstream.status}` });
  turn.append({ type: 'llm.error', req: call.reqEvent!.seq, status: upstream.status, body: text, ...attemptFields(call) });
  call.logged = true;
  await turn.session.log.sync();
  deps.metrics.upstreamErrors.inc({ ...a.labels, status: String(upstream.status) });
  const error = a.dialect.decodeError(upstream.status, text);
  if (error.contextOverflow) throw new CountedFailure(new ProxyError('context_length_exceeded', { detail: error.message }, { param: 'messages' }));
  // The upstream's error goes back as it was, with the headers that tell a client when (and
  // whether) to retry. A body that is not JSON (a gateway's HTML page) becomes an OpenAI-shaped
  // error with the same status: clients read `error` from a JSON body.
  for (const name of RETRY_HEADERS) {
    const value = upstream.headers[name];
    if (typeof value === 'string') void reply.header(name, value);
  }
  // A body of another wire's shape would not read as an error to this client: it is said again in its own.
  if (!isJsonObject(text) || a.inbound.wire !== a.route.dialect.wire) {
    throw new CountedFailure(new ProxyError('upstream_error', { status: upstream.status, detail: error.message }, { status: upstream.status >= 400 ? upstream.status : 502 }));
  }
  deps.metrics.requests.inc({ ...a.labels, status: String(upstream.status) });
  await reply.status(upstream.status).header('content-type', 'application/json').send(text);
}

/** Decode the upstream stream, re-encode it for the client as it comes, then record the reply. */
async function relay(call: Call, reply: FastifyReply, upstream: Extract<Answer, { kind: 'stream' }>, digest: string): Promise<void> {
  const { a, deps } = call;
  // The request's digest seeds the ids a dialect makes up (Ollama's calls have none): unique per
  // distinct request, the same for an identical retry.
  const decoder = a.dialect.createStreamDecoder(a.route.dialect, { idSeed: digest });
  const events = createEventDecoder(decoder.framing);
  const out = openClient(call, reply);
  let firstByte: number | undefined;
  let streamError: UpstreamError | undefined;
  let transportError: unknown;
  let received = 0;
  const limit = deps.config.upstream.maxReplyBytes;
  const onDeltas = (ev: Parameters<typeof decoder.onEvent>[0]) => {
    for (const delta of decoder.onEvent(ev)) {
      if (delta.type === 'error') streamError = delta.error;
      else if (streamError === undefined) out.write(delta);
    }
  };
  try {
    for await (const chunk of upstream.body) {
      if (firstByte === undefined) {
        firstByte = performance.now();
        call.upstreamStage?.event('first_chunk', { 'gen_ai.response.time_to_first_chunk': (firstByte - call.callStarted!) / 1000 });
      }
      received += chunk.byteLength;
      // Leaving the loop drops the connection: the rest is never read.
      if (received > limit) break;
      for (const ev of events.push(chunk)) onDeltas(ev);
    }
    if (received <= limit) for (const ev of events.flush()) onDeltas(ev);
  } catch (err) {
    transportError = err;
  }
  const final = decoder.finish();
  call.upstreamStage?.set(usageAttributes(final.usage, final.finish_reason));
  if (firstByte !== undefined) deps.metrics.duration.observe({ ...a.labels, phase: 'ttft' }, (firstByte - call.callStarted!) / 1000);
  if (call.clientGone) return logAborted(call, final, firstByte);
  const provider = call.attempts!.deployment.provider;
  const failure = transportError !== undefined ? transportFailure(call, transportError)
    : received > limit ? new ProxyError('upstream_reply_too_large', { provider, limit })
      : streamError?.code === 'upstream_bad_reply' ? new ProxyError('upstream_bad_reply', { provider, detail: streamError.message })
        : streamError !== undefined ? new ProxyError('upstream_error', { status: 200, detail: streamError.message })
          // A stream that ended without saying why was cut short: the client hears an error, never a finish.
          : final.finish_reason === null ? new ProxyError('upstream_error', { status: 200, detail: 'the stream ended without a finish reason (cut short)' })
            : undefined;
  if (failure !== undefined) {
    call.partial = final;
    throw upstreamFailure(call, failure, 'stream');
  }
  endUpstream(call);
  await recordAnswer(call, final, firstByte);
  await out.end(final);
}

/** The reply into the log (durably) and the metrics. */
async function recordAnswer(call: Call, final: NeutralReply, firstByte: number | undefined): Promise<void> {
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
  const sync = call.trace.stage('log.sync');
  await turn.session.log.sync().catch((err: unknown) => {
    sync.end(err);
    throw err;
  });
  sync.end();
  call.trace.set({ ...usageAttributes(final.usage, final.finish_reason), ...prefixAttributes(cause, final.usage?.cached_tokens, call.previousPrompt) });
  if (call.trace.captureContent) call.trace.set(contentAttributes(redactDeep(a.client.messages).value, redactDeep({ content: final.content, tool_calls: final.tool_calls }).value));
  await deps.limits?.charge(a.key, a.route, final.usage);
  recordReply(deps.metrics, a.labels, a.route, final, call.previousPrompt);
  recordCacheSaving(deps.metrics, a.labels, a.route, final.usage);
  if (a.route.price !== undefined) recordPrices(deps.metrics, a.labels, a.route.figures.prices);
  deps.metrics.cacheBreaks.inc({ ...a.labels, cause: providerMiss ? 'provider_miss' : (cause ?? 'none') });
  deps.metrics.requests.inc({ ...a.labels, status: '200' });
  deps.metrics.duration.observe({ ...a.labels, phase: 'total' }, (performance.now() - call.started) / 1000);
}

/** A retry of the request the log answered last: the logged reply again, no upstream call. */
async function answerFromLog(call: Call, reply: FastifyReply, logged: NeutralReply, req: number): Promise<void> {
  const { a, deps } = call;
  const out = openClient(call, reply, req);
  summaryOf(call.req).from_log = true;
  for (const delta of replyDeltas(logged)) out.write(delta);
  deps.metrics.retriesAnswered.inc(a.labels);
  deps.metrics.requests.inc({ ...a.labels, status: '200' });
  await out.end(logged);
}

/** Where the client's answer goes: a stream in its wire's events opened at once, or one JSON body at the end. */
function openClient(call: Call, reply: FastifyReply, req = call.reqEvent?.seq) {
  const { a, deps } = call;
  const meta: ReplyMeta = { id: randomBytes(12).toString('hex'), created: Math.floor(deps.now().getTime() / 1000), model: a.client.model };
  if (req !== undefined) meta.logged = { session: call.turn.session.id, seq: req };
  let stream: ClientStream | undefined;
  if (a.client.stream) {
    stream = a.inbound.openStream(meta, a.client);
    call.stream = stream;
    void reply.hijack();
    call.raw = reply.raw;
    call.raw.writeHead(200, { 'content-type': stream.contentType, 'cache-control': 'no-cache', connection: 'keep-alive' });
  }
  return {
    write(delta: StreamDelta): void {
      if (stream === undefined) return;
      const text = stream.delta(delta);
      if (text !== '') call.raw!.write(text);
    },
    async end(final: NeutralReply): Promise<void> {
      if (stream === undefined) {
        await reply.header('content-type', 'application/json').send(a.inbound.renderReply(final, meta, a.client));
        return;
      }
      call.raw!.end(stream.end(final));
    },
  };
}

/** Count an upstream failure once, as it is classified. */
function upstreamFailure(call: Call, failure: unknown, fallback: string): CountedFailure {
  const status = failure instanceof ProxyError ? failure.code : fallback;
  call.deps.metrics.upstreamErrors.inc({ ...call.a.labels, status });
  return new CountedFailure(failure);
}

/**
 * The one failure path. A request whose `llm.req` is in the log gets its `llm.error`, synced (a
 * log that cannot be written then is not what the client hears about). Before the stream started,
 * the error goes to the app's error handler (answered in the client's dialect, counted there);
 * after, as an error frame, and the stream ends.
 */
async function fail(call: Call, thrown: unknown): Promise<void> {
  const err = thrown instanceof CountedFailure ? thrown.error : thrown;
  endUpstream(call, err);
  if (call.reqEvent !== undefined && !call.logged) {
    // A streamed client got part of a reply: the log says what, as a failure, never as a reply.
    const partial = call.stream !== undefined && call.partial !== undefined && hasContent(call.partial) ? { partial: call.partial } : {};
    try {
      call.turn.append({ type: 'llm.error', req: call.reqEvent.seq, error: err instanceof Error ? err.message : String(err), ...attemptFields(call), ...partial });
      call.logged = true;
      await call.turn.session.log.sync();
    } catch {
      // The log itself failed: the session is read back from disk on its next request.
    }
  }
  const raw = call.raw;
  if (raw === undefined || call.stream === undefined) throw err;
  const proxyErr = err instanceof ProxyError ? err : new ProxyError('internal_error', { detail: String(err) });
  call.deps.metrics.requests.inc({ ...call.a.labels, status: String(proxyErr.status) });
  if (!raw.writableEnded) raw.end(call.stream.error(proxyErr));
}

/** The upstream span ends once: when the reply is read, or at the failure that stopped it. */
function endUpstream(call: Call, error?: unknown): void {
  call.upstreamStage?.end(error);
  call.upstreamStage = undefined;
}

async function logAborted(call: Call, partial: NeutralReply, firstByte: number | undefined): Promise<void> {
  endUpstream(call);
  call.turn.append({ type: 'llm.resp', req: call.reqEvent!.seq, reply: partial, origin: call.origin, timings: timings(call.callStarted!, firstByte), aborted: true });
  call.logged = true;
  await call.turn.session.log.sync();
}

function timings(callStarted: number, firstByte: number | undefined) {
  const now = performance.now();
  return { ...(firstByte === undefined ? {} : { ttfb_ms: Math.round(firstByte - callStarted) }), total_ms: Math.round(now - callStarted) };
}

function hasContent(reply: NeutralReply): boolean {
  return (reply.content ?? '') !== '' || (reply.thinking ?? '') !== '' || (reply.tool_calls?.length ?? 0) > 0;
}

function emptyReply(): NeutralReply {
  return { content: null, finish_reason: null };
}

/** Upstream response headers a client's retry logic reads (openai SDKs, opencode, Codex). */
const RETRY_HEADERS = ['retry-after', 'retry-after-ms', 'x-should-retry', 'x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens'] as const;

function isJsonObject(text: string): boolean {
  if (!text.trimStart().startsWith('{')) return false;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}


/** Why this request's prefix differs from the session's previous request (docs/architecture.md 8). */
function breakCause(turn: Turn, request: NeutralRequest): BreakCause {
  const previous = turn.session.previousRequest;
  if (previous === undefined) return 'first';
  const diff = firstDifference(previous, request, turn.appended);
  return diff?.cause ?? 'none';
}

export type { Route };
