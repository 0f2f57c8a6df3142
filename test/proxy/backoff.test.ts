import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jitteredDelay, retryableStatus, retryAfterMs, retryDelay } from '../../src/proxy/backoff.js';

const settings = { baseMs: 500, maxDelayMs: 8000 };
const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('backoff', () => {
  it('draws a full-jitter wait below base * 2^retry, capped', () => {
    expect(jitteredDelay(0, settings, () => 0)).toBe(0);
    expect(jitteredDelay(0, settings, () => 0.999_999)).toBe(499);
    expect(jitteredDelay(1, settings, () => 0.5)).toBe(500);
    expect(jitteredDelay(3, settings, () => 0.5)).toBe(2000);
    expect(jitteredDelay(10, settings, () => 0.5)).toBe(4000);
    expect(jitteredDelay(1000, settings, () => 0.999_999)).toBe(7999);
    fc.assert(fc.property(fc.nat(100), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (retry, r) => {
      const d = jitteredDelay(retry, settings, () => r);
      return Number.isInteger(d) && d >= 0 && d < Math.min(settings.maxDelayMs, settings.baseMs * 2 ** retry);
    }));
  });

  it('reads retry-after-ms first, then retry-after as seconds or an HTTP date', () => {
    expect(retryAfterMs({}, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after-ms': '250' }, NOW)).toBe(250);
    expect(retryAfterMs({ 'retry-after-ms': '12.2', 'retry-after': '99' }, NOW)).toBe(13);
    expect(retryAfterMs({ 'retry-after': '3' }, NOW)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': ['2', '9'] }, NOW)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': new Date(NOW + 4000).toUTCString() }, NOW)).toBe(4000);
    expect(retryAfterMs({ 'retry-after': new Date(NOW - 4000).toUTCString() }, NOW)).toBe(0);
    // Neither parses: the header is not there as far as waiting goes.
    expect(retryAfterMs({ 'retry-after-ms': 'soon', 'retry-after': 'later' }, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': '-5' }, NOW)).toBeUndefined();
  });

  it('waits what the upstream asked, never more than the cap; else the jittered wait', () => {
    expect(retryDelay(0, { 'retry-after': '2' }, settings, () => 0, NOW)).toBe(2000);
    expect(retryDelay(0, { 'retry-after': '60' }, settings, () => 0, NOW)).toBe(8000);
    expect(retryDelay(0, { 'retry-after-ms': '0' }, settings, () => 0.9, NOW)).toBe(0);
    expect(retryDelay(2, {}, settings, () => 0.25, NOW)).toBe(500);
  });

  it('retries 408, 429, 500, 502, 503 and 529, nothing else', () => {
    const retried = Array.from({ length: 500 }, (_, i) => i + 100).filter((s) => retryableStatus(s) !== undefined);
    expect(retried).toEqual([408, 429, 500, 502, 503, 529]);
    expect(retryableStatus(529)).toBe('529');
  });
});
