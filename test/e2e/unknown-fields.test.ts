/**
 * Fields of a chat request the proxy does not read go on to a chat upstream as the client sent
 * them (credentials redacted), never over what the proxy sets, and replay rebuilds them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { replayAll, startWorld, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld({ tap: true });
});
afterAll(async () => {
  await w?.close();
});

it('passes user, metadata, service_tier and logprobs upstream, keeps its own cache key, and replays', async () => {
  const key = 'sk-proj-' + 'Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXcVbNm1234';
  const res = await fetch(`${w.proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
    body: JSON.stringify({
      model: 'ds', messages: [{ role: 'user', content: 'hi [[say ok]]' }],
      user: 'u-42', metadata: { team: 'infra', note: `key ${key}` }, service_tier: 'flex', logprobs: false, prompt_cache_key: 'client-chosen',
    }),
  });
  expect(res.status).toBe(200);
  const sent = w.tap!.requests.at(-1)!.body as Record<string, unknown>;
  expect(sent).toMatchObject({ user: 'u-42', service_tier: 'flex', logprobs: false, metadata: { team: 'infra' } });
  expect(JSON.stringify(sent.metadata)).not.toContain(key);
  // The proxy's own key, not the client's (it is the session id, hashed).
  expect(sent.prompt_cache_key).not.toBe('client-chosen');
  expect((await replayAll(w)).code).toBe(0);
});
