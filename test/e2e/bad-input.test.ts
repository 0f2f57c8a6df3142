/**
 * Bad requests, sent raw (the SDK would refuse to send most of them): each is a 4xx with an
 * OpenAI-shaped body and a stable code, and nothing is appended to any log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countLogLines, sessionIds, startWorld, type World } from './harness.js';

let w: World;
let linesBefore: number;
beforeAll(async () => {
  // A small body limit, so "too large" needs no big buffer.
  w = await startWorld({ bodyLimit: 16_384 });
  // One good request first, so there is a log that must not grow.
  await w.client.chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: 'bad-input warm-up [[say ok]]' }] });
  linesBefore = await countLogLines(w);
});
afterAll(async () => {
  await w?.close();
});

interface ErrorReply {
  status: number;
  json: { error: { message: string; type: string; param: string | null; code: string | null } };
}

async function post(body: string, contentType = 'application/json'): Promise<ErrorReply> {
  const res = await fetch(`${w.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': contentType, authorization: 'Bearer test' }, body });
  return { status: res.status, json: (await res.json()) as ErrorReply['json'] };
}

function expectShape(json: { error: Record<string, unknown> }): void {
  expect(Object.keys(json).sort()).toEqual(['error']);
  expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof json.error.message).toBe('string');
  expect((json.error.message as string).length).toBeGreaterThan(0);
  expect(json.error.type).toBe('invalid_request_error');
}

const user = { role: 'user', content: 'hi [[say hi]]' };

describe('bad input', () => {
  it('a body that is not JSON: 400 invalid_json', async () => {
    const r = await post('{"model": "ds", "messages": [');
    expect(r.status).toBe(400);
    expectShape(r.json);
    expect(r.json.error.code).toBe('invalid_json');
  });

  it('a JSON body that is not an object: 400 invalid_request', async () => {
    const r = await post('[1,2]');
    expect(r.status).toBe(400);
    expectShape(r.json);
    expect(r.json.error.code).toBe('invalid_request');
  });

  it('no messages: 400 invalid_request naming messages', async () => {
    const r = await post(JSON.stringify({ model: 'ds' }));
    expect(r.status).toBe(400);
    expectShape(r.json);
    expect(r.json.error.code).toBe('invalid_request');
    expect(r.json.error.param).toBe('messages');
    expect(r.json.error.message).toContain('messages');
  });

  it('a tool message without tool_call_id: 400 naming the field', async () => {
    const r = await post(JSON.stringify({
      model: 'ds',
      messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', content: 'x' }],
    }));
    expect(r.status).toBe(400);
    expectShape(r.json);
    expect(r.json.error.code).toBe('invalid_request');
    expect(r.json.error.param).toBe('messages[2].tool_call_id');
  });

  it('an unknown role: 400 unknown_role', async () => {
    const r = await post(JSON.stringify({ model: 'ds', messages: [user, { role: 'wizard', content: 'x' }] }));
    expect(r.status).toBe(400);
    expectShape(r.json);
    expect(r.json.error.code).toBe('unknown_role');
    expect(r.json.error.param).toBe('messages[1].role');
    expect(r.json.error.message).toContain('wizard');
  });

  it('a body over the limit: 413 body_too_large', async () => {
    const r = await post(JSON.stringify({ model: 'ds', messages: [{ role: 'user', content: 'x'.repeat(20_000) }] }));
    expect(r.status).toBe(413);
    expectShape(r.json);
    expect(r.json.error.code).toBe('body_too_large');
    expect(r.json.error.message).toContain('16384');
  });

  it('an unknown model: 404 model_not_found naming the known ones', async () => {
    const r = await post(JSON.stringify({ model: 'no-such-model', messages: [user] }));
    expect(r.status).toBe(404);
    expectShape(r.json);
    expect(r.json.error.code).toBe('model_not_found');
    expect(r.json.error.param).toBe('model');
    expect(r.json.error.message).toContain('ds');
  });

  it('an unknown path: 404 naming every wire\'s paths, in the shape of the wire that owns the path\'s first segment, without the query', async () => {
    const openai = await fetch(`${w.proxy.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(openai.status).toBe(404);
    const o = (await openai.json()) as ErrorReply['json'];
    expectShape(o);
    expect(o.error.message).toContain('/v1beta/models/{model}:generateContent');
    // A Gemini client's unknown call (embeddings here) answered as Google's API answers: {error: {code, message, status}}.
    const gemini = await fetch(`${w.proxy.url}/v1beta/models/gemini-2.5-flash:embedContent?key=AIzaSyD-secret-key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(gemini.status).toBe(404);
    const g = (await gemini.json()) as { error: { code: number; message: string; status: string; details?: unknown[] } };
    expect(Object.keys(g.error).sort()).toStrictEqual(['code', 'details', 'message', 'status']);
    expect(g.error.code).toBe(404);
    expect(g.error.status).toBe('NOT_FOUND');
    expect(g.error.message).toContain('POST /v1/chat/completions');
    expect(g.error.message).not.toContain('secret');
  });

  it('the SDK surfaces the error as its own class with the code', async () => {
    await expect(w.client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }))
      .rejects.toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error', param: 'model' });
  });

  it('a body sent as text/plain is refused with 415, valid JSON or not: a web page can post text/plain without asking first', async () => {
    const r = await post(JSON.stringify({ model: 'ds', messages: [{ role: 'user', content: 'from a web page' }] }), 'text/plain');
    expect(r.status).toBe(415);
    expect(r.json.error.code).toBe('unsupported_media_type');
    expect(r.json.error.message).toContain('text/plain');
  });

  it('a request a browser sends for a web page (an Origin header) is refused, in the client\'s wire', async () => {
    const body = JSON.stringify({ model: 'ds', messages: [{ role: 'user', content: 'from a web page' }] });
    const chat = await fetch(`${w.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body });
    expect(chat.status).toBe(403);
    expect(((await chat.json()) as ErrorReply['json']).error.code).toBe('origin_refused');
    const messages = await fetch(`${w.proxy.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body });
    expect(messages.status).toBe(403);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
  });

  it('none of them appended anything to any log', async () => {
    expect(await countLogLines(w)).toBe(linesBefore);
    expect((await sessionIds(w)).size).toBe(1);
  });

  it('each was counted in proxy_requests_total, under no route', async () => {
    const text = await (await fetch(`${w.proxy.url}/metrics`)).text();
    const count = (status: string) => Number(text.split('\n').find((l) => l.startsWith('proxy_requests_total{') && l.includes('model="none"') && l.includes(`status="${status}"`))?.split(' ').at(-1) ?? 0);
    expect(count('400')).toBe(5);
    expect(count('413')).toBe(1);
    expect(count('415')).toBe(1);
    expect(count('404')).toBe(2);
  });
});
