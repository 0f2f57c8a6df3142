import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DigestChain, canonicalDigest, canonicalJson } from '../../src/core/canonical.js';

describe('canonical JSON', () => {
  it('sorts keys at every depth, writes no whitespace, drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: true, y: null }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}');
  });

  it('is the same for any key order, and round-trips through JSON.parse', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      const text = canonicalJson(v);
      const reordered = JSON.parse(JSON.stringify(v, (_k, x: unknown) => (x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).reverse()) : x))) as unknown;
      expect(canonicalJson(reordered)).toBe(text);
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    }), { numRuns: 300 });
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalJson({ x: NaN })).toThrow(/NaN/);
    expect(() => canonicalJson({ x: () => 1 })).toThrow(/function/);
  });

  it('DigestChain equals canonicalDigest of the whole object, across appends and edits', () => {
    const chain = new DigestChain('messages');
    const msgs: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      msgs.push({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` });
      if (i === 12) msgs[3] = { role: 'assistant', content: 'edited' };
      const rest = { model: 'm', params: { max_tokens: i }, tools: [] };
      expect(chain.digest(msgs.map((m) => canonicalJson(m)), rest)).toBe(canonicalDigest({ messages: msgs, ...rest }));
    }
  });
});
