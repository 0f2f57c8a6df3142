/**
 * The inspector's routes (docs/inspector.md): the JSON under `/api/`, the live feed, the page's
 * files under `/ui/` and the login form. Read-only but for `POST /ui/login`; every route asks
 * `InspectorAccess` who the caller is first.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resolveRoute } from '../config/routes.js';
import type { Config } from '../config/types.js';
import { errorBody, isProxyError, ProxyError } from '../core/errors.js';
import { pricesFromConfig } from '../stats/prices.js';
import type { Store } from '../store/types.js';
import { InspectorAccess, isLoopbackAddress, type Viewer } from './access.js';
import type { LiveFeed } from './live.js';
import { loginPage } from './login-page.js';
import { overviewOf } from './overview.js';
import { BREAK_CAUSES } from '../core/events.js';
import { choice, integer, one, period, SORTS } from './query.js';
import type { KeyBudget } from './budgets.js';
import { requestView } from './request-view.js';
import { SessionIndex } from './session-index.js';
import { listSessions } from './session-list.js';
import { sessionDetail } from './session-view.js';
import { SECURITY_HEADERS, StaticFiles } from './static-files.js';

export interface InspectorDeps {
  config: Config;
  store: Pick<Store, 'file' | 'exists' | 'read' | 'indexSnapshot' | 'shared'>;
  live: LiveFeed;
  now: () => Date;
  /** The page's files; the build's `dist/ui/` when not given. */
  uiDir?: string;
  /** How old the sessions index's scan of log lengths may be before it is redone (ms; default 2000). */
  refreshMs?: number;
  /** The client keys with a budget or a rate, by name, and their spend (budgets.ts); none: the overview shows no budgets. */
  budgets?: () => Promise<KeyBudget[]>;
}

const MAX_SESSIONS_PAGE = 500;
const MAX_REQUESTS_PAGE = 5000;
/** The page's stylesheet (scripts/build-ui.mjs), the one file served without a login. */
const STYLESHEET = 'app.css';
/** Unreadable sessions named in a list answer; `total` counts them all. */
const MAX_UNREADABLE_NAMED = 50;

type Query = Record<string, string | undefined>;

export async function inspectorPlugin(app: FastifyInstance, deps: InspectorDeps): Promise<void> {
  const prices = pricesFromConfig(deps.config);
  const now = () => deps.now().getTime();
  const access = new InspectorAccess({ keys: deps.config.auth.keys, adminKey: deps.config.adminKey, now });
  const index = new SessionIndex(deps.store, prices, { refreshMs: deps.refreshMs ?? 2000, now, onAnswered: (s, row) => deps.live.publish(s, row) });
  deps.live.attach(index);
  const uiDir = deps.uiDir ?? defaultUiDir();
  const files = new StaticFiles(uiDir, deps.uiDir === undefined);
  const wireOf = (route: string): string | null => {
    try {
      return resolveRoute(deps.config, route).dialect.wire;
    } catch {
      return null;
    }
  };

  const viewerOf = (req: FastifyRequest): Viewer => access.check({
    authorization: req.headers.authorization,
    cookie: req.headers.cookie,
    loopbackCaller: isLoopbackAddress(req.socket.remoteAddress),
  });

  // The login form's body: the only body the inspector reads, and only here.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.addHook('onSend', async (_req, reply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
  });
  app.addHook('onClose', async () => deps.live.close());

  const api = { onRequest: async (req: FastifyRequest, reply: FastifyReply) => {
    viewerOf(req);
    void reply.header('cache-control', 'no-store');
  } };

  app.get('/api/overview', api, async (req) => {
    const q = req.query as Query;
    const entries = await index.entries();
    const budgets = (await deps.budgets?.()) ?? [];
    return { ...overviewOf(entries.values(), period(q), now()), unreadable_sessions: index.unreadable().length, budgets };
  });

  app.get('/api/sessions', api, async (req) => {
    const q = req.query as Query;
    const query = {
      period: period(q, 'all'),
      model: one(q, 'model'),
      key: one(q, 'key'),
      q: one(q, 'q'),
      cause: one(q, 'cause') === undefined ? undefined : choice(q, 'cause', BREAK_CAUSES, 'none'),
      sort: choice(q, 'sort', SORTS, 'last_active'),
      dir: choice(q, 'dir', ['asc', 'desc'] as const, 'desc'),
      offset: integer(q, 'offset', 0, 1e9),
      limit: integer(q, 'limit', 50, MAX_SESSIONS_PAGE),
    };
    const entries = await index.entries();
    const unreadable = index.unreadable();
    return { ...listSessions(entries.values(), query, now(), deps.config.sessions.locateDays), unreadable: { total: unreadable.length, items: unreadable.slice(0, MAX_UNREADABLE_NAMED) } };
  });

  app.get<{ Params: { id: string } }>('/api/sessions/:id', api, async (req) => {
    const q = req.query as Query;
    const page = { offset: integer(q, 'offset', 0, 1e9), limit: integer(q, 'limit', MAX_REQUESTS_PAGE, MAX_REQUESTS_PAGE) };
    return sessionDetail(deps.store, req.params.id, prices, await index.entries(), page, deps.config.sessions.locateDays);
  });

  app.get<{ Params: { id: string; seq: string } }>('/api/sessions/:id/requests/:seq', api, async (req) => {
    const seq = integer({ seq: req.params.seq }, 'seq', 0, Number.MAX_SAFE_INTEGER);
    return requestView(deps.store, req.params.id, seq, wireOf, prices);
  });

  app.get('/api/live', api, async (req, reply) => {
    const session = one(req.query as Query, 'session');
    if (session !== undefined) deps.store.file(session); // an id the store would refuse is a 400 now, not a silent stream
    await index.entries(); // rows answered from here on are new
    reply.hijack();
    deps.live.watch(reply.raw, session, { ...SECURITY_HEADERS });
  });

  app.get('/ui', async (_req, reply) => reply.redirect('/ui/', 302));
  app.get('/ui/*', async (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    const page = path === '' || path === 'index.html' || !path.includes('.');
    try {
      // The stylesheet holds no data: the login form is drawn with it before anyone logs in.
      if (path !== STYLESHEET) viewerOf(req);
    } catch (err) {
      if (!page || !isProxyError(err)) throw err;
      return sendLogin(reply, err.status, access.required ? undefined : err.message);
    }
    const found = await files.find(path);
    if ('missing' in found) {
      const detail = found.missing === 'build'
        ? `The inspector's page is not built: ${uiDir} has no index.html (npm run build builds it).`
        : `No file /ui/${path}.`;
      return reply.status(404).type('application/json; charset=utf-8').send(errorBody(new ProxyError('invalid_request', { detail }, { status: 404 })));
    }
    void reply.header('cache-control', 'no-cache').header('etag', found.file.etag).type(found.file.type);
    if (req.headers['if-none-match'] === found.file.etag) return reply.status(304).send();
    return reply.send(found.file.body);
  });

  // The one state-changing route. CSRF: a foreign Origin is refused before this runs (the request
  // guard; only the proxy's own origin passes), and the cookie it sets is SameSite=Strict, so no
  // other site's page can post here with the browser's login or use the one it sets.
  app.post('/ui/login', async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const key = typeof body.key === 'string' ? body.key : '';
    const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
    let token: string;
    try {
      if (key === '') throw new ProxyError('unauthorized', { detail: 'Give the admin key.' });
      token = access.login(key);
    } catch (err) {
      if (!form || !isProxyError(err)) throw err;
      return sendLogin(reply, err.status, err.message);
    }
    const secure = req.protocol === 'https';
    void reply.header('set-cookie', access.cookie(token, secure)).header('cache-control', 'no-store');
    return form ? reply.redirect('/ui/', 303) : reply.send({ ok: true });
  });
}

function sendLogin(reply: FastifyReply, status: number, message: string | undefined): FastifyReply {
  return reply.status(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(loginPage(message));
}

/** `dist/ui/` beside the compiled code (dist/inspector/ -> dist/ui/), or the checkout's when run from src/. */
function defaultUiDir(): string {
  const built = join(import.meta.dirname, '..', 'ui');
  if (existsSync(join(built, 'index.html'))) return built;
  return join(import.meta.dirname, '..', '..', 'dist', 'ui');
}
