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
