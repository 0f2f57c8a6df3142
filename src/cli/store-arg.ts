/**
 * Which store a command reads (docs/scaling.md): `--store files` (the default: `--data-dir`, else
 * $PROXY_DATA_DIR or ./data) or `--store postgres` (the URL in $PREFIX_PROXY_DATABASE_URL, or in
 * the variable `--url-env` names); with `--config`, the config's [store] unless `--store` says.
 */
import type { Config } from '../config/types.js';
import { ProxyError } from '../core/errors.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { dataDirArg } from './args.js';

export const STORE_OPTIONS = {
  'data-dir': { type: 'string' },
  store: { type: 'string' },
  'url-env': { type: 'string' },
} as const;

export const STORE_USAGE = '[--data-dir DIR | --store postgres [--url-env VAR]]';

export interface StoreValues {
  'data-dir'?: string | undefined;
  store?: string | undefined;
  'url-env'?: string | undefined;
}

export function storeKind(value: string | undefined, fallback: 'files' | 'postgres'): 'files' | 'postgres' {
  if (value === undefined) return fallback;
  if (value !== 'files' && value !== 'postgres') throw new ProxyError('bad_argument', { detail: `--store must be "files" or "postgres", got ${JSON.stringify(value)}` });
  return value;
}

export function storeFromArgs(values: StoreValues, config?: Config, kind?: 'files' | 'postgres'): Promise<Store> {
  return openStore({
    kind: kind ?? storeKind(values.store, config?.store.kind ?? 'files'),
    dataDir: values['data-dir'] ?? config?.dataDir ?? dataDirArg(undefined),
    urlEnv: values['url-env'] ?? config?.store.urlEnv ?? 'PREFIX_PROXY_DATABASE_URL',
  });
}

/** Runs `fn` on the store and closes it however `fn` ends. */
export async function withStore<T>(store: Store, fn: (store: Store) => Promise<T>): Promise<T> {
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
