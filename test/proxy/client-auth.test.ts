/** Client keys: 401 without one or with an unknown one, 403 for a route the key may not use, in the client's wire. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import { checkExposure, ClientAuth } from '../../src/proxy/client-auth.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const auth = new ClientAuth({ keys: [{ name: 'alice', sha256: sha('alice-key'), models: undefined, budgetPeriod: 'month' }, { name: 'ci', sha256: sha('ci-key'), models: ['cheap'], budgetPeriod: 'month' }], open: false });

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!isProxyError(err)) throw err;
    return `${err.status} ${err.code}`;
  }
}

describe('ClientAuth', () => {
  it('knows a client by its key, and refuses none or another', () => {
    expect(auth.identify('alice-key')?.name).toBe('alice');
    expect(code(() => auth.identify(undefined))).toBe('401 unauthorized');
    expect(code(() => auth.identify('guess'))).toBe('401 unauthorized');
  });

  it('a key limited to some routes may use only those', () => {
    const ci = auth.identify('ci-key');
    expect(code(() => auth.allow(ci, 'cheap'))).toBeUndefined();
    expect(code(() => auth.allow(ci, 'claude'))).toBe('403 model_not_allowed');
    expect(code(() => auth.allow(auth.identify('alice-key'), 'claude'))).toBeUndefined();
  });

  it('without keys, asks nothing', () => {
    const none = new ClientAuth({ keys: [], open: false });
    expect(none.identify(undefined)).toBeUndefined();
  });
});

describe('checkExposure', () => {
  it('refuses to listen beyond loopback without keys unless told', () => {
    expect(code(() => checkExposure({ listen: { host: '0.0.0.0', port: 1 }, auth: { keys: [], open: false } }))).toBe('500 exposed_without_keys');
    expect(code(() => checkExposure({ listen: { host: '0.0.0.0', port: 1 }, auth: { keys: [], open: true } }))).toBeUndefined();
    expect(code(() => checkExposure({ listen: { host: '127.0.0.1', port: 1 }, auth: { keys: [], open: false } }))).toBeUndefined();
    expect(code(() => checkExposure({ listen: { host: '::', port: 1 }, auth: { keys: [{ name: 'a', sha256: sha('a'), models: undefined, budgetPeriod: 'month' }], open: false } }))).toBeUndefined();
  });
});
