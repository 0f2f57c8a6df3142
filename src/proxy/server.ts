/** Compose the proxy from config: store, sessions, upstream pools, metrics, app; listen. */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config/types.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { createMetrics, type Metrics } from '../metrics/registry.js';
import { SessionManager } from '../session/manager.js';
import { buildApp } from './app.js';
import { checkExposure, ClientAuth } from './client-auth.js';
import { KeyRefresh } from './key-refresh.js';
import { ClientLimits } from './client-limits.js';
import { Drain } from './drain.js';
import { SpendLedger } from './spend-ledger.js';
import { ImageStore } from './images.js';
import { Upstreams } from './upstream.js';
import { createTracing } from '../tracing/tracing.js';

export interface RunningProxy {
  /** `http://host:port` (no `/v1`). */
  url: string;
  app: FastifyInstance;
  sessions: SessionManager;
  store: Store;
  metrics: Metrics;
  /**
   * Stop accepting, let the requests in flight finish (at most `graceMs`, the config's
   * `drain_seconds` when not given), then cut what is left; resolves with how many requests were
   * in flight when it began and how many were cut.
   */
  drain(graceMs?: number): Promise<{ waited: number; cut: number }>;
  close(): Promise<void>;
}

export async function startProxy(config: Config, opts: { now?: () => Date; logger?: FastifyBaseLogger; warn?: (line: string) => void } = {}): Promise<RunningProxy> {
  const now = opts.now ?? (() => new Date());
  const metrics = createMetrics();
  // A log sync waits for the image writes begun before it: a durable line never names a missing image;
  // events read from a shared store have their images fetched before a request is built on them.
  const warn = opts.warn ?? (opts.logger === undefined ? (line: string) => process.stderr.write(`prefix-proxy: ${line}\n`) : (line: string) => opts.logger!.warn(line));
  const store = await openStore({
    kind: config.store.kind, dataDir: config.dataDir, urlEnv: config.store.urlEnv, pool: config.store.pool, lockWaitMs: config.store.lockWaitMs,
    connectTimeoutMs: config.store.connectTimeoutMs, recover: true, startupWaitMs: config.store.startupWaitMs, warn,
    durability: config.sessions.durability, beforeSync: () => images.written(), afterRead: (events) => images.preload(events),
    onRedact: (_session, _seq, hits) => {
      for (const kind of hits) metrics.redactions.inc({ kind });
    },
  });
  const images = new ImageStore(config.dataDir, { durable: config.sessions.durability === 'fsync', blobs: store.blobs, now: () => now().getTime() });
  const sessions = new SessionManager(store, {
    now, idleMs: config.sessions.idleMinutes * 60_000, maxLive: config.sessions.maxLive, maxLiveBytes: config.sessions.maxLiveMb * 2 ** 20, warn,
    ...(config.sessions.locateDays > 0 ? { forgetAfterMs: config.sessions.locateDays * 86_400_000 } : {}),
  });
  try {
    await sessions.init();
  } catch (err) {
    await store.close();
    throw err;
  }
  sessions.startSweeping();
  const upstreams = new Upstreams();
  // Spend survives a restart: the ledger is read back before the first request is admitted.
  const clock = () => now().getTime();
  // On PostgreSQL the replicas share one ledger in the database; on files it is this process's own.
  const opened = config.auth.keys.length === 0 || store.ledger !== undefined ? undefined : await SpendLedger.open(config.dataDir, { durable: config.sessions.durability === 'fsync', now: clock() });
  const limits = new ClientLimits(config.auth.keys, opened?.entries ?? [], {
    now: clock, metrics, ...(opened === undefined ? {} : { ledger: opened.ledger }), ...(store.ledger === undefined ? {} : { shared: store.ledger }),
  });
  const tracing = await createTracing(config.tracing);
  // Keys made with `proxy keys` (PostgreSQL): loaded before the first request, then looked for every few seconds.
  const auth = new ClientAuth(config.auth);
  const keyRefresh = store.keys === undefined ? undefined : new KeyRefresh(store.keys, auth, warn);
  try {
    await keyRefresh?.refresh();
    // Keys in the store count as keys asked for, as the config's do.
    if (!auth.enabled) checkExposure(config);
  } catch (err) {
    await sessions.close();
    await store.close();
    throw err;
  }
  keyRefresh?.start(config.store.keyRefreshMs);
  const drain = new Drain();
  const app = buildApp({ config, sessions, upstreams, images, metrics, limits, store, now, tracing, drain, auth, ...(opts.logger === undefined ? {} : { logger: opts.logger }) });
  await app.listen({ host: config.listen.host, port: config.listen.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  return {
    url: `http://${host}:${port}`,
    app, sessions, store, metrics,
    drain: (graceMs = config.drainMs) => drain.drain(app.server, graceMs),
    async close() {
      keyRefresh?.stop();
      await app.close();
      await upstreams.close();
      await sessions.close();
      await store.close();
      await opened?.ledger.close();
      await tracing.shutdown();
    },
  };
}
