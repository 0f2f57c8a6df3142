/**
 * The store a config names (`[store]`, docs/scaling.md): the files under the data directory, or
 * PostgreSQL at the URL in the environment variable `url_env` (never written in the config file).
 */
import { ProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import type { RedactionListener } from '../log/session-log.js';
import { FileStore } from './files.js';
import type { Store } from './types.js';

export interface StoreSettings {
  kind: 'files' | 'postgres';
  dataDir: string;
  urlEnv: string;
  pool?: number;
  lockWaitMs?: number;
  connectTimeoutMs?: number;
  durability?: 'fsync' | 'write';
  beforeSync?: () => Promise<void>;
  /** PostgreSQL: awaited with the events a writer reads that this process may not have seen. */
  afterRead?: (events: readonly LogEvent[]) => Promise<void>;
  onRedact?: RedactionListener;
  /**
   * The files: put back the first syncs a crashed process left in its journal before anything is
   * read (src/log/first-syncs.ts). The proxy asks it; the CLI's readers do not.
   */
  recover?: boolean;
  /** PostgreSQL: how long to wait for a database not reachable yet at the open (`startup_wait_seconds`); none: fail at once. */
  startupWaitMs?: number;
  /** Hears each wait for the database, to say so. */
  warn?: (line: string) => void;
}

export async function openStore(s: StoreSettings, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  const common = {
    ...(s.durability === undefined ? {} : { durability: s.durability }),
    ...(s.beforeSync === undefined ? {} : { beforeSync: s.beforeSync }),
    ...(s.onRedact === undefined ? {} : { onRedact: s.onRedact }),
  };
  if (s.kind === 'files') {
    const store = new FileStore(s.dataDir, common);
    if (s.recover === true) await store.recoverFirstSyncs();
    return store;
  }
  const url = env[s.urlEnv];
  if (url === undefined || url === '') {
    throw new ProxyError('config_invalid', { file: 'config', key: 'store.url_env', detail: `[store] kind = "postgres" reads the database URL from $${s.urlEnv}, which is not set` });
  }
  // Loaded only here: a proxy on the files never holds the driver in memory.
  const { PgStore } = await import('./pg/store.js');
  const { connectWhenThere } = await import('./pg/startup-wait.js');
  const connect = () => PgStore.connect(url, { ...common, ...(s.afterRead === undefined ? {} : { afterRead: s.afterRead }), ...(s.pool === undefined ? {} : { poolSize: s.pool }), ...(s.lockWaitMs === undefined ? {} : { lockWaitMs: s.lockWaitMs }),
    ...(s.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: s.connectTimeoutMs }) });
  return connectWhenThere(connect, s.startupWaitMs ?? 0, (err, retryInMs, leftMs) => {
    s.warn?.(`the database is not reachable yet (${err.message}); trying again in ${(retryInMs / 1000).toFixed(2)} s, for ${Math.ceil(leftMs / 1000)} s more (store.startup_wait_seconds)`);
  });
}
