import { afterEach, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import type { SimMode, SimOptions } from '../../src/sim/types.js';
import { post, user } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(mode: SimMode, opts: SimOptions = {}): Promise<Sim> {
  sim = await createSim({ mode, ...opts });
  return sim;
}

/** A tool round: the model calls, the client answers; returns the assistant message as given. */
async function toolRound(s: Sim) {
  const messages: Record<string, unknown>[] = [user('[[call read {"p":1}]]')];
  const r = await post(s, { model: 'm', messages, tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }] });
  expect(r.status).toBe(200);
  return { messages, reply: r.json.choices[0].message };
}

describe('reasoning given back', () => {
  it('deepseek: counts returned, missing (changed) and wrong-field replies', async () => {
    const s = await start('deepseek');
    const { messages, reply } = await toolRound(s);
    const thinking = reply.reasoning_content as string;
    expect(thinking.length).toBeGreaterThan(0);
    const callId = reply.tool_calls[0].id as string;
    const next = (assistant: Record<string, unknown>) => [...messages, assistant, { role: 'tool', tool_call_id: callId, content: 'data' }];

    expect((await post(s, { model: 'm', messages: next(reply) })).status).toBe(200);
    expect(s.requests.at(-1)!.reasoning).toEqual({ expected: 1, returned: 1, missing: 0, wrongField: 0 });

    await post(s, { model: 'm', messages: next({ ...reply, reasoning_content: 'something else' }) });
    expect(s.requests.at(-1)!.reasoning).toMatchObject({ expected: 1, missing: 1 });

    await post(s, { model: 'm', messages: next({ ...reply, reasoning_content: '', reasoning: thinking }) });
    expect(s.requests.at(-1)!.reasoning).toMatchObject({ expected: 1, wrongField: 1 });

    expect(s.stats().reasoning).toEqual({ expected: 3, returned: 1, missing: 1, wrongField: 1 });
  });

  it('matches text replies by their content, and counts every matching message of a request', async () => {
    const s = await start('cerebras');
    const first = await post(s, { model: 'm', messages: [user('hi')] });
    const a = first.json.choices[0].message;
    expect(typeof a.reasoning).toBe('string');
    const second = await post(s, { model: 'm', messages: [user('hi'), a, user('more')] });
    const b = second.json.choices[0].message;
    // The client keeps the first reply's reasoning but drops the second's.
    await post(s, { model: 'm', messages: [user('hi'), a, user('more'), { role: 'assistant', content: b.content }, user('again')] });
    expect(s.requests.at(-1)!.reasoning).toEqual({ expected: 2, returned: 1, missing: 1, wrongField: 0 });
  });

  it('openai: only replies that had reasoning are expected back', async () => {
    const s = await start('openai');
    const plain = (await post(s, { model: 'm', messages: [user('hi')] })).json.choices[0].message;
    const thought = (await post(s, { model: 'm', messages: [user('[[think deep]] [[say so]]')] })).json.choices[0].message;
    expect(thought.reasoning_content).toBe('deep');
    await post(s, { model: 'm', messages: [user('hi'), { role: 'assistant', content: plain.content }, user('[[think deep]] [[say so]]'), { role: 'assistant', content: 'so' }, user('x')] });
    expect(s.requests.at(-1)!.reasoning).toEqual({ expected: 1, returned: 0, missing: 1, wrongField: 0 });
  });

  it('requireReasoning turns a missing or misplaced reasoning into a 400', async () => {
    const s = await start('deepseek', { requireReasoning: true });
    const { messages, reply } = await toolRound(s);
    const callId = reply.tool_calls[0].id as string;
    const tool = { role: 'tool', tool_call_id: callId, content: 'data' };
    const bad = await post(s, { model: 'm', messages: [...messages, { ...reply, reasoning_content: '' }, tool] });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'reasoning_not_returned', param: 'messages.[1].reasoning_content' });
    expect(s.requests.at(-1)!.reasoning.missing).toBe(1);
    const good = await post(s, { model: 'm', messages: [...messages, reply, tool] });
    expect(good.status).toBe(200);
  });

  it('cerebras: reasoning_content given back is a 400 and counted as the wrong field', async () => {
    const s = await start('cerebras');
    const { messages, reply } = await toolRound(s);
    const back = { role: 'assistant', content: null, tool_calls: reply.tool_calls, reasoning_content: reply.reasoning };
    const r = await post(s, { model: 'm', messages: [...messages, back, { role: 'tool', tool_call_id: reply.tool_calls[0].id, content: 'd' }] });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('wrong_api_format');
    expect(s.stats().reasoning).toMatchObject({ expected: 1, wrongField: 1 });
  });
});
