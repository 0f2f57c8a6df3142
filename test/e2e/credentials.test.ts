/**
 * Credentials: the client's bearer goes upstream when the provider has no key of its own, and
 * no credential — the bearer, or one pasted into a message — ever reaches the log.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sessionsDir, startWorld, tag, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld({ tap: true });
});
afterAll(async () => world.close());

it('passes the client bearer through, and keeps every credential out of the log', async () => {
  const bearer = 'sk-proj-Q7xT2mVb9LkR4sW8nY3pZ6cH1dF5gJ0aE7uI9oP2qS4tK8vN';
  const pasted = 'ghp_8fK2mQ9xL4vB7nR1tY6wZ3cS5dH0jP2aE4uG';
  const marker = tag('creds');
  const client = new OpenAI({ baseURL: `${world.proxy.url}/v1`, apiKey: bearer, maxRetries: 0 });
  const first = { role: 'user' as const, content: `${marker} my token is ${pasted}, please check it` };
  const answer = await client.chat.completions.create({ model: 'ds', messages: [first] });
  // The next turn resends the token: the log holds that message already, and writes only what is new.
  await client.chat.completions.create({
    model: 'ds', messages: [first, { role: 'assistant', content: answer.choices[0]!.message.content ?? '' }, { role: 'user', content: 'and now?' }],
  });
  const counted = await world.proxy.metrics.registry.getSingleMetricAsString('proxy_redactions_total');
  expect(counted).toMatch(/^proxy_redactions_total\{kind="github"\} 1$/m);
  expect(counted).not.toContain('kind="openai"');

  const wire = world.tap!.requests.find((r) => JSON.stringify(r.body).includes(marker))!;
  expect(wire.headers.authorization).toBe(`Bearer ${bearer}`);
  // What the window sends is what the log holds (so replay matches): the pasted token is redacted upstream too.
  expect(JSON.stringify(wire.body)).not.toContain(pasted);

  const dir = sessionsDir(world);
  const logs = await Promise.all((await readdir(dir)).filter((f) => f.endsWith('.jsonl')).map((f) => readFile(join(dir, f), 'utf8')));
  const text = logs.join('\n');
  expect(text).toContain(marker);
  expect(text).not.toContain(bearer);
  expect(text).not.toContain(pasted);
  expect(text).toContain('[redacted:github]');
});
