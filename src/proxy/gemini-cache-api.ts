/**
 * The `cachedContents` calls of Gemini's API, for gemini-caches.ts: create, extend (PATCH ttl) and
 * delete. Few and off the reply's stream, so plain fetch.
 */
import type { EncodedRequest } from '../core/route.js';
import { readCacheCreated } from '../dialects/gemini/cached-content.js';
import type { CacheApi, CacheTarget } from './gemini-caches.js';

export function fetchCacheApi(timeoutMs = 30_000): CacheApi {
  const call = async (target: CacheTarget, method: string, req: EncodedRequest): Promise<unknown> => {
    const headers = { ...req.headers, ...(target.apiKey === undefined ? {} : { 'x-goog-api-key': target.apiKey }) };
    const res = await fetch(target.baseUrl.replace(/\/+$/, '') + req.path, {
      method, headers, ...(method === 'DELETE' ? {} : { body: req.body }), signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${req.path.replace(/\?.*/, '')}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return text === '' ? {} : JSON.parse(text);
  };
  return {
    async create(target, req) {
      const created = readCacheCreated(await call(target, 'POST', req));
      if (created === undefined) throw new Error('POST /cachedContents: the answer names no entry or no token count');
      return created;
    },
    async extend(target, req) {
      await call(target, 'PATCH', req);
    },
    async delete(target, name) {
      await call(target, 'DELETE', { path: `/${name}`, headers: {}, body: '' });
    },
  };
}
