/**
 * Headers over Node's 16 KB limit: a 431 in the wire of the endpoint asked for (the SDKs read
 * their own error shape), not the HTTP parser's bare answer.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorld, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.close();
});

function post(path: string): Promise<{ status: number; body: unknown }> {
  const url = new URL(path, w.proxy.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-big': 'a'.repeat(20_000) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

it('answers a chat request with an OpenAI error, an Anthropic one with Anthropic\'s', async () => {
  const chat = await post('/v1/chat/completions');
  expect(chat.status).toBe(431);
  expect(chat.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'headers_too_large' } });
  const messages = await post('/v1/messages?beta=true');
  expect(messages.status).toBe(431);
  expect(messages.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  expect(JSON.stringify(messages.body)).toContain('16384 bytes');
  // The proxy goes on serving.
  expect((await fetch(`${w.proxy.url}/healthz`)).status).toBe(200);
});
