/**
 * A fallback deployment's request headers (docs/faults.md): the first deployment's, with that
 * deployment's `headers` table and key taken out and the fallback's own put in. The body is the
 * same bytes, which the config allows only between providers of one preset.
 */
import type { Deployment } from '../config/routes.js';

export interface Keys {
  /** The key sent to the first deployment (its own, or the client's passed through). */
  first: string | undefined;
  /** The client's bearer, for a deployment with no key of its own; undefined when it is a proxy key. */
  passThrough: string | undefined;
}

export function deploymentHeaders(
  headers: Record<string, string>,
  first: Deployment,
  d: Deployment,
  keys: Keys,
  authHeaders: (key: string) => Record<string, string>,
): Record<string, string> {
  if (d === first) return headers;
  const out = { ...headers };
  const firstAuth = keys.first === undefined ? {} : authHeaders(keys.first);
  for (const name of [...Object.keys(first.headers), ...Object.keys(firstAuth)]) delete out[name];
  Object.assign(out, d.headers);
  const key = d.apiKey ?? keys.passThrough;
  if (key !== undefined) Object.assign(out, authHeaders(key));
  return out;
}
