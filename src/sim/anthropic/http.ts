/**
 * The Anthropic wire's HTTP side: `POST /anthropic/v1/messages` (and `/v1/messages`). Checks what
 * the API checks before reading the body (the key, when the simulator has one, as `x-api-key`;
 * the `anthropic-version` header), then moves the engine's answer onto the socket: a JSON body,
 * or the SSE events with their `event:` lines.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { SimError } from '../errors.js';
import { AnthropicEngine, type AnthropicEngineConfig, type AnthropicRecord } from './engine.js';
import { anthropicErrorBody, anthropicErrorEvent } from './errors.js';
import { messageObject, streamFrames } from './reply.js';

/** The paths this wire answers. */
export const ANTHROPIC_ROUTE = /^\/(?:anthropic\/)?v1\/messages(?:\/count_tokens)?$/;
const COUNT_ROUTE = /\/count_tokens$/;

export class AnthropicWire {
  readonly engine: AnthropicEngine;
  readonly #apiKey: string | undefined;
  readonly #now: () => number;

  constructor(config: AnthropicEngineConfig & { apiKey?: string }) {
    this.engine = new AnthropicEngine(config);
    this.#apiKey = config.apiKey;
    this.#now = config.now;
  }

  get records(): AnthropicRecord[] {
    return this.engine.records;
  }

  reset(): void {
    this.engine.reset();
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string, body: string): Promise<void> {
    const record = this.engine.record(path);
    res.on('finish', () => {
      record.finishedAt = this.#now();
    });
    const requestId = `req_sim${String(record.seq).padStart(6, '0')}`;
    const fail = (err: SimError): void => {
      record.status = err.status;
      record.error = err.code;
      this.#send(res, err.status, anthropicErrorBody(err, requestId), requestId);
    };
    if (req.method !== 'POST') return fail(new SimError(405, 'method_not_allowed', `Method ${String(req.method)} not allowed; use POST.`));
    if (this.#apiKey !== undefined && header(req, 'x-api-key') !== this.#apiKey && header(req, 'authorization') !== `Bearer ${this.#apiKey}`) {
      return fail(new SimError(401, 'invalid_api_key', 'invalid x-api-key'));
    }
    if (header(req, 'anthropic-version') === undefined) return fail(new SimError(400, 'missing_version', 'anthropic-version: header is required'));
    if (COUNT_ROUTE.test(path)) {
      try {
        record.status = 200;
        return this.#send(res, 200, this.engine.count(body, betas(req)), requestId);
      } catch (err) {
        if (err instanceof SimError) return fail(err);
        throw err;
      }
    }

    const outcome = this.engine.answer(body, record, betas(req));
    if (outcome.kind === 'error') {
      if (outcome.slowMs > 0) await sleep(outcome.slowMs);
      return fail(outcome.error);
    }
    const { meta, blocks, plan, usage } = outcome;
    record.status = 200;
    if (!outcome.stream) {
      if (plan.slowMs > 0) await sleep(plan.slowMs);
      return this.#send(res, 200, messageObject(meta, blocks, plan, usage), requestId);
    }
    record.error = outcome.failure?.code ?? null;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
    const failure = outcome.failure === null ? null : anthropicErrorEvent(outcome.failure);
    for (const frame of streamFrames(meta, blocks, plan, usage, failure)) {
      if (plan.slowMs > 0) await sleep(plan.slowMs);
      if (res.destroyed) return;
      res.write(frame);
    }
    res.end();
  }

  #send(res: ServerResponse, status: number, value: unknown, requestId: string): void {
    if (res.destroyed) return;
    const text = JSON.stringify(value);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': requestId }).end(text);
  }
}

/** `anthropic-beta`: comma-separated names, the header possibly sent more than once. */
function betas(req: IncomingMessage): string[] {
  const value = req.headers['anthropic-beta'];
  return (Array.isArray(value) ? value : [value ?? '']).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
