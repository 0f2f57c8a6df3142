/**
 * POST /v1/chat/completions: validate, find the session, log what is new, build the window,
 * encode for the route's dialect, call the upstream (always streaming, so the first byte and a
 * client that leaves are both seen), relay, and log the reply durably before the answer ends.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hintsFor, hintsRecord } from '../cache-hints/session-hints.js';
import { resolveRoute, type Route } from '../config/routes.js';
import { ProxyError, errorBody } from '../core/errors.js';
import type { BreakCause, EventOf } from '../core/events.js';
import type { NeutralReply, NeutralRequest, Origin } from '../core/types.js';
import { createChunkRenderer, renderCompletion, type ChunkRenderer } from '../dialects/openai-chat/client-render.js';
import { dialectFor } from '../dialects/registry.js';
import { SSE_DONE, sseJson } from '../dialects/sse-writer.js';
import { createEventDecoder } from '../dialects/stream-decoder.js';
import type { UpstreamError } from '../dialects/types.js';
import type { Turn } from '../session/manager.js';
import { firstDifference } from '../window/index.js';
import type { AppDeps } from './app.js';
import { toConversation, toParams, toTools } from './convert.js';
import { parseChatRequest } from './inbound.js';
import { recordCacheSaving } from '../metrics/savings.js';
import { isProviderMiss, recordReply } from './record.js';
import { explicitSessionId } from './session-id.js';
import { classifyTransportError, isAbort } from './upstream.js';

/**
 * The metric labels of each request once its route is known. Errors thrown before a stream starts
 * are answered, and counted in proxy_requests_total, by the app's error handler, which reads them
 * here (a request that failed before it had a route counts under UNROUTED).
 */
export const routeLabels = new WeakMap<FastifyRequest, { provider: string; model: string }>();
export const UNROUTED = { provider: 'none', model: 'none' } as const;

export async function handleChat(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<void> {
  const started = performance.now();
  const parsed = parseChatRequest(req.body);
  const route = resolveRoute(deps.config, parsed.body.model);
  const dialect = dialectFor(route.dialect.wire);
  const conversation = toConversation(parsed.messages, deps.images);
  const params = toParams(parsed.body);
  const apiKey = route.apiKey ?? bearerOf(req.headers.authorization);
  const labels = { provider: route.provider, model: route.label };
  routeLabels.set(req, labels);

  const turn = await deps.sessions.begin({
    explicitId: explicitSessionId(req.headers, parsed.body as Record<string, unknown>, deps.config.sessions),
    system: conversation.system,
    tools: toTools(parsed.body),
    messages: conversation.messages,
    recipe: route.recipe,
  });
  const abort = new AbortController();
  let clientGone = false;
  const onClose = () => {
    if (!reply.raw.writableFinished) {
      clientGone = true;
      // Its retry may come before this request has logged what it got: not a concurrent branch.
      turn.abandon();
      abort.abort();
    }
  };
  reply.raw.on('close', onClose);
  // A client that left while its request waited for the session's turn: its 'close' has passed.
  if (req.raw.socket.destroyed) onClose();
  const clientStream = parsed.body.stream === true;
  let raw: ServerResponse | undefined;

  try {
    const origin: Origin = { provider: route.provider, model: route.dialect.model };
    const built = turn.session.window.build({ route: route.name, model: route.dialect.model, origin, params });
    const hints = hintsFor(route, turn.session.id);
    const cause = breakCause(turn, built.request);
    // Encoded before llm.req is written: the record names the breakpoints the dialect placed. The
    // digest is the neutral request's, which encoding does not touch.
    const encoded = dialect.encodeRequest(built.request, route.dialect, hints, { stream: true, resolveImage: (sha) => deps.images.resolve(sha) });
    const reqEvent = turn.append({
      type: 'llm.req', digest: built.digest, recipe_version: turn.session.window.recipe?.version ?? route.recipe.version,
      route: route.name, model: route.dialect.model, origin, params, elided: built.elided, est_tokens: built.estTokens,
      hints: hintsRecord(hints, encoded.cacheBreakpoints), cause,
    });
    turn.session.previousRequest = built.request;
    if (built.trimmed) deps.metrics.windowTrims.inc(labels);

    if (apiKey !== undefined) Object.assign(encoded.headers, dialect.authHeaders(apiKey));
    const callStarted = performance.now();
    deps.metrics.duration.observe({ ...labels, phase: 'overhead' }, (callStarted - started) / 1000);

    let upstream;
    try {
      upstream = await deps.upstreams.send(route.provider, route.dialect.baseUrl, encoded, route.timeouts, abort.signal);
    } catch (err) {
      if (clientGone && isAbort(err)) return await logAborted(turn, reqEvent, origin, emptyReply(), callStarted, undefined);
      const failure = classifyTransportError(err, route.provider, route.timeouts);
      turn.append({ type: 'llm.error', req: reqEvent.seq, error: failure instanceof Error ? failure.message : String(failure) });
      await turn.session.log.sync();
      deps.metrics.upstreamErrors.inc({ ...labels, status: failure instanceof ProxyError ? failure.code : 'transport' });
      throw failure;
    }

    if (upstream.status < 200 || upstream.status >= 300) {
      const text = await upstream.body.text();
      turn.append({ type: 'llm.error', req: reqEvent.seq, status: upstream.status, body: text.slice(0, 65536) });
      await turn.session.log.sync();
      deps.metrics.upstreamErrors.inc({ ...labels, status: String(upstream.status) });
      const error = dialect.decodeError(upstream.status, text);
      if (error.contextOverflow) throw new ProxyError('context_length_exceeded', { detail: error.message }, { param: 'messages' });
      // The upstream's error goes back as it was, with the headers that tell a client when (and
      // whether) to retry. A body that is not JSON (a gateway's HTML page) becomes an OpenAI-shaped
      // error with the same status: clients read `error` from a JSON body.
      for (const name of RETRY_HEADERS) {
        const value = upstream.headers[name];
        if (typeof value === 'string') void reply.header(name, value);
      }
      if (!isJsonObject(text)) {
        throw new ProxyError('upstream_error', { status: upstream.status, detail: error.message }, { status: upstream.status >= 400 ? upstream.status : 502 });
      }
      deps.metrics.requests.inc({ ...labels, status: String(upstream.status) });
      await reply.status(upstream.status).header('content-type', 'application/json').send(text);
      return;
    }

    // The request's digest seeds the ids a dialect makes up (Ollama's calls have none): unique per
    // distinct request, the same for an identical retry.
    const decoder = dialect.createStreamDecoder(route.dialect, { idSeed: built.digest });
    const events = createEventDecoder(decoder.framing);
    const meta = { id: `chatcmpl-${randomBytes(12).toString('hex')}`, created: Math.floor(deps.now().getTime() / 1000), model: parsed.body.model };
    let renderer: ChunkRenderer | undefined;
    if (clientStream) {
      void reply.hijack();
      raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      renderer = createChunkRenderer({ ...meta, includeUsage: parsed.body.stream_options?.include_usage === true });
    }
    let firstByte: number | undefined;
    let streamError: UpstreamError | undefined;
    let transportError: unknown;
    const onDeltas = (ev: Parameters<typeof decoder.onEvent>[0]) => {
      for (const delta of decoder.onEvent(ev)) {
        if (delta.type === 'error') streamError = delta.error;
        else if (renderer !== undefined && raw !== undefined && streamError === undefined) {
          for (const chunk of renderer.render(delta)) raw.write(sseJson(chunk));
        }
      }
    };
    try {
      for await (const chunk of upstream.body) {
        firstByte ??= performance.now();
        for (const ev of events.push(chunk as Uint8Array)) onDeltas(ev);
      }
      for (const ev of events.flush()) onDeltas(ev);
    } catch (err) {
      transportError = err;
    }
    const final = decoder.finish();
    if (firstByte !== undefined) deps.metrics.duration.observe({ ...labels, phase: 'ttft' }, (firstByte - callStarted) / 1000);

    if (clientGone) return await logAborted(turn, reqEvent, origin, final, callStarted, firstByte);
    if (transportError !== undefined || streamError !== undefined) {
      const failure = transportError !== undefined
        ? classifyTransportError(transportError, route.provider, route.timeouts)
        : new ProxyError('upstream_error', { status: 200, detail: streamError!.message });
      const message = failure instanceof Error ? failure.message : String(failure);
      turn.append({ type: 'llm.error', req: reqEvent.seq, error: message });
      await turn.session.log.sync();
      deps.metrics.upstreamErrors.inc({ ...labels, status: failure instanceof ProxyError ? failure.code : 'stream' });
      throw failure;
    }

    const providerMiss = isProviderMiss(cause, final.usage?.cached_tokens, turn.session.previousPrompt);
    turn.append({
      type: 'llm.resp', req: reqEvent.seq, reply: final, origin, timings: timings(callStarted, firstByte),
      ...(providerMiss ? { provider_miss: true as const } : {}),
    });
    await turn.session.log.sync();
    recordReply(deps.metrics, labels, route, final, turn.session.previousPrompt);
    recordCacheSaving(deps.metrics, labels, route, final.usage);
    deps.metrics.cacheBreaks.inc({ ...labels, cause: providerMiss ? 'provider_miss' : cause });
    turn.session.previousPrompt = final.usage?.prompt_tokens;
    deps.metrics.requests.inc({ ...labels, status: '200' });
    deps.metrics.duration.observe({ ...labels, phase: 'total' }, (performance.now() - started) / 1000);

    if (renderer !== undefined && raw !== undefined) {
      for (const chunk of renderer.end(final.usage)) raw.write(sseJson(chunk));
      raw.end(SSE_DONE);
    } else {
      await reply.header('content-type', 'application/json').send(renderCompletion(final, meta));
    }
  } catch (err) {
    if (raw === undefined) throw err;
    // The stream has started: the error goes as an error frame, then the stream ends.
    const proxyErr = err instanceof ProxyError ? err : new ProxyError('internal_error', { detail: String(err) });
    deps.metrics.requests.inc({ ...labels, status: String(proxyErr.status) });
    if (!raw.writableEnded) raw.end(sseJson(errorBody(proxyErr)));
  } finally {
    reply.raw.off('close', onClose);
    turn.release();
  }
}

async function logAborted(turn: Turn, reqEvent: EventOf<'llm.req'>, origin: Origin, partial: NeutralReply, callStarted: number, firstByte: number | undefined): Promise<void> {
  turn.append({ type: 'llm.resp', req: reqEvent.seq, reply: partial, origin, timings: timings(callStarted, firstByte), aborted: true });
  await turn.session.log.sync();
}

function timings(callStarted: number, firstByte: number | undefined) {
  const now = performance.now();
  return { ...(firstByte === undefined ? {} : { ttfb_ms: Math.round(firstByte - callStarted) }), total_ms: Math.round(now - callStarted) };
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

function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return match?.[1]?.trim();
}

/** Why this request's prefix differs from the session's previous request (docs/architecture.md 8). */
function breakCause(turn: Turn, request: NeutralRequest): BreakCause {
  const previous = turn.session.previousRequest;
  if (previous === undefined) return 'first';
  const diff = firstDifference(previous, request, turn.appended);
  return diff?.cause ?? 'none';
}

export type { Route };
