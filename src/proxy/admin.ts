/**
 * Admin routes: `GET /admin/sessions` and `GET /admin/sessions/:id`, the JSON of `proxy sessions
 * --json` and `proxy stats SESSION --json`, at the config's prices. They exist only when the
 * config has an admin key (without one they are 404, like any unknown route) and answer only a
 * request carrying it as `Authorization: Bearer <key>` (401 otherwise).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/types.js';
import { sha256Hex } from '../core/canonical.js';
import { ProxyError } from '../core/errors.js';
import { listSessionSummaries, readSessionStats, type SessionSource } from '../stats/collect.js';
import { pricesFromConfig } from '../stats/prices.js';

export interface AdminDeps {
  config: Pick<Config, 'adminKey' | 'models' | 'providers' | 'providerRoutes'>;
  /** The session store (a LogStore); read without its writer lock. */
  store: SessionSource;
}

export function registerAdmin(app: FastifyInstance, deps: AdminDeps): void {
  const key = deps.config.adminKey;
  if (key === undefined) return;
  // Compared as digests: equal lengths for timingSafeEqual, and the key's length is not leaked.
  const want = digest(`Bearer ${key.reveal()}`);
  const prices = pricesFromConfig(deps.config);
  const authorize = async (req: FastifyRequest) => {
    const got = digest(req.headers.authorization ?? '');
    if (!timingSafeEqual(got, want)) {
      throw new ProxyError('unauthorized', { detail: 'The admin routes need the admin key: Authorization: Bearer <admin key>.' });
    }
  };
  app.get('/admin/sessions', { onRequest: authorize }, async () => listSessionSummaries(deps.store, prices));
  app.get<{ Params: { id: string } }>('/admin/sessions/:id', { onRequest: authorize }, async (req) =>
    readSessionStats(deps.store, req.params.id, prices));
}

function digest(text: string): Buffer {
  return Buffer.from(sha256Hex(text), 'hex');
}
