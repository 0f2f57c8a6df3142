import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/core/types.js';
import { stringifyWith, toolsJson } from '../../src/dialects/tools-json.js';

const tool = (name: string): ToolSpec => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { path: { type: 'string' } } } } });

describe('stringifyWith', () => {
  it('gives the bytes of JSON.stringify, in its key order, with the named members written from their texts', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.jsonValue(), fc.constant(undefined)), { maxKeys: 8 }), fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }), (obj, named) => {
        const texts: Record<string, string> = {};
        for (const k of named) {
          const text = JSON.stringify(obj[k]) as string | undefined;
          if (Object.hasOwn(obj, k) && text !== undefined) Object.defineProperty(texts, k, { value: text, enumerable: true });
        }
        expect(stringifyWith(obj, texts)).toBe(JSON.stringify(obj));
      }),
      { numRuns: 300 },
    );
    // Integer-like keys first, as JSON.stringify orders them; functions left out.
    expect(stringifyWith({ b: 1, 2: 'x', tools: [], f: () => 1 }, { tools: '["kept"]' })).toBe('{"2":"x","b":1,"tools":["kept"]}');
  });
});

describe('toolsJson', () => {
  it('serialises a catalog once per array and variant, and again for another array or variant', () => {
    const tools = [tool('read'), tool('edit')];
    let calls = 0;
    const encode = (t: readonly ToolSpec[]) => {
      calls++;
      return t.map((x) => x.function.name);
    };
    expect(toolsJson(tools, 'a', encode)).toBe('["read","edit"]');
    expect(toolsJson(tools, 'a', encode)).toBe('["read","edit"]');
    expect(calls).toBe(1);
    expect(toolsJson(tools, 'b', (t) => t.length)).toBe('2');
    // An equal catalog in another array (a session loaded from its log) is serialised for itself.
    expect(toolsJson(structuredClone(tools), 'a', encode)).toBe('["read","edit"]');
    expect(calls).toBe(2);
  });
});
