/** Same-origin reads of the inspector's JSON and its live stream; the session cookie goes with them. */
import type { LiveRequest } from './contract.js';

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export async function getJson<T>(path: string, params: Record<string, string | number | undefined> = {}, signal?: AbortSignal): Promise<T> {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') query.set(k, String(v));
  const qs = query.toString();
  const res = await fetch(`/api/${path}${qs === '' ? '' : `?${qs}`}`, { credentials: 'same-origin', headers: { accept: 'application/json' }, signal });
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const body = (await res.json()) as { error?: { message?: string } };
      message = body.error?.message ?? message;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(res.status, message);
  }
  return (await res.json()) as T;
}

/**
 * Follow `/api/live` (all sessions, or one): `onRequest` for each answered request. EventSource
 * reconnects by itself; the returned function stops it.
 */
export function followLive(session: string | undefined, onRequest: (r: LiveRequest) => void, onState?: (open: boolean) => void): () => void {
  if (typeof EventSource === 'undefined') return () => undefined;
  const source = new EventSource(session === undefined ? '/api/live' : `/api/live?session=${encodeURIComponent(session)}`);
  source.addEventListener('request', (e) => {
    try {
      onRequest(JSON.parse((e as MessageEvent<string>).data) as LiveRequest);
    } catch {
      // a malformed frame is skipped: the next reload shows the request anyway
    }
  });
  source.addEventListener('open', () => onState?.(true));
  source.addEventListener('error', () => onState?.(source.readyState === EventSource.OPEN));
  return () => source.close();
}
