/**
 * The plain shape checks never accept what the wire's schema refuses: every message they pass, zod
 * passes, over generated messages near and far from the real shapes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_SCHEMAS, parseChatRequest } from '../../../src/dialects/openai-chat/inbound-parse.js';
import { isWellFormedMessage } from '../../../src/dialects/openai-chat/inbound-shape.js';

const anyValue = fc.oneof(fc.string(), fc.constant(''), fc.integer(), fc.constant(null), fc.constant(undefined), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, anyValue);
const textPart = fc.record({ type: maybe(fc.constant('text')), text: maybe(fc.string()) }, { requiredKeys: [] });
const imagePart = fc.record({
  type: maybe(fc.constant('image_url')),
  image_url: maybe(fc.record({ url: maybe(fc.string()), detail: maybe(fc.constantFrom('auto', 'low', 'high', 'ultra')) }, { requiredKeys: [] })),
}, { requiredKeys: [] });
const content = fc.oneof(maybe(fc.string()), fc.array(fc.oneof(textPart, imagePart, anyValue), { maxLength: 3 }));
const call = fc.record({
  id: maybe(fc.string()),
  type: maybe(fc.constantFrom('function', 'other')),
  function: maybe(fc.record({ name: maybe(fc.string()), arguments: maybe(fc.string()) }, { requiredKeys: [] })),
}, { requiredKeys: [] });
const message = fc.record({
  role: maybe(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function', 'constructor')),
  content,
  tool_calls: maybe(fc.array(fc.oneof(call, anyValue), { maxLength: 2 })),
  tool_call_id: maybe(fc.string()),
  extra: anyValue,
}, { requiredKeys: [] });

describe('isWellFormedMessage', () => {
  it('accepts only what the schema accepts', () => {
    fc.assert(fc.property(message, (m) => {
      if (!isWellFormedMessage(m)) return;
      const role = (m as { role: keyof typeof MESSAGE_SCHEMAS }).role;
      expect(MESSAGE_SCHEMAS[role].safeParse(m).success).toBe(true);
    }), { numRuns: 5000, seed: 8 });
  });

  it('accepts the shapes real clients send, so they skip the schema', () => {
    const real = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'low' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'out' },
    ];
    for (const m of real) expect(isWellFormedMessage(m)).toBe(true);
  });

  it('a message it refuses still gets the schema\'s error naming the field; an inherited name is not a role', () => {
    expect(() => parseChatRequest({ model: 'm', messages: [{ role: 'tool', content: 'x' }] })).toThrow(/messages\[0\]\.tool_call_id/);
    expect(() => parseChatRequest({ model: 'm', messages: [{ role: 'constructor', content: 'x' }] })).toThrow(/constructor/);
  });
});
