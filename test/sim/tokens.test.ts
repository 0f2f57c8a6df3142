import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WireMessage } from '../../src/sim/request.js';
import { countTokens, renderPrompt, TokenSeq } from '../../src/sim/tokens.js';

const tool = { type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };

describe('renderPrompt', () => {
  it('renders tools then messages, every field that reaches the model', () => {
    const out = renderPrompt([tool], [
      { role: 'system', content: 'S' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, reasoning_content: 'R', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'file' },
    ]);
    expect(out.indexOf('<|tool|>')).toBe(0);
    expect(out).toContain('"description":"Read a file","name":"read"');
    expect(out).toContain('<think>R</think>');
    expect(out).toContain('<call id=c1 name=read>{"path":"a"}</call>');
    expect(out).toContain('<|start|>tool id=c1\nfile<|end|>');
    expect(out).toMatch(/hi<image [0-9a-f]{16}>/);
  });

  it('does not depend on key order in tools or messages, but does on tool order', () => {
    const reordered = { function: { parameters: tool.function.parameters, name: 'read', description: 'Read a file' }, type: 'function' };
    const other = { type: 'function', function: { name: 'write' } };
    const msgs: WireMessage[] = [{ role: 'user', content: 'a' }];
    expect(renderPrompt([reordered, other], msgs)).toBe(renderPrompt([tool, other], msgs));
    expect(renderPrompt([other, tool], msgs)).not.toBe(renderPrompt([tool, other], msgs));
    expect(renderPrompt([], [{ content: 'a', role: 'user' }])).toBe(renderPrompt([], msgs));
  });

  it('is prefix-stable: appending messages extends the rendering and its block keys', () => {
    const message = fc.oneof(
      fc.record({ role: fc.constantFrom('system', 'user'), content: fc.string({ maxLength: 400 }) }),
      fc.record({ role: fc.constant('assistant'), content: fc.string({ maxLength: 400 }), reasoning_content: fc.string({ maxLength: 100 }) }),
      fc.record({ role: fc.constant('tool'), tool_call_id: fc.string({ maxLength: 8 }), content: fc.string({ unit: 'binary', maxLength: 600 }) }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.array(message, { minLength: 1, maxLength: 8 }), (head, tail) => {
        const short = renderPrompt([tool], head as WireMessage[]);
        const long = renderPrompt([tool], [...head, ...tail] as WireMessage[]);
        expect(long.startsWith(short)).toBe(true);
        const a = new TokenSeq(short);
        const b = new TokenSeq(long);
        expect(b.count).toBeGreaterThanOrEqual(a.count);
        // Every block made of whole tokens of the shorter prompt is a block of the longer one.
        const stable = Math.floor(Buffer.byteLength(short) / 512);
        expect(b.blockKeys().slice(0, stable)).toEqual(a.blockKeys().slice(0, stable));
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});

describe('TokenSeq', () => {
  it('counts 4-byte chunks of UTF-8, the last partial chunk included', () => {
    expect(new TokenSeq('').count).toBe(0);
    expect(new TokenSeq('abcd').count).toBe(1);
    expect(new TokenSeq('abcde').count).toBe(2);
    expect(new TokenSeq('é').count).toBe(1);
    expect(new TokenSeq('😀😀x').count).toBe(3);
    expect(countTokens('😀😀x')).toBe(3);
  });

  it('chains 128-token blocks: a changed byte changes its block and every later key', () => {
    const base = 'a'.repeat(512 * 4 + 100);
    const changed = base.slice(0, 600) + 'b' + base.slice(601);
    const k1 = new TokenSeq(base).blockKeys();
    const k2 = new TokenSeq(changed).blockKeys();
    expect(k1).toHaveLength(4);
    expect(k2[0]).toBe(k1[0]);
    expect(k2.slice(1).every((key, i) => key !== k1[i + 1])).toBe(true);
    // Same bytes in block 2 and 3, but different prefixes: different keys.
    expect(k1[2]).not.toBe(k1[3]);
  });

  it('hashes only the first tokens for routing', () => {
    const head = 'h'.repeat(1024);
    expect(new TokenSeq(head + 'one').prefixHash(256)).toBe(new TokenSeq(head + 'two').prefixHash(256));
    expect(new TokenSeq('x' + head).prefixHash(256)).not.toBe(new TokenSeq('y' + head).prefixHash(256));
  });
});
