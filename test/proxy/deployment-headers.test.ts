import { describe, expect, it } from 'vitest';
import { deploymentHeaders } from '../../src/proxy/deployment-headers.js';

const timeouts = { connect_ms: 1, headers_ms: 1, body_ms: 1, deadline_ms: 1 };
const first = { provider: 'a', baseUrl: 'http://a', apiKey: 'key-a', headers: { 'X-Only-A': '1', 'X-Both': 'a' }, timeouts };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const sent = { 'content-type': 'application/json', 'X-Only-A': '1', 'X-Both': 'a', 'x-session-affinity': 's1', authorization: 'Bearer key-a' };

describe('deploymentHeaders', () => {
  it('leaves the first deployment\'s headers as they are', () => {
    expect(deploymentHeaders(sent, first, first, { first: 'key-a', passThrough: undefined }, bearer)).toBe(sent);
  });

  it('gives a fallback its own headers table and key in place of the first one\'s, keeping the rest', () => {
    const b = { provider: 'b', baseUrl: 'http://b', apiKey: 'key-b', headers: { 'X-Both': 'b' }, timeouts };
    expect(deploymentHeaders(sent, first, b, { first: 'key-a', passThrough: undefined }, bearer)).toEqual({
      'content-type': 'application/json', 'x-session-affinity': 's1', 'X-Both': 'b', authorization: 'Bearer key-b',
    });
  });

  it('passes the client\'s bearer to a fallback without a key, and sends none when the client\'s key is the proxy\'s', () => {
    const c = { provider: 'c', baseUrl: 'http://c', headers: {}, timeouts };
    expect(deploymentHeaders(sent, first, c, { first: 'key-a', passThrough: 'client-key' }, bearer).authorization).toBe('Bearer client-key');
    expect(deploymentHeaders(sent, first, c, { first: 'key-a', passThrough: undefined }, bearer)).not.toHaveProperty('authorization');
  });
});
