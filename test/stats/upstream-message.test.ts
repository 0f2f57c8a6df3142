/** What an upstream said when it refused a call, read from the error body the log holds. */
import { describe, expect, it } from 'vitest';
import { upstreamMessage } from '../../src/stats/upstream-message.js';

describe('upstreamMessage', () => {
  it('takes error.message from every wire\'s error shape, and a top-level message', () => {
    expect(upstreamMessage('{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}')).toBe('Rate limit reached');
    expect(upstreamMessage('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toBe('Overloaded');
    expect(upstreamMessage('{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}')).toBe('API key not valid.');
    expect(upstreamMessage('{"message":"model not found"}')).toBe('model not found');
  });

  it('gives the text itself when there is no message: HTML, plain text, JSON of another shape', () => {
    expect(upstreamMessage('<html>502 Bad Gateway</html>')).toBe('<html>502 Bad Gateway</html>');
    expect(upstreamMessage('{"error":"just a string"}')).toBe('{"error":"just a string"}');
    expect(upstreamMessage('{"error":{"message":""}}')).toBe('{"error":{"message":""}}');
    expect(upstreamMessage('upstream timed out')).toBe('upstream timed out');
  });

  it('keeps a page\'s worth of a long body', () => {
    expect(upstreamMessage('x'.repeat(10_000))).toHaveLength(2000);
    expect(upstreamMessage(JSON.stringify({ error: { message: 'y'.repeat(10_000) } }))).toHaveLength(2000);
  });
});
