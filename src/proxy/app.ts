/**
 * The fastify app: routes, the JSON body parser with OpenAI-shaped errors, the error handler.
 * Built from its parts so tests can start it on port 0 with their own store and simulator.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ProxyError, errorBody, isProxyError } from '../core/errors.js';
import { listModels } from '../config/routes.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/registry.js';
import type { SessionManager } from '../session/manager.js';
import { FileStore } from '../store/files.js';
import type { Store } from '../store/types.js';
import { LiveFeed } from '../inspector/live.js';
import type { KeyBudget } from '../inspector/budgets.js';
import { inspectorPlugin } from '../inspector/routes.js';
import { withoutSameOrigin } from '../inspector/same-origin.js';
import { registerAdmin } from './admin.js';
import { INBOUND_DIALECTS } from '../dialects/registry.js';
import type { InboundDialect } from '../dialects/types.js';
import { countTokens } from './count-tokens.js';
import { handleRequest, routeLabels, UNROUTED } from './pipeline/index.js';
import type { ImageStore } from './images.js';
import { ClientAuth } from './client-auth.js';
import { periodEnd, periodStart } from './budget-period.js';
import { ClientLimits } from './client-limits.js';
import { Drain } from './drain.js';
import { RequestGuard } from './request-guard.js';
import { writeLine } from './request-log.js';
import { recordStorage } from './record.js';
import { WireMemo } from './wire-memo.js';
import { BodyListMemo } from './list-memo.js';
import { BodyMemo, MIN_BYTES as BODY_MEMO_MIN_BYTES } from './body-memo.js';
import { HeadMemo } from './head-memo.js';
import type { Upstreams } from './upstream.js';
import { clientErrorHandler } from './header-overflow.js';
import type { Tracing } from '../tracing/tracing.js';
import { fetchCacheApi } from './gemini-cache-api.js';
import { GeminiCaches } from './gemini-caches.js';

/** The inbound wire of each conversation endpoint, so that its errors are answered in that wire's shape. */
const inboundOf = new Map<string, InboundDialect>(INBOUND_DIALECTS.flatMap((d) => d.paths.map((p) => [p, d] as const)));
/** Each wire's other endpoints (token counts): errors in that wire's shape too, not counted as conversation requests. */
const errorWireOf = new Map<string, InboundDialect>([
  ...inboundOf,
  ...INBOUND_DIALECTS.flatMap((d) => (d.countTokens === undefined ? [] : [[d.countTokens.path, d] as const])),
]);

export interface AppDeps {
  config: Config;
  sessions: SessionManager;
  upstreams: Upstreams;
  images: ImageStore;
  metrics: Metrics;
  /** Keeps wire serialisations between requests; made here from the config when not given. */
  wireMemo?: WireMemo;
  /** Keeps recent client bodies so the next one of a conversation parses only what is new. */
  bodyMemo?: BodyMemo;
  /** Parses the head a client repeats once, for bodies under the body memo's floor. */
  headMemo?: HeadMemo;
  /** Keeps each conversation's last upstream body; made here from the config when not given. */
  listMemo?: BodyListMemo;
  /** Client keys; made here from the config when not given. */
  auth?: ClientAuth;
  /** Client keys' budgets and rates; made here from the config when not given (then spend is not kept across restarts). */
  limits?: ClientLimits;
  /** What the admin routes and the inspector read; the files under the data directory when not given. */
  store?: Store;
  /** The inspector's live feed, told of each answered request; made here when not given. */
  live?: LiveFeed;
  /** The inspector's page files (`dist/ui/` when not given) and how fresh its sessions index is kept (ms). */
  inspector?: { uiDir?: string; refreshMs?: number; pollMs?: number; heartbeatMs?: number };
  now: () => Date;
  /** Spans of each request (`[tracing]`); none: no traces. */
  tracing?: Tracing;
  /** Where the operator's lines go (pino); none: the app logs nothing. */
  logger?: FastifyBaseLogger;
  /** Counts requests in flight and refuses new ones once a drain has begun; made here when not given. */
  drain?: Drain;
  /** Gemini's explicit context caches; made here when a route asks for them and none is given. */
  geminiCaches?: GeminiCaches;
}

/** Client body bytes kept for the next request of each conversation, at most: one buffer, sized for the bodies met. */
const BODY_MEMO_BYTES = 8 * 2 ** 20;

export function buildApp(given: AppDeps): FastifyInstance {
  const deps: AppDeps = {
    ...given,
    // `wire_cache_mb` bounds the two memos together, half each.
    wireMemo: given.wireMemo ?? new WireMemo(given.config.sessions.wireCacheMb * 2 ** 19),
    bodyMemo: given.bodyMemo ?? new BodyMemo(BODY_MEMO_BYTES),
    headMemo: given.headMemo ?? new HeadMemo(),
    listMemo: given.listMemo ?? new BodyListMemo(given.config.sessions.wireCacheMb * 2 ** 19),
    auth: given.auth ?? new ClientAuth(given.config.auth),
    live: given.live ?? new LiveFeed({ pollMs: given.inspector?.pollMs ?? 5000, heartbeatMs: given.inspector?.heartbeatMs ?? 15_000 }),
    limits: given.limits ?? new ClientLimits(given.config.auth.keys, [], { now: () => given.now().getTime(), metrics: given.metrics }),
    drain: given.drain ?? new Drain(),
    geminiCaches: given.geminiCaches ?? explicitCaches(given),
  };
  // fastify's own two lines per request are off: the pipeline writes one with what it knows.
  const clientError = clientErrorHandler((path) => errorWireOf.get(path));
  const app = deps.logger === undefined
    ? Fastify({ logger: false, bodyLimit: deps.config.bodyLimit, clientErrorHandler: clientError })
    : Fastify({ loggerInstance: deps.logger, logController: new LogController({ disableRequestLogging: true }), bodyLimit: deps.config.bodyLimit, clientErrorHandler: clientError });

  // Parse JSON ourselves: one parse, and an OpenAI-shaped 400 naming what was wrong. Only JSON:
  // any other type is a 415 (src/proxy/request-guard.ts says why).
  app.removeAllContentTypeParsers();
  const bodyMemo = deps.bodyMemo!;
  const headMemo = deps.headMemo!;
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      const bytes = body as Buffer;
      const memo = bytes.length < BODY_MEMO_MIN_BYTES ? headMemo : bodyMemo;
      done(null, memo.parse(bytes, inboundOf.get(req.routeOptions.url ?? '')?.bodyList));
    } catch (err) {
      done(new ProxyError('invalid_json', { detail: (err as Error).message }), undefined);
    }
  });

  app.addHook('onResponse', async (req, reply) => {
    if (inboundOf.has(req.routeOptions.url ?? '')) writeLine(req.log, req, reply.statusCode, reply.elapsedTime);
  });

  deps.drain!.register(app);
  const guard = new RequestGuard(deps.config);
  app.addHook('onRequest', async (req) => {
    guard.check(withoutSameOrigin(req.url, req.headers));
  });

  app.setErrorHandler((err, req, reply) => {
    const proxyErr = toProxyError(err, deps.config.bodyLimit, req.headers['content-type']);
    if (proxyErr.status >= 500) app.log.error(err);
    // Every conversation request is counted once: answers here (errors before any stream, the
    // body parser's included), the rest where the pipeline answers them; in the client's wire.
    const url = req.routeOptions.url ?? '';
    if (inboundOf.has(url)) {
      deps.metrics.requests.inc({ ...(routeLabels.get(req) ?? UNROUTED), status: String(proxyErr.status) });
    }
    const inbound = errorWireOf.get(url);
    for (const [name, value] of Object.entries(proxyErr.headers)) void reply.header(name, value);
    void reply.status(proxyErr.status).send(inbound === undefined ? errorBody(proxyErr) : inbound.errorBody(proxyErr));
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? ''; // a Gemini client's ?key= stays out of the answer
    // A WebSocket asked of a conversation endpoint (Codex's built-in provider tries the Responses
    // WebSocket first): 426 tells it to go on over HTTP, which it then does at once, where a 404
    // cost five tries and seconds (docs/inbound.md).
    const served = inboundOf.get(path);
    if (served !== undefined && req.headers.upgrade?.toLowerCase() === 'websocket') {
      const refused = new ProxyError('invalid_request', { detail: `The proxy serves ${path} over HTTP only: POST the request.` }, { status: 426 });
      void reply.status(426).send(served.errorBody(refused));
      return;
    }
    const err = new ProxyError('invalid_request', { detail: `Unknown route ${req.method} ${path}. The proxy serves POST /v1/chat/completions, POST /v1/messages (and /v1/messages/count_tokens), POST /v1/responses (and /v1/responses/compact), POST /v1beta/models/{model}:generateContent (and :streamGenerateContent, :countTokens), GET /v1/models, GET /healthz, GET /readyz, GET /metrics, (with an admin key) GET /admin/sessions, and the inspector at /ui/ and /api/.` }, { status: 404 });
    const inbound = wireOwning(path);
    void reply.status(404).send(inbound === undefined ? errorBody(err) : inbound.errorBody(err));
  });

  const store = deps.store ?? new FileStore(deps.config.dataDir);
  registerAdmin(app, { config: deps.config, store });
  void app.register(inspectorPlugin, {
    config: deps.config, store, live: deps.live!, now: deps.now, budgets: () => keyBudgets(deps, store),
    ...(deps.inspector?.uiDir === undefined ? {} : { uiDir: deps.inspector.uiDir }),
    ...(deps.inspector?.refreshMs === undefined ? {} : { refreshMs: deps.inspector.refreshMs }),
  });
  // A damaged session log costs that session only: the proxy is healthy, and says how many it set aside.
  app.get('/healthz', async () => ({ status: 'ok', damaged_sessions: deps.sessions.damaged.size }));
  // Whether a balancer should send requests here: not while draining, nor while the store is out of reach.
  app.get('/readyz', async (_req, reply) => {
    const store = deps.drain!.draining ? 'draining' : await (deps.store?.ping() ?? Promise.resolve()).then(() => 'ok', (err: unknown) => (err instanceof Error ? err.message : String(err)));
    const ready = store === 'ok';
    void reply.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'unavailable', ...(ready ? {} : { reason: store }) };
  });
  app.get('/v1/models', async () => {
    const models = listModels(deps.config).map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: m.provider }));
    // With no model configured (a fresh `npm start`), name the built-in simulator, so a client
    // that picks from this list has something that answers; any `provider/model` works too.
    if (models.length === 0 && Object.values(deps.config.providers).some((p) => p.builtinSim)) {
      models.push({ id: 'sim/sim', object: 'model', created: 0, owned_by: 'sim' });
    }
    return { object: 'list', data: models };
  });
  app.get('/metrics', async (_req, reply) => {
    deps.metrics.activeSessions.set(deps.sessions.liveCount);
    void reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
  for (const [path, inbound] of inboundOf) app.post(path, (req, reply) => handleRequest(inbound, req, reply, deps));
  for (const inbound of INBOUND_DIALECTS) {
    const endpoint = inbound.countTokens;
    if (endpoint !== undefined) app.post(endpoint.path, (req, reply) => countTokens(inbound, endpoint, req, reply, deps));
  }
  const caches = deps.geminiCaches;
  if (caches !== undefined) {
    geminiCachesOf.set(app, caches);
    app.addHook('onClose', () => caches.close());
  }
  return app;
}

/** Each app's Gemini caches, for the bench and tests that read their totals. */
export const geminiCachesOf = new WeakMap<FastifyInstance, GeminiCaches>();

/** Fastify's own errors (body too large, bad content) become the table's codes. */
function toProxyError(err: unknown, bodyLimit: number, contentType: string | undefined): ProxyError {
  if (isProxyError(err)) return err;
  const code = (err as { code?: string }).code;
  // Fastify's error does not carry the limit; the config does.
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ProxyError('body_too_large', { limit: bodyLimit });
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ProxyError('unsupported_media_type', { type: contentType ?? 'no type' });
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new ProxyError('invalid_json', { detail: (err as Error).message });
  }
  const status = (err as { statusCode?: number }).statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new ProxyError('invalid_request', { detail: (err as Error).message }, { status });
  return new ProxyError('internal_error', { detail: err instanceof Error ? err.message : String(err) });
}

/**
 * The one inbound wire whose paths alone start with this path's first segment (`/v1beta/`: a
 * Gemini client), so an unknown path there is answered in that client's error shape; undefined
 * where several wires share it (`/v1/`) or none does.
 */
function wireOwning(path: string): InboundDialect | undefined {
  const segment = /^\/[^/]+\//.exec(path)?.[0];
  if (segment === undefined) return undefined;
  const owners = INBOUND_DIALECTS.filter((d) => d.paths.some((p) => p.startsWith(segment)));
  return owners.length === 1 ? owners[0] : undefined;
}

/** The caches, swept while the app runs and deleted when it closes, when any model asks for them. */
function explicitCaches(deps: AppDeps): GeminiCaches | undefined {
  if (!Object.values(deps.config.models).some((m) => m.geminiCache === 'explicit')) return undefined;
  const caches = new GeminiCaches(fetchCacheApi(), {
    now: () => deps.now().getTime(), idleMs: deps.config.sessions.idleMinutes * 60_000, warn: (line) => deps.logger?.warn(line),
    stored: (route, tokenHours) => recordStorage(deps.metrics, route, tokenHours),
  });
  caches.startSweeping();
  return caches;
}

/**
 * Each client key with a budget or a rate, by name, and its spend in the current window: on a store shared by replicas, the
 * shared ledger's sum (every replica's charges); else this process's count, which the spend ledger
 * rebuilt at its start (client-limits.ts).
 */
async function keyBudgets(deps: AppDeps, store: Store): Promise<KeyBudget[]> {
  const now = deps.now().getTime();
  // Only keys with a limit have anything to show: the others cost no query.
  const limited = deps.auth!.keys()
    .filter(({ key }) => key.budgetUsd !== undefined || key.requestsPerMinute !== undefined)
    .sort((a, b) => (a.key.name < b.key.name ? -1 : a.key.name > b.key.name ? 1 : 0));
  return Promise.all(limited.map(async ({ key, source }) => {
    const spent = store.shared && store.keys !== undefined ? await store.keys.spent(key.name, periodStart(key.budgetPeriod, now)) : deps.limits!.spent(key);
    const end = periodEnd(key.budgetPeriod, now);
    return {
      key: key.name, source, budget_usd: key.budgetUsd ?? null, budget_period: key.budgetPeriod, spent_usd: spent,
      resets_at: end === undefined ? null : new Date(end).toISOString(), requests_per_minute: key.requestsPerMinute ?? null,
    };
  }));
}
