/**
 * Who may reach the proxy's endpoints from where. A web page open in the user's browser can post
 * to 127.0.0.1 (a `text/plain` body needs no preflight) and a rebound DNS name can make the
 * browser treat the proxy as the page's own origin; either would spend the configured keys. So:
 * bodies are `application/json` only (the parser refuses the rest, 415); a request a browser
 * sends for a page (`Origin`) is refused unless that origin is allowed; and while the proxy listens
 * on loopback, a `Host` that is not a loopback name (nor allowed) is refused.
 */
import { ProxyError } from '../core/errors.js';
import type { Config } from '../config/types.js';

const LOOPBACK_NAMES = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export class RequestGuard {
  readonly #origins: ReadonlySet<string>;
  readonly #hosts: ReadonlySet<string>;
  readonly #loopbackOnly: boolean;

  constructor(config: Pick<Config, 'allowedOrigins' | 'allowedHosts' | 'listen'>) {
    this.#origins = new Set(config.allowedOrigins);
    this.#hosts = new Set(config.allowedHosts);
    this.#loopbackOnly = listensOnLoopback(config.listen);
  }

  /** Throws the refusal for a request that may not be served; a client's own requests pass. */
  check(headers: { origin?: string | undefined; host?: string | undefined }): void {
    const origin = headers.origin;
    if (origin !== undefined && origin !== '' && !this.#origins.has(origin)) throw new ProxyError('origin_refused', { origin });
    const host = (headers.host ?? '').toLowerCase();
    if (this.#hosts.has(host) || this.#hosts.has(hostName(host))) return;
    if (this.#loopbackOnly && !LOOPBACK_NAMES.test(hostName(host))) throw new ProxyError('host_refused', { host: host === '' ? '(none)' : host });
  }
}

/** `name:port`, `[v6]:port` -> the name. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** The proxy listens on a loopback address: only this machine can reach it. */
export function listensOnLoopback(listen: { host: string }): boolean {
  const host = listen.host.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}
