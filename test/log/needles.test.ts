/**
 * The one-pass literal search redaction relies on (src/log/needles.ts) against the obvious
 * `includes` per literal, and the memo of short strings (src/log/redact.ts): a secret in a short
 * string is counted every time it is written, not only the first.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NeedleScan } from '../../src/log/needles.js';
import { redactDeep, redactText } from '../../src/log/redact.js';
import { RULES } from '../../src/log/redact-rules.js';

const NEEDLES = [...new Set(RULES.flatMap((rule) => rule.needles ?? []))];

describe('NeedleScan', () => {
  const scan = new NeedleScan(NEEDLES);

  it('finds exactly the needles a text holds, wherever they sit', () => {
    // Texts built from pieces of needles, so near-misses and overlaps are common.
    const piece = fc.oneof(fc.constantFrom(...NEEDLES), fc.constantFrom(...NEEDLES).map((n) => n.slice(0, -1)), fc.string({ maxLength: 3 }), fc.constantFrom('é', '😀', '\n', ' '));
    fc.assert(fc.property(fc.array(piece, { maxLength: 30 }).map((parts) => parts.join('')), (text) => {
      const found = scan.scan(text);
      NEEDLES.forEach((needle, i) => expect([needle, found[i]]).toEqual([needle, text.includes(needle) ? 1 : 0]));
    }), { numRuns: 500 });
  });

  it('finds a needle at the very start and the very end, and nothing in an empty text', () => {
    const small = new NeedleScan(['sk-', 'AKIA', 'eyJ']);
    expect([...small.scan('sk-x AKIA')]).toEqual([1, 1, 0]);
    expect([...small.scan('x eyJ')]).toEqual([0, 0, 1]);
    expect([...small.scan('')]).toEqual([0, 0, 0]);
    expect([...small.scan('s')]).toEqual([0, 0, 0]);
  });

  it('refuses a needle it cannot search for', () => {
    expect(() => new NeedleScan(['x'])).toThrow(/two or more/);
    expect(() => new NeedleScan(['é1'])).toThrow(/ASCII/);
    expect(() => new NeedleScan([], ['Cookie'])).toThrow(/lower case/);
  });

  it('finds a caseless needle in any ASCII case, exactly where a regex with the i flag would', () => {
    const caseless = ['secret', 'key', 'authorization', 'a-b'];
    const both = new NeedleScan(['sk-', 'SK'], caseless);
    const randomCase = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((up) => [...word].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));
    // Look-alikes a regex with `i` and no `u` keeps apart from ASCII: the long s, the Kelvin sign, a dotted capital I.
    const piece = fc.oneof(fc.constantFrom(...caseless).chain(randomCase), fc.constantFrom(...caseless).map((n) => n.slice(0, -1)), fc.constantFrom('ſecret', 'Key', 'AUTHORİZATION', 'sk-', 'SK', 'Sk-'), fc.string({ maxLength: 3 }));
    fc.assert(fc.property(fc.array(piece, { maxLength: 20 }).map((parts) => parts.join('')), (text) => {
      const found = both.scan(text);
      expect([found[0], found[1]]).toEqual([text.includes('sk-') ? 1 : 0, text.includes('SK') ? 1 : 0]);
      caseless.forEach((needle, i) => {
        const byRegex = new RegExp(needle.replace(/-/g, '\\-'), 'i').test(text);
        expect([needle, text, found[2 + i]]).toEqual([needle, text, byRegex ? 1 : 0]);
      });
    }), { numRuns: 500 });
    expect(both.indexOf('key', true)).toBe(3);
    expect(() => both.indexOf('key')).toThrow(/not a needle/);
  });
});

describe('the rules\' literals', () => {
  // Text made of what the rules look for, key words in any case and their look-alikes among them:
  // a rule's regex may match it only where the rule's literals are, or the scan would skip a secret.
  const word = fc.constantFrom('password', 'passwd', 'pwd', 'secret', 'token', 'api_key', 'x-api-key', 'AccountKey', 'secret_access_key', 'aws_secret_access_key',
    'authorization', 'proxy-authorization', 'cookie', 'set-cookie', '--cookie', 'Basic', 'token', 'ſecret', 'Key', 'https://', 'user', '@host', 'curl -u', 'sk-', 'ghp_');
  const mixedCase = word.chain((w) => fc.array(fc.boolean(), { minLength: w.length, maxLength: w.length }).map((up) => [...w].map((c, i) => (up[i] ? c.toUpperCase() : c)).join('')));
  const glue = fc.constantFrom(':', '=', ': ', ' = ', '"', "'", '\\"', '\n', ' ', '\\n', '_', '-', '.', '@', '/');
  const value = fc.stringMatching(/^[A-Za-z0-9+/]{8,44}$/);
  const text = fc.array(fc.oneof(mixedCase, glue, value), { maxLength: 14 }).map((parts) => parts.join(''));

  it('hold in every text a rule\'s regex matches', () => {
    const gated = RULES.filter((rule) => rule.needles !== undefined || rule.caseless !== undefined);
    for (const rule of gated) if (rule.caseless !== undefined) expect([rule.kind, rule.re.flags.includes('u')]).toEqual([rule.kind, false]);
    let matched = 0;
    fc.assert(fc.property(text, (t) => {
      const lower = t.replace(/[A-Z]/g, (c) => c.toLowerCase());
      for (const rule of gated) {
        if (!new RegExp(rule.re.source, rule.re.flags.replace('g', '')).test(t)) continue;
        matched++;
        const holds = (rule.needles ?? []).some((n) => t.includes(n)) || (rule.caseless ?? []).some((n) => lower.includes(n));
        expect([rule.kind, t, holds]).toEqual([rule.kind, t, true]);
      }
    }), { numRuns: 3000 });
    // The texts reach the rules at all.
    expect(matched).toBeGreaterThan(100);
  });
});

describe('the memo of short strings', () => {
  it('counts a secret in a short string every time it is redacted', () => {
    const short = 'password=hunter2';
    expect(short.length).toBeLessThanOrEqual(32);
    for (let i = 0; i < 3; i++) expect(redactText(short)).toEqual({ text: 'password=[redacted:password]', hits: ['password'] });
    const event = { a: short, b: short };
    expect(redactDeep(event).hits).toEqual(['password', 'password']);
  });

  it('gives the same answer as the rules for many short strings, past the memo\'s bound', () => {
    const seen = new Map<string, string>();
    for (let i = 0; i < 10_000; i++) {
      const text = i % 2 === 0 ? `password=Zx9${i}qW` : `role-${i}`;
      const first = redactText(text).text;
      seen.set(text, first);
    }
    for (const [text, first] of seen) expect(redactText(text).text).toBe(first);
    // Some of them are secrets by the rules, and stay so after the memo was cleared.
    expect([...seen.values()].filter((t) => t.includes('[redacted:')).length).toBeGreaterThan(1000);
  });
});
