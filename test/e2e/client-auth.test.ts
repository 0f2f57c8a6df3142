/** A proxy with client keys: who may call it, which routes, and the client key never upstream. */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { World } from './harness.js';
import { startWiresWorld } from './wires-world.js';

const KEY = 'pp-client-' + 'a'.repeat(24);
const LIMITED = 'pp-limited-' + 'b'.repeat(24);
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let w: World;

beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.ds]
provider = "ds"
model = "deepseek-v4"

[models.cb]
provider = "oa"
model = "sim-model"

[models.an]
provider = "an"
model = "claude-sim"

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

it('a token count asks for a key as a conversation does, and never passes it upstream', async () => {
  const count = (headers: Record<string, string>, model = 'an') => fetch(`${w.proxy.url}/v1/messages/count_tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'how many?' }] }),
  });
  const none = await count({});
  expect(none.status).toBe(401);
  expect(await none.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  expect((await count({ 'x-api-key': LIMITED })).status).toBe(403);
  const before = w.tap!.requests.length;
  const ok = await count({ 'x-api-key': KEY });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('x-token-count')).toBe('upstream');
  const sent = w.tap!.requests.slice(before);
  expect(sent.map((r) => r.path)).toEqual(['/anthropic/v1/messages/count_tokens']);
  expect(JSON.stringify(sent[0]!.headers)).not.toContain(KEY);
});
