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

  constructor(auth: AuthConfig) {
    this.#keys = auth.keys.map((key) => ({ key, digest: Buffer.from(key.sha256, 'hex') }));
  }

  get enabled(): boolean {
    return this.#keys.length > 0;
  }

  /** The client's key, when keys are configured (undefined otherwise); throws 401 for none or an unknown one. */
  identify(presented: string | undefined): ClientKey | undefined {
    if (!this.enabled) return undefined;
    if (presented === undefined || presented === '') throw new ProxyError('unauthorized', { detail: 'This proxy needs a client key: send it as the API key (Authorization: Bearer, or x-api-key).' });
    const digest = createHash('sha256').update(presented).digest();
    const found = this.#keys.find((k) => timingSafeEqual(k.digest, digest));
    if (found === undefined) throw new ProxyError('unauthorized', { detail: 'The client key is not one of this proxy\'s.' });
    return found.key;
  }

  /** Throws 403 when the key is limited to other routes. */
  allow(key: ClientKey | undefined, route: string): void {
    if (key?.models === undefined || key.models.includes(route)) return;
    throw new ProxyError('model_not_allowed', { name: key.name, model: route, allowed: key.models.join(', ') || 'none' });
  }
}

/** Refuse to listen beyond loopback with nobody's key asked for, unless told. */
export function checkExposure(config: Pick<Config, 'listen' | 'auth'>): void {
  if (listensOnLoopback(config.listen) || config.auth.keys.length > 0 || config.auth.open) return;
  throw new ProxyError('exposed_without_keys', { host: config.listen.host });
}
