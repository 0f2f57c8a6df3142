/** A proxy with client keys: who may call it, which routes, and the client key never upstream. */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorld, type World } from './harness.js';

const KEY = 'pp-client-' + 'a'.repeat(24);
const LIMITED = 'pp-limited-' + 'b'.repeat(24);
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let w: World;

beforeAll(async () => {
  w = await startWorld({
    tap: true,
    extraToml: `
[auth]
keys = [
  { name = "dev", sha256 = "${sha(KEY)}" },
  { name = "limited", sha256 = "${sha(LIMITED)}", models = ["cb"] },
]
`,
  });
});
afterAll(async () => {
  await w?.close();
});

const client = (apiKey: string) => new OpenAI({ baseURL: `${w.proxy.url}/v1`, apiKey, maxRetries: 0 });

it('a request without a known key is a 401 in the client\'s wire', async () => {
  const err = await client('guess').chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: 'hi [[say ok]]' }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
  const messages = await fetch(`${w.proxy.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'ds', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) });
  expect(messages.status).toBe(401);
  expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
});

it('a known key is served, and the upstream never sees it', async () => {
  const reply = await client(KEY).chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: 'hi [[say ok]]' }] });
  expect(reply.choices[0]?.message.content).toBe('ok');
  const sent = JSON.stringify(w.tap!.requests.map((r) => r.headers));
  expect(sent).not.toContain(KEY);
});

it('a key limited to some routes gets 403 for the others', async () => {
  const err = await client(LIMITED).chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: 'hi [[say ok]]' }] }).catch((e: unknown) => e);
  expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
  expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_allowed');
  const ok = await client(LIMITED).chat.completions.create({ model: 'cb', messages: [{ role: 'user', content: 'hi [[say ok]]' }] });
  expect(ok.choices[0]?.message.content).toBe('ok');
});
