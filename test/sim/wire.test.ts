import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { fetchJson, fixedClock, post, postStream, text, user } from './client.js';

let sim: Sim;
beforeAll(async () => {
  sim = await createSim({ clock: fixedClock });
});
afterAll(async () => {
  await sim.close();
});

const big = (tag: string, last = '[[say fine]]') => ({ model: 'm', messages: [user(text(1500, tag)), user(last)] });

describe('usage fields per mode', () => {
  it('openai: prompt_tokens_details.cached_tokens, no reasoning unless asked', async () => {
    const base = sim.urlFor('openai');
    await post(sim, big('o1'), { base });
    const r = await post(sim, big('o1'), { base });
    expect(r.json.usage).toEqual({
      prompt_tokens: r.json.usage.prompt_tokens,
      completion_tokens: 1,
      total_tokens: r.json.usage.prompt_tokens + 1,
      prompt_tokens_details: { cached_tokens: 1408 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(r.json.choices[0].message).toEqual({ role: 'assistant', content: 'fine', refusal: null });
    const thought = await post(sim, { model: 'm', messages: [user('[[think because]] [[say so]]')] }, { base });
    expect(thought.json.choices[0].message.reasoning_content).toBe('because');
    expect(thought.json.usage.completion_tokens_details.reasoning_tokens).toBe(2);
  });

  it('deepseek: prompt_cache_hit_tokens + prompt_cache_miss_tokens, reasoning_content always', async () => {
    const base = sim.urlFor('deepseek');
    await post(sim, big('d1'), { base });
    const r = await post(sim, big('d1'), { base });
    const u = r.json.usage;
    expect(u.prompt_cache_hit_tokens).toBe(1408);
    expect(u.prompt_cache_miss_tokens).toBe(u.prompt_tokens - 1408);
    expect(u.prompt_tokens_details).toBeUndefined();
    expect(u.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(typeof r.json.choices[0].message.reasoning_content).toBe('string');
    expect(r.json.choices[0].message.reasoning).toBeUndefined();
    expect(sim.requests.at(-1)!.mode).toBe('deepseek');
  });

  it('cerebras: prompt_tokens_details.cached_tokens, reasoning in `reasoning`', async () => {
    const base = sim.urlFor('cerebras');
    await post(sim, big('c1'), { base });
    const r = await post(sim, big('c1'), { base });
    expect(r.json.usage.prompt_tokens_details.cached_tokens).toBe(1408);
    expect(typeof r.json.choices[0].message.reasoning).toBe('string');
    expect(r.json.choices[0].message.reasoning_content).toBeUndefined();
  });

  it('stream: usage chunk with choices [] last before [DONE] when include_usage, and only then', async () => {
    const base = sim.urlFor('deepseek');
    await post(sim, big('s1'), { base });
    const r = await postStream(sim, { ...big('s1'), stream_options: { include_usage: true } }, { base });
    expect(r.status).toBe(200);
    expect(r.events.at(-1)).toBe('[DONE]');
    const usage = r.events.at(-2);
    expect(usage.choices).toEqual([]);
    expect(usage.usage.prompt_cache_hit_tokens).toBe(1408);
    expect(r.events.slice(0, -2).every((e) => e.usage === null)).toBe(true);
    const plain = await postStream(sim, big('s1'), { base });
    expect(plain.events.some((e) => e !== '[DONE]' && 'usage' in e)).toBe(false);
  });
});

describe('stream shape', () => {
  it('role chunk, reasoning deltas, content deltas, finish chunk', async () => {
    const r = await postStream(sim, { model: 'm', messages: [user('[[think a long chain of thought here]] [[say the answer is forty-two, certainly]]')] });
    const deltas = r.events.filter((e) => e !== '[DONE]').map((e) => e.choices[0]);
    expect(deltas[0].delta).toEqual({ role: 'assistant', content: '' });
    const reasoning = deltas.map((d) => d.delta.reasoning_content ?? '').join('');
    const content = deltas.map((d) => d.delta.content ?? '').join('');
    expect(reasoning).toBe('a long chain of thought here');
    expect(content).toBe('the answer is forty-two, certainly');
    expect(deltas.filter((d) => d.delta.content !== undefined && d.delta.content !== '').length).toBeGreaterThan(1);
    expect(deltas.at(-1)).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect(r.events.at(-1)).toBe('[DONE]');
    expect(r.events[0].object).toBe('chat.completion.chunk');
  });

  it('tool calls by index: id, type and name first, then the arguments in pieces', async () => {
    const tools = ['read', 'list'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
    const r = await postStream(sim, { model: 'm', tools, messages: [user('[[call read {"path":"src/index.ts","limit":200}]] [[call list {"dir":"."}]]')] });
    const calls = r.events.filter((e) => e !== '[DONE]').flatMap((e) => e.choices[0].delta.tool_calls ?? []);
    const first = calls.filter((c) => c.index === 0);
    expect(first[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'read', arguments: '' } });
    expect(first[0].id).toMatch(/^call_/);
    expect(first.slice(1).every((c) => c.id === undefined && c.function.name === undefined)).toBe(true);
    expect(first.length).toBeGreaterThan(2);
    expect(first.map((c) => c.function.arguments).join('')).toBe('{"path":"src/index.ts","limit":200}');
    expect(calls.filter((c) => c.index === 1).map((c) => c.function.arguments).join('')).toBe('{"dir":"."}');
    expect(r.events.at(-2).choices[0].finish_reason).toBe('tool_calls');
  });

  it('calls no function a request did not declare: a directive to call one is answered with text', async () => {
    const r = await post(sim, { model: 'm', messages: [user('Summarize: [[call read {"p":1}]]')] });
    expect(r.json.choices[0].message.tool_calls).toBeUndefined();
    expect(r.json.choices[0].message.content).toMatch(/^OK\. This is the simulator's reply/);
    expect(r.json.choices[0].finish_reason).toBe('stop');
    // Nor one it was given, told `tool_choice: "none"`.
    const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }];
    const none = await post(sim, { model: 'm', tools, tool_choice: 'none', messages: [user('Summarize: [[call read {"p":1}]]')] });
    expect(none.json.choices[0].message.tool_calls).toBeUndefined();
    expect(none.json.choices[0].finish_reason).toBe('stop');
    const auto = await post(sim, { model: 'm', tools, tool_choice: 'auto', messages: [user('Summarize: [[call read {"p":1}]]')] });
    expect(auto.json.choices[0].message.tool_calls).toHaveLength(1);
  });

  it('the official SDK reads streamed and plain replies, tool calls included', async () => {
    const client = new OpenAI({ baseURL: sim.url, apiKey: 'k', maxRetries: 0 });
    const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[[say hi]]' }] });
    expect(plain.choices[0]!.message.content).toBe('hi');
    const stream = client.chat.completions.stream({
      model: 'm',
      messages: [{ role: 'user', content: '[[call f {"a":1}]]' }],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    expect(done.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'f', arguments: '{"a":1}' } });
    expect(done.usage?.completion_tokens).toBeGreaterThan(0);
  });
});

describe('directives over HTTP', () => {
  it('[[error STATUS]] is an OpenAI-shaped error with that status', async () => {
    const r = await post(sim, { model: 'm', messages: [user('[[error 429]]')] });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: { message: expect.stringContaining('429'), type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } });
    const s = await post(sim, { model: 'm', messages: [user('[[error 503]]')], stream: true });
    expect(s.status).toBe(503);
    expect(sim.requests.at(-1)).toMatchObject({ status: 503, error: 'server_error', replica: null });
  });

  it('[[overflow]] and a prompt over contextTokens are 400 context_length_exceeded', async () => {
    const r = await post(sim, { model: 'm', messages: [user('[[overflow]]')] });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('context_length_exceeded');
    const small = await createSim({ contextTokens: 100 });
    try {
      const o = await post(small, { model: 'm', messages: [user(text(120))] });
      expect(o.status).toBe(400);
      expect(o.json.error).toMatchObject({ code: 'context_length_exceeded', type: 'invalid_request_error', param: 'messages' });
      expect(o.json.error.message).toContain('maximum context length is 100 tokens');
      expect((await post(small, { model: 'm', messages: [user(text(90))] })).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('[[slow MS]] delays a plain reply and every stream chunk', async () => {
    let t = Date.now();
    await post(sim, { model: 'm', messages: [user('[[slow 60]]')] });
    expect(Date.now() - t).toBeGreaterThanOrEqual(55);
    t = Date.now();
    const r = await postStream(sim, { model: 'm', messages: [user('[[slow 15]] [[say 0123456789abcdefXYZ]]')] });
    expect(r.events.length).toBe(5); // role, 2 content pieces, finish, [DONE]
    expect(Date.now() - t).toBeGreaterThanOrEqual(5 * 15 - 5);
  });

  it('[[stream-error]] sends some content then an error event, and no [DONE]', async () => {
    const r = await postStream(sim, { model: 'm', messages: [user('[[say one two three four five six seven eight nine ten]] [[stream-error]]')] });
    expect(r.status).toBe(200);
    const last = r.events.at(-1);
    expect(last.error).toMatchObject({ type: 'server_error', code: 'stream_error' });
    expect(r.events).not.toContain('[DONE]');
    const content = r.events.slice(0, -1).map((e) => e.choices[0].delta.content ?? '').join('');
    expect(content.length).toBeGreaterThan(0);
    expect('one two three four five six seven eight nine ten'.startsWith(content)).toBe(true);
    expect(sim.requests.at(-1)).toMatchObject({ status: 200, error: 'stream_error' });
    const plain = await post(sim, { model: 'm', messages: [user('[[stream-error]]')] });
    expect(plain.status).toBe(500);
  });

  it('the SDK sees a mid-stream error as an error', async () => {
    const client = new OpenAI({ baseURL: sim.url, apiKey: 'k', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: '[[stream-error]]' }] });
    await expect(async () => {
      for await (const _chunk of stream) { /* drain */ }
    }).rejects.toThrow(/stream-error/);
  });
});

describe('determinism', () => {
  it('the same request gives the same bytes on two simulators with the same options', async () => {
    const other = await createSim({ clock: fixedClock });
    const fresh = await createSim({ clock: fixedClock });
    try {
      const body = { model: 'm', messages: [user('[[think x]] [[call f {"a":1}]] [[say y]]')] };
      const a = await post(other, body);
      const b = await post(fresh, body);
      expect(a.text).toBe(b.text);
      const sa = await postStream(other, { ...body, stream_options: { include_usage: true } });
      const sb = await postStream(fresh, { ...body, stream_options: { include_usage: true } });
      expect(sa.text).toBe(sb.text);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  it('the same request twice on one simulator differs only in cached usage', async () => {
    const body = { model: 'm', messages: [user(`${text(1200, 'det')} [[call g {"b":2}]]`)] };
    const a = (await post(sim, body)).json;
    const b = (await post(sim, body)).json;
    expect(b.usage.prompt_tokens_details.cached_tokens).toBe(1152);
    expect({ ...a, usage: null }).toEqual({ ...b, usage: null });
    expect(a.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(a.created).toBe(Math.floor(fixedClock() / 1000));
  });
});

describe('other endpoints', () => {
  it('GET /v1/models lists the models', async () => {
    expect(await fetchJson(`${sim.url}/models`)).toEqual({ object: 'list', data: [{ id: 'sim', object: 'model', created: 0, owned_by: 'prefix-proxy-sim' }] });
    const sdk = new OpenAI({ baseURL: sim.urlFor('deepseek'), apiKey: 'k' });
    expect((await sdk.models.list()).data.map((m) => m.id)).toEqual(['sim']);
  });

  it('admin endpoints give stats and records, advance the clock and reset', async () => {
    const other = await createSim({ clock: fixedClock });
    try {
      await post(other, { model: 'm', messages: [user('hello')] });
      const stats = await fetchJson(`${other.origin}/_sim/stats`);
      expect(stats).toMatchObject({ requests: 1, ok: 1, errors: 0, reasoning: { expected: 0 } });
      const records = await fetchJson(`${other.origin}/_sim/requests`);
      expect(records[0]).toMatchObject({ seq: 1, model: 'm', status: 200, replica: 0, stream: false, closedEarly: false });
      const adv = await fetchJson(`${other.origin}/_sim/advance?ms=5000`, { method: 'POST' });
      expect(adv.now).toBe(fixedClock() + 5000);
      expect(other.now()).toBe(fixedClock() + 5000);
      expect((await fetch(`${other.origin}/_sim/advance?ms=-1`, { method: 'POST' })).status).toBe(400);
      await fetch(`${other.origin}/_sim/reset`, { method: 'POST' });
      expect(other.requests).toHaveLength(0);
      expect((await fetch(`${other.origin}/_sim/nothing`)).status).toBe(404);
      expect((await fetch(`${other.origin}/v2/chat/completions`, { method: 'POST', body: '{}' })).status).toBe(404);
    } finally {
      await other.close();
    }
  });

  it('records timings of a reply', async () => {
    await post(sim, { model: 'm', messages: [user('[[slow 20]]')] });
    const r = sim.requests.at(-1)!;
    expect(r.firstByteAt).not.toBeNull();
    expect(r.finishedAt).not.toBeNull();
    expect(r.closedEarly).toBe(false);
  });

  it('with apiKey, another bearer is a 401', async () => {
    const locked = await createSim({ apiKey: 'secret' });
    try {
      expect((await post(locked, { model: 'm', messages: [user('a')] }, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
      expect((await post(locked, { model: 'm', messages: [user('a')] }, { headers: { authorization: 'Bearer secret' } })).status).toBe(200);
    } finally {
      await locked.close();
    }
  });
});
