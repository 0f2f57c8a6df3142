import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { post, user } from './client.js';

let sim: Sim;
beforeAll(async () => {
  sim = await createSim();
});
afterAll(async () => {
  await sim.close();
});

const call = (id: string, name = 'f') => ({ id, type: 'function', function: { name, arguments: '{}' } });
const asks = (ids: string[], extra: Record<string, unknown> = {}) => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => call(id)), ...extra });
const result = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'ok' });

async function expect400(body: unknown, code: string, param: string | null, base?: string) {
  const r = await post(sim, body, base === undefined ? {} : { base });
  expect(r.status).toBe(400);
  expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code, param });
  expect(typeof r.json.error.message).toBe('string');
  expect(sim.requests.at(-1)).toMatchObject({ status: 400, error: code, replica: null });
  return r.json.error.message as string;
}

describe('any mode', () => {
  it('malformed JSON', async () => {
    const message = await expect400('{"model": "m", "messages": [', 'invalid_json', null);
    expect(message).toMatch(/not valid JSON/);
  });

  it('missing model, empty messages, unknown role', async () => {
    await expect400({ messages: [user('a')] }, 'invalid_request', 'model');
    await expect400({ model: 'm', messages: [] }, 'invalid_request', 'messages');
    await expect400({ model: 'm', messages: [{ role: 'robot', content: 'a' }] }, 'invalid_request', 'messages.[0].role');
  });

  it('an orphaned tool result names its tool_call_id', async () => {
    const message = await expect400({ model: 'm', messages: [user('a'), result('call_x')] }, 'orphan_tool_result', 'messages.[1].tool_call_id');
    expect(message).toContain('call_x');
    // A result for a call of an earlier turn, after the turn closed, is orphaned too.
    await expect400(
      { model: 'm', messages: [user('a'), asks(['c1']), result('c1'), user('b'), result('c1')] },
      'orphan_tool_result',
      'messages.[4].tool_call_id',
    );
    // So is a second result for the same call.
    await expect400({ model: 'm', messages: [user('a'), asks(['c1']), result('c1'), result('c1')] }, 'orphan_tool_result', 'messages.[3].tool_call_id');
  });

  it('a tool call not answered before the next non-tool message, or the end', async () => {
    const message = await expect400(
      { model: 'm', messages: [user('a'), asks(['c1', 'c2']), result('c1'), user('b')] },
      'unanswered_tool_calls',
      'messages.[1].tool_calls',
    );
    expect(message).toContain('c2');
    expect(message).not.toContain('c1,');
    await expect400({ model: 'm', messages: [user('a'), asks(['c1'])] }, 'unanswered_tool_calls', 'messages.[1].tool_calls');
  });

  it('accepts a well-formed parallel tool turn, results in any order', async () => {
    const r = await post(sim, { model: 'm', messages: [user('a'), asks(['c1', 'c2']), result('c2'), result('c1'), user('b')] });
    expect(r.status).toBe(200);
  });
});

describe('cerebras', () => {
  it('rejects any message carrying reasoning_content, with its own body', async () => {
    const r = await post(sim, { model: 'm', messages: [user('a'), { role: 'assistant', content: 'x', reasoning_content: 'r' }, user('b')] }, { base: sim.urlFor('cerebras') });
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({
      message: "messages.1.assistant.reasoning_content: property 'messages.1.assistant.reasoning_content' is unsupported",
      type: 'invalid_request_error',
      param: 'validation_error',
      code: 'wrong_api_format',
    });
  });

  it('accepts reasoning given back as `reasoning`', async () => {
    const r = await post(sim, { model: 'm', messages: [user('a'), { role: 'assistant', content: 'x', reasoning: 'r' }, user('b')] }, { base: sim.urlFor('cerebras') });
    expect(r.status).toBe(200);
  });
});

describe('deepseek', () => {
  const base = () => sim.urlFor('deepseek');

  it('requires reasoning_content on an assistant message with tool calls', async () => {
    await expect400({ model: 'm', messages: [user('a'), asks(['c1']), result('c1')] }, 'missing_reasoning_content', 'messages.[1].reasoning_content', base());
    const ok = await post(sim, { model: 'm', messages: [user('a'), asks(['c1'], { reasoning_content: '' }), result('c1')] }, { base: base() });
    expect(ok.status).toBe(200);
  });

  it('does not require it on a turn without tool calls', async () => {
    const ok = await post(sim, { model: 'm', messages: [user('a'), { role: 'assistant', content: 'x' }, user('b')] }, { base: base() });
    expect(ok.status).toBe(200);
  });

  it('openai mode does not require it', async () => {
    expect((await post(sim, { model: 'm', messages: [user('a'), asks(['c1']), result('c1')] })).status).toBe(200);
  });
});
