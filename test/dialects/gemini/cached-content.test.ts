/**
 * Gemini's explicit caches on the wire: where a prompt may be cut, the entry's body and key, and a
 * request naming the entry that carries exactly the contents after it (none of system, tools, tool
 * config), so entry + request is the prompt the whole request would have sent.
 */
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../../src/core/types.js';
import { cacheCuts, encodeCacheCreate, encodeCacheExtend, readCacheCreated } from '../../../src/dialects/gemini/cached-content.js';
import { encodeRequest } from '../../../src/dialects/gemini/encode-request.js';

const route: DialectRoute = { wire: 'gemini', preset: 'gemini', provider: 'gm', model: 'gemini-2.5-flash', baseUrl: 'https://g/v1beta', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {} };
const resolveImage = () => ({ mime: 'image/png', base64: 'AA==' });
const noHints = { bodyKey: false, headers: {} };

const messages: NeutralMessage[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'u0' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{"p":1}' }] },
  { role: 'tool', tool_call_id: 'c1', content: 'r1' },
  { role: 'user', content: 'and then' },
  { role: 'assistant', content: 'done' },
  { role: 'user', content: 'u2' },
];
const req: NeutralRequest = {
  model: 'gemini-2.5-flash', messages,
  tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }],
  params: { tool_choice: 'auto', temperature: 0.5 },
};

describe('cacheCuts', () => {
  it('cuts after the system prompt and between a model turn and the user turn after it, never at the end', () => {
    expect(cacheCuts(messages)).toStrictEqual([1, 3, 6]);
    expect(cacheCuts([{ role: 'user', content: 'a' }])).toStrictEqual([]);
    expect(cacheCuts([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }])).toStrictEqual([]);
  });
});

describe('an entry and the requests that name it', () => {
  for (const n of [1, 3, 6]) {
    it(`cut at ${n}: entry contents + request contents are the whole request's, and the request holds no system, tools or tool config`, () => {
      const whole = JSON.parse(encodeRequest(req, route, noHints, { stream: true, resolveImage }).body as string);
      const create = encodeCacheCreate(req, n, route, 960, { resolveImage });
      const entry = JSON.parse(create.encoded.body as string);
      expect(create.encoded.path).toBe('/cachedContents');
      expect(entry).toMatchObject({ model: 'models/gemini-2.5-flash', systemInstruction: whole.systemInstruction, tools: whole.tools, toolConfig: whole.toolConfig, ttl: '960s' });
      const named = JSON.parse(encodeRequest(req, route, { ...noHints, geminiCache: { name: 'cachedContents/x', messages: n } }, { stream: true, resolveImage }).body as string);
      expect(named.cachedContent).toBe('cachedContents/x');
      expect(named).not.toHaveProperty('systemInstruction');
      expect(named).not.toHaveProperty('tools');
      expect(named).not.toHaveProperty('toolConfig');
      expect(named.generationConfig).toStrictEqual(whole.generationConfig);
      expect([...entry.contents, ...named.contents]).toStrictEqual(whole.contents);
      expect(named.contents[0].role).toBe('user');
    });
  }

  it('the key names the cached prompt: the TTL does not change it, a changed head or tool list does', () => {
    const key = encodeCacheCreate(req, 3, route, 960, { resolveImage }).key;
    expect(encodeCacheCreate(req, 3, route, 60, { resolveImage }).key).toBe(key);
    expect(encodeCacheCreate({ ...req, messages: [...messages.slice(0, 6), { role: 'user', content: 'other tail' }] }, 3, route, 960, { resolveImage }).key).toBe(key);
    const trimmed = messages.map((m, i) => (i === 1 ? { ...m, content: '[elided]' } : m)) as NeutralMessage[];
    expect(encodeCacheCreate({ ...req, messages: trimmed }, 3, route, 960, { resolveImage }).key).not.toBe(key);
    expect(encodeCacheCreate({ ...req, tools: [] }, 3, route, 960, { resolveImage }).key).not.toBe(key);
  });

  it('extends by TTL alone, and reads the create answer', () => {
    expect(encodeCacheExtend('cachedContents/x', route, 90)).toMatchObject({ path: '/cachedContents/x?updateMask=ttl', body: '{"ttl":"90s"}' });
    expect(readCacheCreated({ name: 'cachedContents/x', usageMetadata: { totalTokenCount: 2048 } })).toStrictEqual({ name: 'cachedContents/x', tokens: 2048 });
    expect(readCacheCreated({ name: 'cachedContents/x' })).toBeUndefined();
  });
});
