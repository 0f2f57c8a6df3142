/**
 * Fields of a request the proxy does not read go on to an upstream of the client's own wire as the
 * client sent them (credentials redacted), never over what the proxy sets, never to another wire,
 * less what the upstream's preset says it refuses; the log records them, and replay rebuilds them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { readSessions, replayAll, tag } from './harness.js';
import { startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.ds]
provider = "ds"
model = "deepseek-v4"

[models.claude]
provider = "an"
model = "claude-sim"

[models.claude-thinking]
provider = "an"
model = "claude-sim"
thinking = "enabled"

[models.gpt]
provider = "rs"
model = "gpt-sim"
keep_reasoning = true
`,
  });
});
afterAll(async () => {
  await w?.close();
});

const SECRET = 'sk-proj-' + 'Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXcVbNm1234';

async function post(path: string, body: Record<string, unknown>): Promise<Response> {
  const res = await fetch(`${w.proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer test' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
  return res;
}

/** The body of the one upstream request made since `from` (of `prefix`). */
function sentSince(from: number, prefix: string): Record<string, unknown> {
  const got = wire(w, prefix, from);
  expect(got).toHaveLength(1);
  return got[0]!.body as Record<string, unknown>;
}

/** The `llm.req` params of the session whose first user message holds `marker`. */
async function loggedParams(marker: string): Promise<EventOf<'llm.req'>['params']> {
  for (const events of (await readSessions(w)).values()) {
    if (!JSON.stringify(events.find((e) => e.type === 'client.msg' && e.msg.role === 'user') ?? {}).includes(marker)) continue;
    return (events.find((e) => e.type === 'llm.req') as EventOf<'llm.req'>).params;
  }
  throw new Error(`no session for ${marker}`);
}

it('chat: user, metadata, service_tier pass to a chat upstream, its own cache key stays, the preset\'s refused fields are left out and named', async () => {
  const marker = tag('chat');
  const from = w.tap.requests.length;
  await post('/v1/chat/completions', {
    model: 'ds', messages: [{ role: 'user', content: `${marker} [[say ok]]` }],
    user: 'u-42', metadata: { team: 'infra', note: `key ${SECRET}` }, service_tier: 'flex', logprobs: true, top_logprobs: 2, prompt_cache_key: 'client-chosen',
  });
  const sent = sentSince(from, '/deepseek/');
  expect(sent).toMatchObject({ user: 'u-42', service_tier: 'flex', metadata: { team: 'infra' } });
  expect(JSON.stringify(sent.metadata)).not.toContain(SECRET);
  // DeepSeek's reasoning model answers 400 to these (src/config/presets.ts).
  expect(sent).not.toHaveProperty('logprobs');
  expect(sent).not.toHaveProperty('top_logprobs');
  // The proxy's own key, not the client's (it is the session id, hashed).
  expect(sent.prompt_cache_key).not.toBe('client-chosen');
  const params = await loggedParams(marker);
  expect(params.extra?.dropped).toEqual(['logprobs', 'top_logprobs']);
  expect(Object.keys(params.extra?.fields ?? {})).toEqual(['metadata', 'service_tier', 'user']);
});

it('messages: metadata, top_k, service_tier, container, mcp_servers and an unknown field pass to an Anthropic upstream, its own cache_control stays', async () => {
  const marker = tag('messages');
  const from = w.tap.requests.length;
  const fields = {
    metadata: { user_id: 'u-7' }, top_k: 5, service_tier: 'standard_only', container: 'container_01',
    mcp_servers: [{ type: 'url', url: 'https://mcp.example/sse', name: 'ex' }], future_field: { on: true },
  };
  await post('/v1/messages', { model: 'claude', max_tokens: 256, messages: [{ role: 'user', content: `${marker} [[say ok]]` }], cache_control: { type: 'ephemeral', ttl: '1h' }, ...fields });
  const sent = sentSince(from, '/anthropic/');
  expect(sent).toMatchObject(fields);
  // The route's markers (five-minute breakpoints, the preset's default), never the client's top-level one.
  expect(sent.cache_control).toBeUndefined();
  expect(JSON.stringify(sent)).toContain('"cache_control":{"type":"ephemeral"}');
  expect(JSON.stringify(sent)).not.toContain('"ttl":"1h"');
  expect(sent.model).toBe('claude-sim');
  expect(Object.keys((await loggedParams(marker)).extra?.fields ?? {})).toEqual(Object.keys(fields).sort());
});

it('messages: top_k does not go while thinking is on (the API refuses it then)', async () => {
  const from = w.tap.requests.length;
  await post('/v1/messages', { model: 'claude-thinking', max_tokens: 4096, messages: [{ role: 'user', content: `${tag('thinking')} [[say ok]]` }], top_k: 5, metadata: { user_id: 'u-8' } });
  const sent = sentSince(from, '/anthropic/');
  expect(sent.thinking).toMatchObject({ type: 'enabled' });
  expect(sent).not.toHaveProperty('top_k');
  expect(sent.metadata).toEqual({ user_id: 'u-8' });
});

it('responses: metadata, service_tier, safety_identifier, truncation, text.verbosity and include pass to a Responses upstream beside the proxy\'s own', async () => {
  const from = w.tap.requests.length;
  await post('/v1/responses', {
    model: 'gpt', input: `${tag('responses')} [[say ok]]`, stream: true,
    metadata: { run: 'r1' }, service_tier: 'flex', safety_identifier: 'user-hash', truncation: 'auto',
    text: { format: { type: 'json_object' }, verbosity: 'low' },
    include: ['reasoning.encrypted_content', 'message.output_text.logprobs'], store: true, prompt_cache_key: 'client-chosen',
  });
  const sent = sentSince(from, '/v1/responses');
  expect(sent).toMatchObject({ metadata: { run: 'r1' }, service_tier: 'flex', safety_identifier: 'user-hash', truncation: 'auto' });
  expect(sent.text).toEqual({ format: { type: 'json_object' }, verbosity: 'low' });
  // The route keeps reasoning, so it asks for it itself; the client's other entry follows.
  expect(sent.include).toEqual(['reasoning.encrypted_content', 'message.output_text.logprobs']);
  expect(sent.store).toBe(false);
  expect(sent.prompt_cache_key).not.toBe('client-chosen');
});

it('a field of one wire never goes to another wire\'s upstream', async () => {
  let from = w.tap.requests.length;
  await post('/v1/messages', { model: 'ds', max_tokens: 256, messages: [{ role: 'user', content: `${tag('cross')} [[say ok]]` }], top_k: 5, metadata: { user_id: 'u-9' }, container: 'c' });
  const chat = sentSince(from, '/deepseek/');
  expect(chat).not.toHaveProperty('top_k');
  expect(chat).not.toHaveProperty('metadata');
  expect(chat).not.toHaveProperty('container');
  from = w.tap.requests.length;
  await post('/v1/responses', { model: 'claude', input: `${tag('cross')} [[say ok]]`, metadata: { run: 'r2' }, text: { verbosity: 'low' }, truncation: 'auto' });
  const messages = sentSince(from, '/anthropic/');
  for (const field of ['metadata', 'text', 'truncation']) expect(messages).not.toHaveProperty(field);
  from = w.tap.requests.length;
  await post('/v1/chat/completions', { model: 'gpt', messages: [{ role: 'user', content: `${tag('cross')} [[say ok]]` }], user: 'u-1', logit_bias: { '42': 1 } });
  const responses = sentSince(from, '/v1/responses');
  expect(responses).not.toHaveProperty('user');
  expect(responses).not.toHaveProperty('logit_bias');
});

it('replay rebuilds every request above, passed-through and dropped fields included', async () => {
  const result = await replayAll(w);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
});
