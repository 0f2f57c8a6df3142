/** `capture_content = true`: the request span carries the messages and the reply, redacted as the log is. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorld, type World } from '../e2e/harness.js';
import { ask } from '../e2e/wires-client.js';
import { startReceiver, type Receiver } from './otlp-receiver.js';

let receiver: Receiver;
let world: World;
// An OpenAI-shaped key: a credential shape the log's redaction knows.
const KEY = `sk-proj-${'Ab3dE5gH7jK9mN1pQ2rS4tU6'.repeat(3)}`;

beforeAll(async () => {
  receiver = await startReceiver();
  world = await startWorld({ extraToml: `[tracing]\nendpoint = "${receiver.endpoint}"\ncapture_content = true` });
  await ask(world, 'ds', [{ role: 'user', content: `capture-marker please use ${KEY}` }], undefined);
  await world.close();
}, 30_000);

afterAll(async () => {
  await receiver.close();
});

it('puts the client\'s messages and the reply on the request span, with credentials redacted', () => {
  const root = receiver.spans.find((s) => s.kind === 2)!;
  const input = root.attributes['gen_ai.input.messages'];
  const output = root.attributes['gen_ai.output.messages'];
  expect(typeof input).toBe('string');
  expect(input).toContain('capture-marker');
  expect(input).not.toContain(KEY);
  expect(typeof output).toBe('string');
  expect(JSON.parse(output as string)).toHaveProperty('content');
});
