/**
 * Client keys (`[auth] keys`): a request to a conversation endpoint presents one (bearer or
 * `x-api-key`, as its wire does), matched by SHA-256 in constant time; a key may be limited to
 * some routes. With keys configured, the key a client presents is the proxy's, never passed on
 * upstream. Without keys, the proxy serves loopback only unless told to be open
 * (docs/decisions.md, Who may call from where).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ProxyError } from '../core/errors.js';
import type { AuthConfig, ClientKey, Config } from '../config/types.js';
import { listensOnLoopback } from './request-guard.js';

export class ClientAuth {
  readonly #keys: readonly { key: ClientKey; digest: Buffer }[];
  /** Keys made with `proxy keys` (the store's), by SHA-256 in hex; replaced whole as they change. */
  #stored = new Map<string, ClientKey>();

  constructor(auth: AuthConfig) {
    this.#keys = auth.keys.map((key) => ({ key, digest: Buffer.from(key.sha256, 'hex') }));
  }

  get enabled(): boolean {
    return this.#keys.length > 0 || this.#stored.size > 0;
  }

  /** Every key a client may present: the config's, then the store's. */
  keys(): { key: ClientKey; source: 'config' | 'stored' }[] {
    return [...this.#keys.map((k) => ({ key: k.key, source: 'config' as const })), ...[...this.#stored.values()].map((key) => ({ key, source: 'stored' as const }))];
  }

  /** The store's live keys (revoked ones left out); a config key's name wins over a stored key's. */
  setStored(keys: readonly ClientKey[]): void {
    const names = new Set(this.#keys.map((k) => k.key.name));
    this.#stored = new Map(keys.filter((k) => !names.has(k.name)).map((k) => [k.sha256.toLowerCase(), k]));
  }

  /** The client's key, when keys are configured (undefined otherwise); throws 401 for none or an unknown one. */
  identify(presented: string | undefined): ClientKey | undefined {
    if (!this.enabled) return undefined;
    if (presented === undefined || presented === '') throw new ProxyError('unauthorized', { detail: 'This proxy needs a client key: send it as the API key (Authorization: Bearer, or x-api-key).' });
    const digest = createHash('sha256').update(presented).digest();
    const found = this.#keys.find((k) => timingSafeEqual(k.digest, digest)) ?? lookup(this.#stored, digest);
    if (found === undefined) throw new ProxyError('unauthorized', { detail: 'The client key is not one of this proxy\'s.' });
    return found.key;
  }

  /** Throws 403 when the key is limited to other routes. */
  allow(key: ClientKey | undefined, route: string): void {
    if (key?.models === undefined || key.models.includes(route)) return;
    throw new ProxyError('model_not_allowed', { name: key.name, model: route, allowed: key.models.join(', ') || 'none' });
  }
}

/** A stored key by its digest: a map lookup by the hash, which says nothing of the key itself. */
function lookup(stored: ReadonlyMap<string, ClientKey>, digest: Buffer): { key: ClientKey } | undefined {
  const key = stored.get(digest.toString('hex'));
  return key === undefined ? undefined : { key };
}

/** Refuse to listen beyond loopback with nobody's key asked for, unless told. */
export function checkExposure(config: Pick<Config, 'listen' | 'auth'>): void {
  if (listensOnLoopback(config.listen) || config.auth.keys.length > 0 || config.auth.open) return;
  throw new ProxyError('exposed_without_keys', { host: config.listen.host });
}
