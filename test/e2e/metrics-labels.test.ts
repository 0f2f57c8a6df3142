/** Metric label values stay bounded by the config, whatever model strings clients send. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorld, tag, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => world.close());

it('a model the config does not name is labelled provider/*, a named one by its name', async () => {
  const made = tag('made-up-model');
  await world.client.chat.completions.create({ model: `oa/${made}`, messages: [{ role: 'user', content: 'hi' }] });
  await world.client.chat.completions.create({ model: 'oa', messages: [{ role: 'user', content: tag('hello') }] });
  const text = await (await fetch(`${world.proxy.url}/metrics`)).text();
  expect(text).not.toContain(made);
  expect(text).toMatch(/proxy_requests_total\{[^}]*model="oa\/\*"[^}]*\} 1/);
  expect(text).toMatch(/proxy_requests_total\{[^}]*model="oa"[^}]*status="200"[^}]*\} 1|proxy_requests_total\{[^}]*status="200"[^}]*model="oa"[^}]*\} 1/);
});
