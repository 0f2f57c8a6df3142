/**
 * The simulator's HTTP server (node:http, no framework: it must stay light under benchmarks).
 *
 * Routes: `POST /v1/chat/completions`, `GET /v1/models`, each also under `/<mode>/v1/...` to pick
 * a mode per request (`/deepseek/v1/chat/completions`); `/v1/...` uses `opts.mode`. Anthropic's own
 * wire: `POST /anthropic/v1/messages` (and `/v1/messages`), see anthropic/. Ollama's native wire:
 * `POST /api/chat`, see ollama/. Responses: `POST /v1/responses` (and `/openai/v1/responses`), see
 * responses/. Gemini's own wire: `/v1beta/models/{model}:generateContent` (and `:streamGenerateContent`,
 * `:countTokens`) and `/v1beta/cachedContents`, see gemini-native/. Admin, for
 * out-of-process use: `GET /_sim/stats`, `GET /_sim/requests`, `POST /_sim/advance?ms=N`,
 * `POST /_sim/reset`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { completionObject, OVERSIZED_BYTES, streamPayloads } from './completion.js';
import { SimEngine, type Outcome } from './engine.js';
import type { AnthropicRecord } from './anthropic/engine.js';
import { ANTHROPIC_ROUTE, AnthropicWire } from './anthropic/http.js';
import { SimError } from './errors.js';
import { OLLAMA_CHAT_PATH, OllamaSim } from './ollama/handler.js';
import { RESPONSES_PATH, ResponsesSim } from './responses/handler.js';
import { GEMINI_NATIVE_ROUTE, GeminiNativeSim, type GeminiNativeStats, type GeminiRecord } from './gemini-native/handler.js';
import { SIM_MODES, type SimMode, type SimOptions, type SimRecord, type SimStats } from './types.js';

export interface Sim {
  /** Base URL of the default mode, with `/v1`: what an OpenAI client takes as `baseURL`. */
  readonly url: string;
  /** `http://host:port`, no path. */
  readonly origin: string;
  /** Base URL (with `/v1`) of one mode. */
  urlFor(mode: SimMode): string;
  /** Live list, one record per chat request, in arrival order. */
  readonly requests: SimRecord[];
  /** Live list of the Anthropic wire's requests (`POST /anthropic/v1/messages`, `/v1/messages`). */
  readonly anthropicRequests: AnthropicRecord[];
  /** Live list of the native Gemini wire's model calls (`/v1beta/models/{model}:...`). */
  readonly geminiRequests: GeminiRecord[];
  stats(): SimStats & { gemini: GeminiNativeStats };
  reset(): void;
  /** Moves the simulator's clock forward, e.g. past the cache TTL. */
  advance(ms: number): void;
  now(): number;
  close(): Promise<void>;
}

const ROUTE = /^\/(?:(openai|gpt56|deepseek|cerebras|openrouter|gemini)\/)?v1\/(chat\/completions|models)$/;

export async function createSim(opts: SimOptions = {}): Promise<Sim> {
  const mode = opts.mode ?? 'openai';
  const replicas = opts.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) throw new RangeError(`replicas must be a positive integer, got ${replicas}`);
  if (!SIM_MODES.includes(mode)) throw new RangeError(`unknown sim mode ${String(mode)}`);
  const engine = new SimEngine({
    replicas,
    routing: opts.routing ?? 'prefix',
    seed: opts.seed ?? 0,
    contextTokens: opts.contextTokens ?? 131_072,
    ttlMs: opts.ttlMs ?? 300_000,
    maxBlocksPerReplica: opts.maxBlocksPerReplica ?? 20_000,
    requireReasoning: opts.requireReasoning ?? false,
    clock: opts.clock ?? Date.now,
  });
  const anthropic = new AnthropicWire({
    contextTokens: opts.contextTokens ?? 131_072, ttlMs: opts.ttlMs ?? 300_000, maxEntries: opts.maxBlocksPerReplica ?? 20_000,
    now: () => engine.now(), ...(opts.apiKey === undefined ? {} : { apiKey: opts.apiKey }),
    messageCacheKeys: opts.anthropicMessageCacheKeys ?? true,
  });
  const ollama = new OllamaSim({ now: () => engine.now(), contextTokens: opts.contextTokens ?? 131_072 });
  const responses = new ResponsesSim(opts, () => engine.now());
  const gemini = new GeminiNativeSim(opts, () => engine.now());
  const stats = (): SimStats & { gemini: GeminiNativeStats } => ({ ...engine.stats(), gemini: gemini.stats() });
  const resetAll = (): void => {
    engine.reset();
    anthropic.reset();
    ollama.reset();
    responses.reset();
    gemini.reset();
  };
  const models = opts.models ?? ['sim'];
  const auth = opts.apiKey === undefined ? null : `Bearer ${opts.apiKey}`;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, new SimError(500, 'internal_error', String(err)).body());
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const body = await readBody(req);
    if (url.pathname.startsWith('/_sim/')) return admin(req.method ?? 'GET', url, res);
    if (ANTHROPIC_ROUTE.test(url.pathname)) return anthropic.handle(req, res, url.pathname, body);
    if (req.method === 'POST' && url.pathname === OLLAMA_CHAT_PATH) return ollama.serve(req, res, body);
    const responsesPath = req.method === 'POST' ? RESPONSES_PATH.exec(url.pathname) : null;
    if (responsesPath !== null) return responses.serve(req, res, body, responsesPath[1]);
    if (GEMINI_NATIVE_ROUTE.test(url.pathname)) return gemini.serve(req, res, url, body);
    const route = ROUTE.exec(url.pathname);
    if (route === null) return sendJson(res, 404, new SimError(404, 'unknown_url', `Unknown request URL: ${req.method} ${url.pathname}.`).body());
    if (route[2] === 'models') {
      return sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'prefix-proxy-sim' })) });
    }
    if (req.method !== 'POST') return sendJson(res, 405, new SimError(405, 'method_not_allowed', 'Use POST for chat completions.').body());
    const record = engine.record(url.pathname, (route[1] as SimMode | undefined) ?? mode);
    track(record, res);
    if (auth !== null && req.headers.authorization !== auth) {
      record.status = 401;
      record.error = 'invalid_api_key';
      return sendJson(res, 401, new SimError(401, 'invalid_api_key', 'Incorrect API key provided.', null, 'invalid_request_error').body(), record);
    }
    const outcome = engine.chat(body, (name) => headerValue(req, name), record);
    await answer(outcome, res, record);
  }

  function track(record: SimRecord, res: ServerResponse): void {
    res.on('finish', () => {
      record.finishedAt = engine.now();
    });
    res.on('close', () => {
      if (res.writableFinished) return;
      record.closedEarly = true;
      record.closedAt = engine.now();
    });
  }

  async function answer(outcome: Outcome, res: ServerResponse, record: SimRecord): Promise<void> {
    const faults = outcome.kind === 'error' ? outcome.faults : outcome.plan.faults;
    if (faults.reset) {
      record.error = 'reset';
      res.socket?.destroy();
      return;
    }
    if (outcome.kind === 'error') {
      record.status = outcome.error.status;
      record.error = outcome.error.code;
      if (outcome.slowMs > 0) await sleep(outcome.slowMs);
      const body = faults.oversized ? oversizedError(outcome.error) : outcome.error.wire();
      return sendJson(res, outcome.error.status, body, record, faults.errorHeaders);
    }
    const { plan, meta, usage } = outcome;
    record.status = 200;
    if (!outcome.stream) {
      if (plan.slowMs > 0) await sleep(plan.slowMs);
      return sendJson(res, 200, completionObject(meta, plan, usage), record);
    }
    record.error = outcome.failure?.code ?? null;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `sim-${record.seq}` });
    for (const payload of streamPayloads(meta, plan, outcome.includeUsage ? usage : null, outcome.failure)) {
      if (plan.slowMs > 0) await sleep(plan.slowMs);
      if (res.destroyed) return;
      record.firstByteAt ??= engine.now();
      res.write(`data: ${payload}\n\n`);
    }
    if (plan.faults.resetMid) {
      record.error = 'reset';
      // What was written goes out first: the client sees content, then the connection drop.
      await new Promise<void>((resolve) => res.write('', () => resolve()));
      res.socket?.destroy();
      return;
    }
    res.end();
  }

  function sendJson(res: ServerResponse, status: number, value: unknown, record?: SimRecord, extra: Record<string, string> = {}): void {
    if (res.destroyed) return;
    const text = JSON.stringify(value);
    const headers: Record<string, string | number> = { ...extra, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
    if (record !== undefined) {
      headers['x-request-id'] = `sim-${record.seq}`;
      record.firstByteAt ??= engine.now();
    }
    res.writeHead(status, headers).end(text);
  }

  function admin(method: string, url: URL, res: ServerResponse): void {
    const action = `${method} ${url.pathname}`;
    switch (action) {
      case 'GET /_sim/stats':
        return sendJson(res, 200, stats());
      case 'GET /_sim/requests':
        return sendJson(res, 200, engine.records);
      case 'POST /_sim/reset':
        resetAll();
        return sendJson(res, 200, { ok: true });
      case 'POST /_sim/advance': {
        const ms = Number(url.searchParams.get('ms'));
        if (!Number.isFinite(ms) || ms < 0) return sendJson(res, 400, new SimError(400, 'bad_argument', 'ms must be a non-negative number.', 'ms').body());
        engine.advance(ms);
        return sendJson(res, 200, { ok: true, now: engine.now() });
      }
      default:
        return sendJson(res, 404, new SimError(404, 'unknown_url', `Unknown admin request: ${action}.`).body());
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;

  return {
    url: `${origin}/v1`,
    origin,
    urlFor: (m) => `${origin}/${m}/v1`,
    requests: engine.records,
    anthropicRequests: anthropic.records,
    geminiRequests: gemini.records,
    stats,
    reset: resetAll,
    advance: (ms) => engine.advance(ms),
    now: () => engine.now(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}

/** `[[oversized]]` on an error: the same error, its message made OVERSIZED_BYTES longer. */
function oversizedError(error: SimError): unknown {
  const body = error.body();
  body.error.message += ' ' + 'x'.repeat(OVERSIZED_BYTES);
  return body;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
