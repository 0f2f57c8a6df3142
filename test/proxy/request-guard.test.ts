/** Who may reach the proxy from where: a web page's requests and rebound host names are refused. */
import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import { RequestGuard } from '../../src/proxy/request-guard.js';

const loopback = { listen: { host: '127.0.0.1', port: 8787 }, allowedOrigins: [], allowedHosts: [] };

function refusal(guard: RequestGuard, headers: { origin?: string; host?: string }): string | undefined {
  try {
    guard.check(headers);
    return undefined;
  } catch (err) {
    if (!isProxyError(err)) throw err;
    return `${err.status} ${err.code}`;
  }
}

describe('RequestGuard', () => {
  it('serves a client on loopback under any loopback name', () => {
    const guard = new RequestGuard(loopback);
    for (const host of ['127.0.0.1:8787', 'localhost:8787', 'LOCALHOST', '[::1]:8787', '127.0.0.2:8787']) expect(refusal(guard, { host })).toBeUndefined();
  });

  it('refuses a page\'s request (an Origin) unless its origin is allowed', () => {
    expect(refusal(new RequestGuard(loopback), { host: 'localhost:8787', origin: 'https://evil.example' })).toBe('403 origin_refused');
    const allowed = new RequestGuard({ ...loopback, allowedOrigins: ['http://localhost:3000'] });
    expect(refusal(allowed, { host: 'localhost:8787', origin: 'http://localhost:3000' })).toBeUndefined();
    expect(refusal(allowed, { host: 'localhost:8787', origin: 'http://localhost:3001' })).toBe('403 origin_refused');
  });

  it('on loopback, refuses a Host that is not a loopback name (DNS rebinding) unless allowed', () => {
    expect(refusal(new RequestGuard(loopback), { host: 'rebound.example:8787' })).toBe('403 host_refused');
    expect(refusal(new RequestGuard(loopback), {})).toBe('403 host_refused');
    const named = new RequestGuard({ ...loopback, allowedHosts: ['proxy.internal'] });
    expect(refusal(named, { host: 'proxy.internal:8787' })).toBeUndefined();
  });

  it('bound to another address, any Host is served (the operator chose to be reachable)', () => {
    expect(refusal(new RequestGuard({ ...loopback, listen: { host: '0.0.0.0', port: 8787 } }), { host: 'proxy:8787' })).toBeUndefined();
  });
});
