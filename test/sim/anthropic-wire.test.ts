import { afterEach, describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../src/core/route.js';
import { anthropicMessages } from '../../src/dialects/anthropic-messages/index.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';
import { decodeStream } from '../dialects/common.case.js';
import { messages, messagesStream, userText, VERSION } from './anthropic-client.js';
import { fixedClock, post, user } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});
async function start(opts: SimOptions = {}): Promise<Sim> {
  sim = await createSim({ clock: fixedClock, ...opts });
  return sim;
}
const route: DialectRoute = {
  wire: 'anthropic-messages', preset: 'anthropic', provider: 'sim', model: 'claude-sim', baseUrl: 'unused',
  reasoningOut: 'none', reasoningOnToolTurns: false, headers: {},
};
const base = { model: 'claude-sim', max_tokens: 4096 };

describe('sim anthropic wire: replies', () => {
  it('answers a Messages request with a message body in Anthropic fields', async () => {
    const s = await start();
    const r = await messages(s, { ...base, messages: [userText('[[say Hello there.]]')] });
    expect(r.status).toBe(200);
    expect(r.headers.get('request-id')).toMatch(/^req_sim/);
    expect(r.json).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sim', content: [{ type: 'text', text: 'Hello there.' }], stop_reason: 'end_turn', stop_sequence: null });
    expect(Object.keys(r.json.usage).sort()).toStrictEqual([
      'cache_creation', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'input_tokens', 'output_tokens', 'output_tokens_details', 'service_tier',
    ]);
    expect(r.json.usage.cache_creation).toStrictEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    expect(s.anthropicRequests).toHaveLength(1);
    expect(s.requests).toHaveLength(0);
  });

  it('answers [[call]] with tool_use blocks whose input is the parsed arguments', async () => {
    const s = await start();
    const r = await messages(s, { ...base, messages: [userText('[[call read_file {"path":"a.ts"}]] [[call list_dir]]')] });
    expect(r.json.stop_reason).toBe('tool_use');
    expect(r.json.content).toMatchObject([
      { type: 'tool_use', name: 'read_file', input: { path: 'a.ts' } },
      { type: 'tool_use', name: 'list_dir', input: {} },
    ]);
    expect(r.json.content[0].id).toMatch(/^toolu_[0-9a-f]{24}$/);
  });

  it('streams the real event sequence, which decodes to the same reply as the body', async () => {
    const s = await start();
    const body = { ...base, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [userText('[[think Plan: read it.]] [[say Reading a longer sentence now.]] [[call read_file {"path":"a.ts"}]]')] };
    const streamed = await messagesStream(s, body);
    expect(streamed.status).toBe(200);
    const n = streamed.names;
    expect(n[0]).toBe('message_start');
    expect(n[1]).toBe('content_block_start');
    expect(n.slice(-2)).toStrictEqual(['message_delta', 'message_stop']);
    expect(n.filter((x) => x === 'ping')).toHaveLength(1);
    expect(n.filter((x) => x === 'content_block_start')).toHaveLength(3);
    expect(n.filter((x) => x === 'content_block_stop')).toHaveLength(3);
    const deltas = streamed.events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.type);
    expect(deltas.indexOf('signature_delta')).toBe(deltas.lastIndexOf('thinking_delta') + 1);
    expect(deltas).toContain('input_json_delta');
    expect(streamed.events[0].message.usage.output_tokens).toBe(1);

    const whole = await messages(s, body);
    const fromStream = decodeStream(anthropicMessages, route, [new TextEncoder().encode(streamed.text)]).reply;
    expect(fromStream).toStrictEqual(anthropicMessages.decodeReply(200, whole.json, route));
    expect(fromStream).toMatchObject({ content: 'Reading a longer sentence now.', thinking: 'Plan: read it.', finish_reason: 'tool_calls' });
    expect(fromStream.tool_calls).toStrictEqual([{ id: whole.json.content[2].id, name: 'read_file', arguments: '{"path":"a.ts"}' }]);
  });

  it('answers on /v1/messages too, and leaves the chat wire as it was', async () => {
    const s = await start();
    expect((await messages(s, { ...base, messages: [userText('hi')] }, VERSION, '/v1/messages')).status).toBe(200);
    const chat = await post(s, { model: 'm', messages: [user('hi')] });
    expect(chat.json.object).toBe('chat.completion');
    expect(s.anthropicRequests.map((r) => r.path)).toStrictEqual(['/v1/messages']);
    s.reset();
    expect(s.anthropicRequests).toHaveLength(0);
    expect(s.requests).toHaveLength(0);
  });
});

describe('sim anthropic wire: what the API checks first', () => {
  it('requires the anthropic-version header', async () => {
    const s = await start();
    const r = await messages(s, { ...base, messages: [userText('hi')] }, {});
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
    expect(r.json.request_id).toMatch(/^req_sim/);
  });

  it('takes the key as x-api-key (or a bearer token) when it has one', async () => {
    const s = await start({ apiKey: 'sk-ant-sim' });
    const body = { ...base, messages: [userText('hi')] };
    const wrong = await messages(s, body, { ...VERSION, 'x-api-key': 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.type).toBe('authentication_error');
    expect((await messages(s, body, { ...VERSION, 'x-api-key': 'sk-ant-sim' })).status).toBe(200);
    expect((await messages(s, body, { ...VERSION, authorization: 'Bearer sk-ant-sim' })).status).toBe(200);
  });

  it('refuses a body without max_tokens, an unknown block type, and an empty text block', async () => {
    const s = await start();
    const bad = [
      [{ model: 'm', messages: [userText('hi')] }, /max_tokens/],
      [{ ...base, messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] }, /messages\.0\.content\.0: Input tag 'video'/],
      [{ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] }, /text content blocks must be non-empty/],
      [{ ...base, messages: [{ role: 'system', content: 'x' }] }, /messages\.0\.role/],
    ] as const;
    for (const [body, message] of bad) {
      const r = await messages(s, body);
      expect(r.status).toBe(400);
      expect(r.json.error.message).toMatch(message);
    }
  });
});

describe('sim anthropic wire: directives', () => {
  it('[[error N]] and [[overflow]] answer in Anthropic error shapes the dialect reads', async () => {
    const s = await start();
    const limited = await messages(s, { ...base, messages: [userText('[[error 429]]')] });
    expect(limited.status).toBe(429);
    expect(limited.json.error.type).toBe('rate_limit_error');
    const overloaded = await messages(s, { ...base, messages: [userText('[[error 529]]')] });
    expect(overloaded.json.error.type).toBe('overloaded_error');
    const over = await messages(s, { ...base, messages: [userText('[[overflow]]')] });
    expect(over.status).toBe(400);
    expect(over.json.error.message).toMatch(/^prompt is too long: \d+ tokens > 131072 maximum$/);
    expect(anthropicMessages.decodeError(400, JSON.stringify(over.json)).contextOverflow).toBe(true);
  });

  it('refuses a prompt over the context with the same wording', async () => {
    const s = await start({ contextTokens: 50 });
    const r = await messages(s, { ...base, messages: [userText('x'.repeat(400))] });
    expect(r.json.error.message).toMatch(/^prompt is too long: \d+ tokens > 50 maximum$/);
  });

  it('[[stream-error]] breaks a stream with an error event, and is a 500 when not streaming', async () => {
    const s = await start();
    const body = { ...base, messages: [userText('[[say Some words that will be cut in half.]] [[stream-error]]')] };
    const streamed = await messagesStream(s, body);
    expect(streamed.names.at(-1)).toBe('error');
    expect(streamed.names).not.toContain('message_stop');
    expect(streamed.events.at(-1)).toStrictEqual({ type: 'error', error: { type: 'api_error', message: 'Internal server error (asked for by [[stream-error]]).' } });
    const { deltas, reply } = decodeStream(anthropicMessages, route, [new TextEncoder().encode(streamed.text)]);
    expect(deltas.at(-1)?.type).toBe('error');
    expect(reply.finish_reason).toBe('error');
    expect(s.anthropicRequests[0]?.error).toBe('stream_error');
    const whole = await messages(s, body);
    expect(whole.status).toBe(500);
    expect(whole.json.error.type).toBe('api_error');
  });
});
