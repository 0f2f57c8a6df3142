/**
 * The native Gemini wire (src/sim/gemini-native), driven with plain fetch as Google's API would be:
 * replies, usage, streams, countTokens, the implicit cache, and the request checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { call, generate as generateAt, KEY, MODEL, sseChunks, user, type Json } from './gemini-client.js';

let sim: Sim;
beforeAll(async () => {
  sim = await createSim({ apiKey: KEY });
});
afterAll(async () => {
  await sim.close();
});

const generate = (body: unknown, model = MODEL) => generateAt(sim, body, model);
const LONG = 'The repository holds a proxy for language model APIs. '.repeat(120);

describe('generateContent', () => {
  it('answers with a candidate, usage in Google\'s names and a thought signature on the answer', async () => {
    const r = await generate({ contents: [user('hello [[say hi there]]')] });
    expect(r.status).toBe(200);
    const [candidate] = r.json.candidates;
    expect(candidate.finishReason).toBe('STOP');
    expect(candidate.content.role).toBe('model');
    expect(candidate.content.parts[0].text).toBe('hi there');
    expect(typeof candidate.content.parts[0].thoughtSignature).toBe('string');
    const u = r.json.usageMetadata;
    expect(u.promptTokenCount).toBeGreaterThan(0);
    expect(u.thoughtsTokenCount).toBeGreaterThan(0);
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount);
    // Nothing was cached: the count is left out, as proto3 JSON leaves a zero.
    expect(u.cachedContentTokenCount).toBeUndefined();
    expect(r.json.modelVersion).toBe(MODEL);
  });

  it('shows thought summaries only with includeThoughts, and does not think with thinkingBudget 0', async () => {
    const shown = await generate({ contents: [user('q [[think first this]] [[say a]]')], generationConfig: { thinkingConfig: { includeThoughts: true } } });
    expect(shown.json.candidates[0].content.parts[0]).toEqual({ text: 'first this', thought: true });
    expect(shown.json.candidates[0].content.parts[1].thoughtSignature).toBeDefined();
    const off = await generate({ contents: [user('q [[say a]]')], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } });
    expect(off.json.candidates[0].content.parts).toEqual([{ text: 'a' }]);
    expect(off.json.usageMetadata.thoughtsTokenCount).toBeUndefined();
  });

  it('reads directives from a function response, and signs the first of parallel calls only', async () => {
    const r = await generate({ contents: [user('go [[call read {"p":1}]] [[call read {"p":2}]]')] });
    const parts = r.json.candidates[0].content.parts;
    expect(parts.map((p: Json) => p.functionCall)).toEqual([{ name: 'read', args: { p: 1 } }, { name: 'read', args: { p: 2 } }]);
    expect(parts[0].thoughtSignature).toBeDefined();
    expect(parts[1].thoughtSignature).toBeUndefined();
    const next = await generate({
      contents: [user('go [[call read {"p":1}]] [[call read {"p":2}]]'), { role: 'model', parts },
        { role: 'user', parts: [{ functionResponse: { name: 'read', response: { output: 'x' } } }, { functionResponse: { name: 'read', response: { output: '[[say done]]' } } }] }],
    });
    expect(next.status).toBe(200);
    expect(next.json.candidates[0].content.parts[0].text).toBe('done');
  });

  it('answers JSON mode with JSON text the schema allows, and no call, whatever the last turn directs', async () => {
    const schema = {
      type: 'object',
      properties: { analysis: { type: 'string' }, confidence: { type: 'number', minimum: 0 }, kind: { type: 'string', enum: ['a', 'b'] }, extra: { type: 'string' } },
      required: ['analysis', 'confidence', 'kind'],
    };
    const json = await generate({ contents: [user('check [[call read {"p":1}]]')], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } });
    const parts = json.json.candidates[0].content.parts as Json[];
    expect(parts.some((p) => p.functionCall !== undefined)).toBe(false);
    expect(JSON.parse(parts.map((p) => p.text ?? '').join(''))).toEqual({ analysis: '', confidence: 0, kind: 'a' });
    // responseSchema (OpenAPI types in capitals), and no schema at all.
    const openapi = await generate({ contents: [user('q')], generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { n: { type: 'INTEGER' }, xs: { type: 'ARRAY', items: { type: 'STRING' } } }, required: ['n', 'xs'] } } });
    expect(JSON.parse(openapi.json.candidates[0].content.parts.map((p: Json) => p.text ?? '').join(''))).toEqual({ n: 0, xs: [] });
    const any = await generate({ contents: [user('q [[say not json]]')], generationConfig: { responseMimeType: 'application/json' } });
    expect(JSON.parse(any.json.candidates[0].content.parts.map((p: Json) => p.text ?? '').join(''))).toEqual({});
    // Without JSON mode the same turn calls, as before.
    const plain = await generate({ contents: [user('check [[call read {"p":1}]]')] });
    expect(plain.json.candidates[0].content.parts[0].functionCall).toEqual({ name: 'read', args: { p: 1 } });
  });

  it('caches a long prompt implicitly: the second request reads the first one\'s blocks', async () => {
    const first = await generate({ systemInstruction: { parts: [{ text: LONG }] }, contents: [user('one')] });
    const second = await generate({ systemInstruction: { parts: [{ text: LONG }] }, contents: [user('one'), { role: 'model', parts: first.json.candidates[0].content.parts }, user('two')] });
    expect(first.json.usageMetadata.cachedContentTokenCount).toBeUndefined();
    const u = second.json.usageMetadata;
    expect(u.cachedContentTokenCount).toBeGreaterThanOrEqual(1024);
    expect(u.cachedContentTokenCount % 128).toBe(0);
    expect(u.promptTokenCount).toBeGreaterThan(u.cachedContentTokenCount);
    expect(sim.geminiRequests.at(-1)!.cachedTokens).toBe(u.cachedContentTokenCount);
  });

  it('accepts snake_case names, as proto3 JSON does', async () => {
    const r = await generate({ system_instruction: { parts: [{ text: 's' }] }, contents: [user('[[say ok]]')], generation_config: { thinking_config: { thinking_budget: 0 } } });
    expect(r.status).toBe(200);
    expect(r.json.candidates[0].content.parts).toEqual([{ text: 'ok' }]);
  });
});

describe('request checks, in Google\'s error shape', () => {
  const bad = async (body: unknown, match: RegExp) => {
    const r = await generate(body);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe(400);
    expect(r.json.error.status).toBe('INVALID_ARGUMENT');
    expect(r.json.error.message).toMatch(match);
  };

  it('refuses unknown field names', () => bad({ contents: [user('x')], temperature: 1 }, /Unknown name "temperature"/));
  it('refuses a part without data or with two', async () => {
    await bad({ contents: [{ role: 'user', parts: [{}] }] }, /required oneof field 'data'/);
    await bad({ contents: [{ role: 'user', parts: [{ text: 'a', inlineData: { mimeType: 'image/png', data: 'AA==' } }] }] }, /more than one/);
  });
  it('refuses other roles', () => bad({ contents: [{ role: 'assistant', parts: [{ text: 'a' }] }] }, /valid role/));
  it('refuses an empty request', () => bad({ contents: [] }, /contents is not specified/));
  it('refuses a function response that is not an object', () =>
    bad({ contents: [user('a'), { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { name: 'f', response: 'text' } }] }] }, /protobuf.Struct/));
  it('refuses fewer responses than calls', () =>
    bad({
      contents: [user('a'), { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }],
    }, /number of function response parts/));
  it('refuses thinkingBudget with thinkingLevel', () =>
    bad({ contents: [user('a')], generationConfig: { thinkingConfig: { thinkingBudget: 10, thinkingLevel: 'LOW' } } }, /thinking budget and thinking level/));

  it('answers a missing key 403 and a wrong one 400, in the same shape', async () => {
    const none = await call(sim, `/v1beta/models/${MODEL}:generateContent`, { contents: [user('a')] }, { key: null });
    expect(none.status).toBe(403);
    expect(none.json.error.status).toBe('PERMISSION_DENIED');
    const wrong = await call(sim, `/v1beta/models/${MODEL}:generateContent`, { contents: [user('a')] }, { key: 'nope' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toMatch(/API key not valid/);
    const query = await fetch(`${sim.origin}/v1beta/models/${MODEL}:generateContent?key=gk`, { method: 'POST', body: JSON.stringify({ contents: [user('[[say q]]')] }) });
    expect(query.status).toBe(200);
  });

  it('answers [[error N]] with the status Google pairs with it', async () => {
    const r = await generate({ contents: [user('[[error 429]]')] });
    expect(r.status).toBe(429);
    expect(r.json.error.status).toBe('RESOURCE_EXHAUSTED');
  });
});

describe('streamGenerateContent', () => {
  it('streams SSE chunks, each a whole response, the last with finishReason and the full usage', async () => {
    const r = await call(sim, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, { contents: [user('[[say a fairly long reply that takes more than one chunk to send]] [[call read {"p":1}]]')] });
    expect(r.status).toBe(200);
    const chunks = sseChunks(r.text);
    expect(chunks.length).toBeGreaterThan(2);
    const parts = chunks.flatMap((c) => c.candidates[0].content.parts as Json[]);
    expect(parts.filter((p) => p.text !== undefined).map((p) => p.text).join('')).toBe('a fairly long reply that takes more than one chunk to send');
    const call1 = parts.find((p) => p.functionCall !== undefined)!;
    expect(call1.functionCall).toEqual({ name: 'read', args: { p: 1 } });
    expect(call1.thoughtSignature).toBeDefined();
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.candidates[0].finishReason).toBe('STOP');
    const full = (await generate({ contents: [user('[[say a fairly long reply that takes more than one chunk to send]] [[call read {"p":1}]]')] })).json.usageMetadata;
    expect(last.usageMetadata.candidatesTokenCount).toBe(full.candidatesTokenCount);
  });

  it('without alt=sse, answers one JSON array', async () => {
    const r = await call(sim, `/v1beta/models/${MODEL}:streamGenerateContent`, { contents: [user('[[say x]]')] });
    expect(Array.isArray(r.json)).toBe(true);
  });

  it('ends a [[stream-error]] stream with an error object', async () => {
    const r = await call(sim, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, { contents: [user('[[say some words to split in pieces here]] [[stream-error]]')] });
    const chunks = sseChunks(r.text);
    expect(chunks.at(-1)!.error.code).toBe(500);
  });
});

describe('countTokens', () => {
  it('counts contents, and a whole request the same as generateContent counts its prompt', async () => {
    const req = { systemInstruction: { parts: [{ text: 'sys' }] }, contents: [user('[[say x]]')] };
    const counted = await call(sim, `/v1beta/models/${MODEL}:countTokens`, { generateContentRequest: { model: `models/${MODEL}`, ...req } });
    const generated = await generate(req);
    expect(counted.json.totalTokens).toBe(generated.json.usageMetadata.promptTokenCount);
    const plain = await call(sim, `/v1beta/models/${MODEL}:countTokens`, { contents: [user('hello')] });
    expect(plain.json.totalTokens).toBeGreaterThan(0);
    const both = await call(sim, `/v1beta/models/${MODEL}:countTokens`, { contents: [user('a')], generateContentRequest: req });
    expect(both.status).toBe(400);
  });
});

describe('transport faults', () => {
  it('[[reset]] drops the connection before any header; [[reset-mid]] after part of a stream', async () => {
    await expect(generate({ contents: [user('[[reset]]')] })).rejects.toThrow();
    const r = await fetch(`${sim.origin}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse&key=${KEY}`, {
      method: 'POST', body: JSON.stringify({ contents: [user('[[say a reply long enough to be sent in several chunks of text]] [[reset-mid]]')] }),
    });
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
  });
});
