/**
 * The relay stage: the upstream's answer re-encoded in the client's wire as it comes (a stream of
 * its events, or one JSON body at the end), an upstream error passed on in the client's dialect,
 * and a retry the log already answered given the logged reply again.
 */
import type { FastifyReply } from 'fastify';
import { ProxyError } from '../../core/errors.js';
import type { NeutralReply } from '../../core/types.js';
import { replyDeltas } from '../../dialects/reply-deltas.js';
import { createEventDecoder } from '../../dialects/stream-decoder.js';
import type { ClientStream, ReplyMeta, StreamDelta, UpstreamError } from '../../dialects/types.js';
import { counterOf, histogramOf } from '../../metrics/series.js';
import { usageAttributes } from '../../tracing/gen-ai.js';
import type { Answer } from '../attempts.js';
import { summaryOf } from '../request-log.js';
import { attemptFields, CountedFailure, endUpstream, upstreamFailure, type Call } from './call.js';
import { logAborted, recordAnswer } from './outcome.js';
import { randomHex } from '../../session/random-hex.js';
import { transportFailure } from './send.js';

/** A non-2xx upstream answer: logged, then passed on in the client's dialect with its retry headers. */
export async function relayError(call: Call, reply: FastifyReply, upstream: Extract<Answer, { kind: 'status' }>): Promise<void> {
  const { a, deps, turn } = call;
  const text = upstream.text;
  endUpstream(call, { code: `upstream_${upstream.status}` });
  turn.append({ type: 'llm.error', req: call.reqEvent!.seq, status: upstream.status, body: text, ...attemptFields(call) });
  call.logged = true;
  await turn.session.log.endTurn();
  counterOf(deps.metrics.upstreamErrors, a.labels, 'status', String(upstream.status)).inc();
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
  counterOf(deps.metrics.requests, a.labels, 'status', String(upstream.status)).inc();
  await reply.status(upstream.status).header('content-type', 'application/json').send(text);
}

/** Decode the upstream stream, re-encode it for the client as it comes, then record the reply. */
export async function relay(call: Call, reply: FastifyReply, upstream: Extract<Answer, { kind: 'stream' }>, digest: string): Promise<void> {
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
      out.flush();
    }
    if (received <= limit) for (const ev of events.flush()) onDeltas(ev);
  } catch (err) {
    transportError = err;
  }
  // What was decoded goes out before an error frame or the end.
  out.flush();
  const final = decoder.finish();
  call.upstreamStage?.set(usageAttributes(final.usage, final.finish_reason));
  if (firstByte !== undefined) histogramOf(deps.metrics.duration, a.labels, 'phase', 'ttft').observe((firstByte - call.callStarted!) / 1000);
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

/** A retry of the request the log answered last: the logged reply again, no upstream call. */
export async function answerFromLog(call: Call, reply: FastifyReply, logged: NeutralReply, req: number): Promise<void> {
  const { a, deps } = call;
  const out = openClient(call, reply, req);
  summaryOf(call.req).from_log = true;
  for (const delta of replyDeltas(logged)) out.write(delta);
  counterOf(deps.metrics.retriesAnswered, a.labels).inc();
  counterOf(deps.metrics.requests, a.labels, 'status', '200').inc();
  await out.end(logged);
}

/** Where the client's answer goes: a stream in its wire's events opened at once, or one JSON body at the end. */
function openClient(call: Call, reply: FastifyReply, req = call.reqEvent?.seq) {
  const { a, deps } = call;
  const meta: ReplyMeta = { id: randomHex(12), created: Math.floor(deps.now().getTime() / 1000), model: a.client.model };
  if (req !== undefined) meta.logged = { session: call.turn.session.id, seq: req };
  let stream: ClientStream | undefined;
  if (a.client.stream) {
    stream = a.inbound.openStream(meta, a.client);
    call.stream = stream;
    void reply.hijack();
    call.raw = reply.raw;
    call.raw.writeHead(200, { 'content-type': stream.contentType, 'cache-control': 'no-cache', connection: 'keep-alive' });
  }
  // The frames of one upstream read go out in one socket write: a write each was one system call
  // per frame, the largest single cost of a streamed request in the peers benchmark's profile.
  let pending = '';
  return {
    write(delta: StreamDelta): void {
      if (stream !== undefined) pending += stream.delta(delta);
    },
    flush(): void {
      if (pending === '') return;
      call.raw!.write(pending);
      pending = '';
    },
    async end(final: NeutralReply): Promise<void> {
      if (stream === undefined) {
        await reply.header('content-type', 'application/json').send(a.inbound.renderReply(final, meta, a.client));
        return;
      }
      call.raw!.end(pending + stream.end(final));
      pending = '';
    },
  };
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
