/**
 * The inspector's page posts its login form, and may fetch, with an `Origin` that is the proxy's
 * own. The request guard refuses every `Origin` not in `allowed_origins` (src/proxy/request-guard.ts),
 * so for the inspector's paths an `Origin` naming exactly the `Host` asked for is dropped before the
 * guard looks: any other origin is still refused, and the Host rule (DNS rebinding) still applies.
 */
const INSPECTOR_PATH = /^\/(?:ui|api)(?:[/?]|$)/;

export function isInspectorPath(url: string): boolean {
  return INSPECTOR_PATH.test(url);
}

export function withoutSameOrigin<H extends { origin?: string | undefined; host?: string | undefined }>(url: string, headers: H): H {
  const origin = headers.origin;
  if (origin === undefined || origin === '' || headers.host === undefined || !isInspectorPath(url)) return headers;
  let host: string;
  try {
    const parsed = new URL(origin);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return headers;
    host = parsed.host;
  } catch {
    return headers;
  }
  return host.toLowerCase() === withDefaultPortDropped(headers.host.toLowerCase(), origin) ? { ...headers, origin: undefined } : headers;
}

/** URL.host drops a default port (`:80`, `:443`); a Host header may carry it. */
function withDefaultPortDropped(host: string, origin: string): string {
  const port = origin.startsWith('https:') ? ':443' : ':80';
  return host.endsWith(port) ? host.slice(0, -port.length) : host;
}
