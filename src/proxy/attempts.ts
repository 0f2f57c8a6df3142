/**
 * The upstream call with its retries and fallbacks (docs/faults.md): each deployment of the route
 * in turn, each tried up to `retries` more times, always with the same request bytes, while nothing
 * of the reply has been read. A 2xx counts as answered once its first body byte is in: a body that
 * breaks or ends before it is one more failed attempt; after it, nothing is tried again.
 */
import type { Deployment } from '../config/routes.js';
import { ProxyError } from '../core/errors.js';
import { retryableStatus, retryDelay, type BackoffSettings, type RetryReason } from './backoff.js';
import { classifyTransportError, type UpstreamResponse } from './upstream.js';

export interface AttemptPlan {
  deployments: readonly Deployment[];
  retries: number;
  backoff: BackoffSettings;
  /** An error body is read up to this many bytes: it is logged and relayed, never streamed. */
  maxErrorBytes: number;
}

export interface AttemptIo {
  /** One call; rejects with the transport's error. */
  send(deployment: Deployment, signal: AbortSignal): Promise<UpstreamResponse>;
  /** Another attempt follows one that failed for `reason` on `deployment`. */
  onRetry(reason: RetryReason, deployment: Deployment): void;
  random(): number;
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** How the last attempt ended: a reply under way, or a status with its (capped) body. */
export type Answer =
  | { kind: 'stream'; status: number; headers: UpstreamResponse['headers']; body: AsyncIterable<Uint8Array> }
  | { kind: 'status'; status: number; headers: UpstreamResponse['headers']; text: string };

type Failed = { reason: RetryReason; headers: UpstreamResponse['headers']; answer?: Answer; error?: unknown };

export class UpstreamAttempts {
  /** Attempts made so far, and the deployment of the latest: read by the caller whatever the outcome. */
  attempts = 0;
  deployment: Deployment;
  readonly #plan: AttemptPlan;
  readonly #io: AttemptIo;

  constructor(plan: AttemptPlan, io: AttemptIo) {
    this.#plan = plan;
    this.#io = io;
    this.deployment = plan.deployments[0]!;
  }

  /** The answer of the first attempt that is not retried; throws the last transport failure. */
  async call(signal: AbortSignal): Promise<Answer> {
    let last: Failed | undefined;
    for (const deployment of this.#plan.deployments) {
      for (let retry = 0; retry <= this.#plan.retries; retry++) {
        if (last !== undefined) {
          this.#io.onRetry(last.reason, this.deployment);
          // Another deployment is not the one that asked us to wait.
          if (retry > 0) await this.#io.sleep(retryDelay(retry - 1, last.headers, this.#plan.backoff, this.#io.random, this.#io.now()), signal);
        }
        this.deployment = deployment;
        this.attempts++;
        const outcome = await this.#attempt(deployment, signal);
        if (!('reason' in outcome)) return outcome;
        last = outcome;
      }
    }
    if (last!.answer !== undefined) return last!.answer;
    throw last!.error;
  }

  async #attempt(deployment: Deployment, signal: AbortSignal): Promise<Answer | Failed> {
    let res: UpstreamResponse;
    try {
      res = await this.#io.send(deployment, signal);
    } catch (err) {
      return this.#transport(err, deployment, signal, false);
    }
    if (res.status < 200 || res.status >= 300) {
      const answer: Answer = { kind: 'status', status: res.status, headers: res.headers, text: await readCapped(res.body, this.#plan.maxErrorBytes) };
      const reason = retryableStatus(res.status);
      return reason === undefined ? answer : { reason, headers: res.headers, answer };
    }
    const reader = res.body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
    let first: IteratorResult<Uint8Array>;
    try {
      first = await reader.next();
    } catch (err) {
      return this.#transport(err, deployment, signal, true);
    }
    if (first.done === true) {
      const error = new ProxyError('upstream_bad_reply', { provider: deployment.provider, detail: 'the reply ended before its first byte' });
      return { reason: 'stream', headers: {}, error };
    }
    return { kind: 'stream', status: res.status, headers: res.headers, body: prepend(first.value, reader) };
  }

  /** A failure to reach the upstream or to read its first byte: retried unless it is a timeout or an abort. */
  #transport(err: unknown, deployment: Deployment, signal: AbortSignal, afterHeaders: boolean): Failed {
    const error = classifyTransportError(err, deployment.provider, deployment.timeouts);
    // The caller's abort (a client that left, the deadline) ends the loop at once.
    if (signal.aborted || !(error instanceof ProxyError)) throw error;
    if (error.code === 'upstream_connect_timeout') return { reason: 'connect_timeout', headers: {}, error };
    // A headers or body timeout: the upstream took the request and may still be working on it;
    // a retry would double both the wait and the bill.
    if (error.code !== 'upstream_unreachable') throw error;
    if (afterHeaders) return { reason: 'stream', headers: {}, error };
    const socketCode = (error.cause as { code?: unknown } | undefined)?.code;
    return { reason: typeof socketCode === 'string' && REFUSED.has(socketCode) ? 'connect' : 'reset', headers: {}, error };
  }
}

/** Socket errors that mean no connection was made. */
const REFUSED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** The body as text, up to `max` bytes; the rest is not read (the connection is dropped). */
export async function readCapped(body: AsyncIterable<Uint8Array>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const part = Buffer.from(chunk).subarray(0, max - size);
      chunks.push(part);
      size += part.length;
      if (size >= max) break;
    }
  } catch {
    // A body that breaks is read as far as it came: it is an error's, for the log and the client.
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function* prepend(first: Uint8Array, rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield first;
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}
