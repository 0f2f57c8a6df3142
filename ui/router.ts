/** Hash routes: #/, #/sessions, #/s/ID, #/s/ID/r/SEQ, each with an optional ?query. */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'overview'; query: URLSearchParams }
  | { page: 'sessions'; query: URLSearchParams }
  | { page: 'session'; id: string; query: URLSearchParams }
  | { page: 'request'; id: string; seq: number; query: URLSearchParams }
  | { page: 'missing'; query: URLSearchParams };

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : raw.slice(q + 1));
  const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  if (parts.length === 0) return { page: 'overview', query };
  if (parts.length === 1 && parts[0] === 'sessions') return { page: 'sessions', query };
  if (parts[0] === 's' && parts.length === 2) return { page: 'session', id: parts[1]!, query };
  if (parts[0] === 's' && parts.length === 4 && parts[2] === 'r' && /^\d+$/.test(parts[3]!)) {
    return { page: 'request', id: parts[1]!, seq: Number(parts[3]), query };
  }
  return { page: 'missing', query };
}

export const href = {
  overview: (query?: Record<string, string>) => `#/${qs(query)}`,
  sessions: (query?: Record<string, string>) => `#/sessions${qs(query)}`,
  session: (id: string) => `#/s/${encodeURIComponent(id)}`,
  request: (id: string, seq: number) => `#/s/${encodeURIComponent(id)}/r/${seq}`,
};

function qs(query: Record<string, string> | undefined): string {
  if (query === undefined) return '';
  const s = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== '')).toString();
  return s === '' ? '' : `?${s}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
