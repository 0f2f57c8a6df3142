/**
 * A chat client that treats a broken connection as the official SDKs do: the same request again,
 * its body unchanged, `x-stainless-retry-count` one higher (openai-node `retryRequest`; it retries
 * connection errors, 408, 409, 429 and 5xx). An agent whose stream breaks after it began does the
 * same, so a stream that ends without `[DONE]` is retried too. Over undici, SSE decoded by hand,
 * so the client knows exactly whether it saw the answer's end. Used by the crash test and the soak.
 */
import { request } from 'undici';
import type { Received } from './agent-client.js';

export interface RetryingOptions {
  /** The proxy's current origin (`http://127.0.0.1:N`): it may change between attempts (a restart). */
  origin: () => string;
  stream: boolean;
  headers?: Record<string, string>;
  /** Attempts in all before giving up (default 40). */
  attempts?: number;
  /** Wait before attempt n (1-based retries), ms; default 25 * n, at most 250. */
  backoffMs?: (retry: number) => number;
  /** Where the request stands, for a caller that acts at chosen moments (a kill mid-stream). */
  onPhase?: (phase: Phase) => void;
  /** Abort the first attempt after this many stream chunks (a client that gives up and asks again). */
  abortFirstAfter?: number;
  /** The retry count of the first attempt (default 0; above 0: a resend of an answer the client lost). */
  startAt?: number;
}

export type Phase = 'sent' | 'streaming' | 'done';

export interface Retried {
  answer: Received;
  /** Attempts made (1: no retry). */
  attempts: number;
  /** Why each failed attempt failed. */
  failures: string[];
}

/** Thrown for an answer no retry can fix (a 4xx, an error frame). */
export class RefusedError extends Error {}

const RETRY_STATUS = new Set([408, 409, 429]);

export async function chatWithRetries(body: string, opts: RetryingOptions): Promise<Retried> {
  const max = opts.attempts ?? 40;
  const first = opts.startAt ?? 0;
  const failures: string[] = [];
  for (let attempt = first; attempt < first + max; attempt++) {
    const retry = attempt - first;
    if (retry > 0) await new Promise((r) => setTimeout(r, opts.backoffMs?.(retry) ?? Math.min(250, 25 * retry)));
    const abortAfter = attempt === first ? opts.abortFirstAfter : undefined;
    try {
      const answer = await once(body, attempt, opts, abortAfter);
      if (answer !== undefined) return { answer, attempts: attempt - first + 1, failures };
      failures.push(abortAfter === undefined ? 'stream ended without [DONE]' : 'aborted by the client');
    } catch (err) {
      if (err instanceof RefusedError) throw err;
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  throw new Error(`no answer after ${max} attempts: ${failures.slice(-3).join(' / ')}`);
}

/** One attempt: the answer, or undefined for a stream cut short; throws on a transport error. */
async function once(body: string, attempt: number, opts: RetryingOptions, abortAfter: number | undefined): Promise<Received | undefined> {
  const abort = new AbortController();
  opts.onPhase?.('sent');
  const res = await request(`${opts.origin()}/v1/chat/completions`, {
    method: 'POST',
    body,
    signal: abort.signal,
    headers: { 'content-type': 'application/json', authorization: 'Bearer test', 'x-stainless-retry-count': String(attempt), ...opts.headers },
  });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    if (RETRY_STATUS.has(res.statusCode) || res.statusCode >= 500) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    throw new RefusedError(`HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
  }
  if (!opts.stream) {
    const reply = (await res.body.json()) as { choices: { message: WireMessage }[] };
    opts.onPhase?.('done');
    const m = reply.choices[0]!.message;
    return { content: m.content ?? null, toolCalls: (m.tool_calls ?? []).map(call), reasoning: m.reasoning_content ?? '' };
  }
  const sse = new SseAnswer();
  let chunks = 0;
  let buffer = '';
  try {
    for await (const piece of res.body) {
      opts.onPhase?.('streaming');
      buffer += (piece as Buffer).toString('utf8');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        sse.event(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (abortAfter !== undefined && ++chunks >= abortAfter && !sse.done) {
          abort.abort();
          res.body.destroy();
          return undefined;
        }
      }
    }
  } catch (err) {
    // The connection broke mid-stream: what came so far is not an answer.
    if (sse.done) throw new Error(`stream broke after [DONE]: ${String(err)}`);
    throw err;
  }
  if (!sse.done) return undefined;
  opts.onPhase?.('done');
  return sse.received();
}

interface WireCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireMessage {
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: WireCall[];
}

function call(c: WireCall): Received['toolCalls'][number] {
  return { id: c.id ?? '', function: { name: c.function?.name ?? '', arguments: c.function?.arguments ?? '' } };
}

/** A chat stream's deltas put together, up to `[DONE]`. */
class SseAnswer {
  done = false;
  #content: string | null = null;
  #reasoning = '';
  readonly #calls: WireCall[] = [];

  event(text: string): void {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') {
        this.done = true;
        continue;
      }
      const chunk = JSON.parse(data) as { choices?: { delta?: WireMessage }[]; error?: unknown };
      if (chunk.error !== undefined) throw new RefusedError(`error frame in the stream: ${data.slice(0, 500)}`);
      const delta = chunk.choices?.[0]?.delta;
      if (delta === undefined) continue;
      if (typeof delta.content === 'string' && delta.content !== '') this.#content = (this.#content ?? '') + delta.content;
      this.#reasoning += delta.reasoning_content ?? '';
      for (const c of delta.tool_calls ?? []) {
        const at = (this.#calls[c.index ?? 0] ??= { function: { name: '', arguments: '' } });
        if (c.id !== undefined) at.id = c.id;
        if (c.function?.name !== undefined) at.function!.name += c.function.name;
        at.function!.arguments += c.function?.arguments ?? '';
      }
    }
  }

  received(): Received {
    return { content: this.#content, toolCalls: this.#calls.map(call), reasoning: this.#reasoning };
  }
}
