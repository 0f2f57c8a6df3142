/**
 * Who may open the inspector (docs/inspector.md, Who may see it). Without `[auth] keys` and
 * without an admin key it is open to callers on this machine only. Otherwise a request shows an
 * admin's credential: `Authorization: Bearer` with a key marked `admin = true` or the admin key,
 * or the cookie `POST /ui/login` set. The cookie holds an HMAC token naming the key and its
 * expiry, never the key.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ClientKey, Secret } from '../config/types.js';
import { ProxyError } from '../core/errors.js';

export const COOKIE = 'pp_inspector';
/** How long a login lasts. */
const TOKEN_MS = 12 * 3_600_000;
/** The name a token gives the admin key (not a valid key name, so no key can take it). */
const ADMIN_KEY = '(admin key)';

export interface Viewer {
  /** The key's name, `(admin key)`, or `loopback` where no credential is asked for. */
  name: string;
}

export interface AccessOptions {
  keys: readonly ClientKey[];
  adminKey: Secret | undefined;
  now: () => number;
}

/** Who may open the inspector under these keys, in words (`proxy serve`'s banner). */
export function inspectorAudience(keys: readonly ClientKey[], adminKey: Secret | undefined): string {
  if (keys.length === 0 && adminKey === undefined) return 'from this machine';
  const admins = keys.filter((k) => k.admin === true).length;
  const named = [...(adminKey === undefined ? [] : ['the admin key']), ...(admins > 0 ? [`${admins} client key(s) marked admin`] : [])];
  return named.length === 0 ? 'closed: no admin key and no client key marked admin' : `with ${named.join(' or ')}`;
}

export class InspectorAccess {
  readonly #keys: readonly { key: ClientKey; digest: Buffer }[];
  readonly #admin: Buffer | undefined;
  readonly #secret: Buffer;
  readonly #now: () => number;

  constructor(opts: AccessOptions) {
    this.#keys = opts.keys.map((key) => ({ key, digest: Buffer.from(key.sha256, 'hex') }));
    this.#admin = opts.adminKey === undefined ? undefined : sha256(opts.adminKey.reveal());
    // With an admin key, every replica that holds it signs alike; without one, a login lasts as
    // long as this process (docs/inspector.md).
    this.#secret = opts.adminKey === undefined ? randomBytes(32) : createHmac('sha256', opts.adminKey.reveal()).update('prefix-proxy inspector cookie v1').digest();
    this.#now = opts.now;
  }

  /** Whether a credential is asked for at all. */
  get required(): boolean {
    return this.#keys.length > 0 || this.#admin !== undefined;
  }

  /** The viewer of a request; throws `unauthorized` (401) or `admin_only` (403). */
  check(req: { authorization: string | undefined; cookie: string | undefined; loopbackCaller: boolean }): Viewer {
    if (!this.required) {
      if (req.loopbackCaller) return { name: 'loopback' };
      throw new ProxyError('unauthorized', { detail: 'Without [auth] keys or an admin key, the inspector is open to this machine only.' });
    }
    const bearer = /^Bearer (.+)$/i.exec(req.authorization ?? '')?.[1];
    if (bearer !== undefined) return this.#byKey(bearer);
    const token = cookieValue(req.cookie, COOKIE);
    const viewer = token === undefined ? undefined : this.#byToken(token);
    if (viewer !== undefined) return viewer;
    throw new ProxyError('unauthorized', { detail: 'The inspector needs an admin key: log in at /ui/, or send Authorization: Bearer <key>.' });
  }

  /** Checks a key given to the login form; the cookie's token when it is an admin's. */
  login(presented: string): string {
    const viewer = this.#byKey(presented);
    const expires = this.#now() + TOKEN_MS;
    const body = `v1.${Buffer.from(viewer.name).toString('base64url')}.${expires}`;
    return `${body}.${this.#sign(body)}`;
  }

  /** The Set-Cookie value for a token; `Secure` when the page came over HTTPS. */
  cookie(token: string, secure: boolean): string {
    return `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${TOKEN_MS / 1000}${secure ? '; Secure' : ''}`;
  }

  #byKey(presented: string): Viewer {
    const digest = sha256(presented);
    if (this.#admin !== undefined && timingSafeEqual(digest, this.#admin)) return { name: ADMIN_KEY };
    const found = this.#keys.find((k) => timingSafeEqual(k.digest, digest));
    if (found === undefined) throw new ProxyError('unauthorized', { detail: 'The key is not one of this proxy\'s.' });
    if (found.key.admin !== true) throw new ProxyError('admin_only', { name: found.key.name });
    return { name: found.key.name };
  }

  #byToken(token: string): Viewer | undefined {
    const parts = token.split('.');
    if (parts.length !== 4 || parts[0] !== 'v1') return undefined;
    const body = parts.slice(0, 3).join('.');
    const want = Buffer.from(this.#sign(body));
    const got = Buffer.from(parts[3]!);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
    if (!(Number(parts[2]) > this.#now())) return undefined;
    const name = Buffer.from(parts[1]!, 'base64url').toString();
    // A key taken out of the config, or no longer admin, logs its cookies out with it.
    if (name === ADMIN_KEY) return this.#admin === undefined ? undefined : { name };
    return this.#keys.some((k) => k.key.name === name && k.key.admin === true) ? { name } : undefined;
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#secret).update(body).digest('base64url');
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A caller on this machine (the socket's peer), IPv4-mapped addresses included. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.replace(/^::ffff:/i, '');
  return a === '::1' || a.startsWith('127.');
}
