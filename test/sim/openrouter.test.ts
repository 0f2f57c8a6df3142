import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReasoningDetailsAccumulator } from '../../src/dialects/openai-chat/reasoning-details.js';
import { openrouterCost } from '../../src/sim/openrouter.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { post, postStream, text, user } from './client.js';

let sim: Sim;
let base: string;
beforeAll(async () => {
  sim = await createSim({ routing: 'random' });
  base = sim.urlFor('openrouter');
});
afterAll(async () => {
  await sim.close();
});

type Msg = Record<string, unknown>;
const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }];

/** One tool round on the openrouter mode: returns the history so far and the reply's message. */
async function round(messages: Msg[], model = 'meta/muse-spark-1.3') {
  const r = await post(sim, { model, tools, messages }, { base });
  expect(r.status).toBe(200);
  // Sent back as the proxy sends it: the details alone, without the reasoning text.
  const { reasoning, refusal: _refusal, ...message } = r.json.choices[0].message;
  return { ...message, thinking: reasoning as string } as Msg & { tool_calls?: { id: string }[]; reasoning_details: Msg[]; thinking: string };
}

/** Two rounds: [system, user, a1 (call), tool, a2 (call), tool] with a1 and a2 as the sim gave them. */
async function twoRounds(t: string) {
  const start: Msg[] = [{ role: 'system', content: `sys ${t}` }, user(`${t} [[think look first]] [[call read {"p":1}]]`)];
  const a1 = await round(start);
  const h1 = [...start, bare(a1), { role: 'tool', tool_call_id: a1.tool_calls![0]!.id, content: 'one [[call read {"p":2}]]' }];
  const a2 = await round(h1);
  const h2 = [...h1, bare(a2), { role: 'tool', tool_call_id: a2.tool_calls![0]!.id, content: 'two [[say done]]' }];
  return { start, a1, a2, h2 };
}

function bare(m: Msg): Msg {
  const { thinking: _thinking, ...rest } = m;
  return rest;
}

async function refused(messages: Msg[], index: number): Promise<void> {
  const r = await post(sim, { model: 'meta/muse-spark-1.3', tools, messages }, { base });
  expect(r.status).toBe(400);
  // OpenRouter's envelope: a numeric code, the message, metadata.
  expect(r.json.error.code).toBe(400);
  expect(r.json.error.message).toContain(`messages[${index}].reasoning_details`);
  expect(sim.requests.at(-1)).toMatchObject({ status: 400, error: 'invalid_reasoning_details' });
}

describe('openrouter replies', () => {
  it('carry reasoning text, reasoning_details (signed text and encrypted data) and cost, deterministically', async () => {
    const body = { model: 'meta/muse-spark-1.3', messages: [user('hi [[think weigh it]] [[say hello]]')] };
    const r = await post(sim, body, { base });
    expect(r.status).toBe(200);
    const msg = r.json.choices[0].message;
    expect(msg.content).toBe('hello');
    expect(msg.reasoning).toBe('weigh it');
    expect(msg.reasoning_content).toBeUndefined();
    expect(msg.reasoning_details).toEqual([
      { type: 'reasoning.text', text: 'weigh it', signature: expect.any(String), id: null, format: 'unknown', index: 0 },
      { type: 'reasoning.encrypted', data: expect.any(String), id: null, format: 'unknown', index: 1 },
    ]);
    expect(msg.reasoning_details[1].data.length).toBeGreaterThan(100);
    const u = r.json.usage;
    expect(u.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
    expect(u.cost).toBe(openrouterCost({ prompt: u.prompt_tokens, cached: 0, cacheWrite: 0, completion: u.completion_tokens, reasoning: 0 }));
    expect(u.cost).toBeGreaterThan(0);
    expect(sim.requests.at(-1)!.costUsd).toBe(u.cost);
    // Same request, same bytes; Claude's format on an anthropic/ model.
    expect((await post(sim, body, { base })).json.choices[0].message.reasoning_details).toEqual(msg.reasoning_details);
    const claude = await post(sim, { ...body, model: 'anthropic/claude-sonnet-4.6' }, { base });
    expect(claude.json.choices[0].message.reasoning_details[0].format).toBe('anthropic-claude-v1');
  });

  it('a stream sends the details in pieces that merge (as the proxy merges them) into the whole reply\'s array', async () => {
    const body = { model: 'meta/muse-spark-1.3', tools, messages: [user(`[[think ${'a long thought '.repeat(5)}]] [[call read {"p":9}]]`)] };
    const whole = (await post(sim, body, { base })).json.choices[0].message;
    const s = await postStream(sim, { ...body, stream_options: { include_usage: true } }, { base });
    expect(s.status).toBe(200);
    const acc = new ReasoningDetailsAccumulator();
    let reasoning = '';
    let pieces = 0;
    for (const ev of s.events) {
      if (ev === '[DONE]') continue;
      const delta = ev.choices[0]?.delta;
      if (delta?.reasoning_details !== undefined) {
        pieces++;
        acc.add(delta.reasoning_details);
      }
      reasoning += delta?.reasoning ?? '';
    }
    expect(pieces).toBeGreaterThan(3);
    expect(reasoning).toBe(whole.reasoning);
    expect(JSON.stringify(acc.items)).toBe(JSON.stringify(whole.reasoning_details));
    const usage = s.events.at(-2).usage;
    expect(typeof usage.cost).toBe('number');
  });
});

describe('openrouter reasoning_details in the history', () => {
  it('unchanged on their own messages: accepted and counted as returned', async () => {
    const { h2 } = await twoRounds('ok');
    const r = await post(sim, { model: 'meta/muse-spark-1.3', tools, messages: h2 }, { base });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('done');
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 2, dropped: 0, withText: 0 });
    expect(sim.requests.at(-1)!.reasoning).toMatchObject({ expected: 2, returned: 2, missing: 0 });
  });

  it('left out, on one message or all: accepted (OpenRouter allows it) and counted as dropped', async () => {
    const { h2 } = await twoRounds('drop');
    const without = (m: Msg): Msg => {
      const { reasoning_details: _dropped, ...rest } = m;
      return rest;
    };
    const one = h2.map((m, i) => (i === 2 ? without(m) : m));
    expect((await post(sim, { model: 'meta/muse-spark-1.3', tools, messages: one }, { base })).status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 1, dropped: 1, withText: 0 });
    const none = h2.map((m) => (m.role === 'assistant' ? { ...without(m), reasoning_details: [] } : m));
    expect((await post(sim, { model: 'meta/muse-spark-1.3', tools, messages: none }, { base })).status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 0, dropped: 2, withText: 0 });
  });

  it('with reasoning_content beside them: accepted and counted', async () => {
    const { h2 } = await twoRounds('alongside');
    const messages = h2.map((m) => (m.role === 'assistant' ? { ...m, reasoning_content: 'what I thought' } : m));
    expect((await post(sim, { model: 'meta/muse-spark-1.3', tools, messages }, { base })).status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 2, dropped: 0, withText: 2 });
  });

  it('changed in any way: 400', async () => {
    const { h2, a2 } = await twoRounds('changed');
    const details = a2.reasoning_details;
    const at4 = (d: unknown): Msg[] => h2.map((m, i) => (i === 4 ? { ...m, reasoning_details: d } : m));
    await refused(at4([{ ...details[0], text: 'another thought' }, details[1]]), 4);
    await refused(at4([{ ...details[0], signature: 'AAAA' }, details[1]]), 4);
    await refused(at4([details[0]]), 4);
    await refused(at4([details[1], details[0]]), 4);
    await refused(at4([details[0], { ...details[1], data: `${details[1]!.data as string}x` }]), 4);
    await refused(at4({ not: 'an array' }), 4);
    // The same value with its keys in another order is the same JSON value: accepted.
    const reordered = details.map((d) => Object.fromEntries(Object.entries(d).reverse()));
    expect((await post(sim, { model: 'meta/muse-spark-1.3', tools, messages: at4(reordered) }, { base })).status).toBe(200);
  });

  it('moved to another message, or left on a message whose calls changed: 400', async () => {
    const { h2, a1, a2 } = await twoRounds('moved');
    const swapped = h2.map((m, i) => (i === 2 ? { ...m, reasoning_details: a2.reasoning_details } : i === 4 ? { ...m, reasoning_details: a1.reasoning_details } : m));
    await refused(swapped, 2);
    const edited = h2.map((m, i) => (i === 4 ? { ...m, content: 'I will read.' } : m));
    await refused(edited, 4);
  });

  it('after their prefix changed (an earlier message, the system prompt or the tools): 400 on the first one made after it', async () => {
    const { h2 } = await twoRounds('prefix');
    const toolResult = h2.map((m, i) => (i === 3 ? { ...m, content: 'one, re-read [[call read {"p":2}]]' } : m));
    await refused(toolResult, 4);
    const system = h2.map((m, i) => (i === 0 ? { ...m, content: 'another system prompt' } : m));
    await refused(system, 2);
    const r = await post(sim, { model: 'meta/muse-spark-1.3', tools: [...tools, { type: 'function', function: { name: 'write' } }], messages: h2 }, { base });
    expect(r.status).toBe(400);
    // Dropping the stale ones (as the proxy does after an elision) makes the request good again.
    const dropped = toolResult.map((m, i) => (i === 4 ? { ...m, reasoning_details: undefined, reasoning_content: 'look first' } : m));
    expect((await post(sim, { model: 'meta/muse-spark-1.3', tools, messages: dropped }, { base })).status).toBe(200);
  });

  it('from a streamed reply, merged as the proxy merges them: accepted', async () => {
    const t = 'streamed';
    const start: Msg[] = [user(`${t} [[think stream it ${'x'.repeat(40)}]] [[call read {"p":3}]]`)];
    const s = await postStream(sim, { model: 'meta/muse-spark-1.3', tools, messages: start }, { base });
    const acc = new ReasoningDetailsAccumulator();
    let id = '';
    for (const ev of s.events) {
      if (ev === '[DONE]') continue;
      const delta = ev.choices[0]?.delta;
      if (delta?.reasoning_details !== undefined) acc.add(delta.reasoning_details);
      id ||= delta?.tool_calls?.[0]?.id ?? '';
    }
    const assistant = { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: '{"p":3}' } }], reasoning_details: acc.items };
    const r = await post(sim, { model: 'meta/muse-spark-1.3', tools, messages: [...start, assistant, { role: 'tool', tool_call_id: id, content: 'r' }] }, { base });
    expect(r.status).toBe(200);
    expect(sim.requests.at(-1)!.opaque.returned).toBe(1);
  });
});

describe('openrouter with requireReasoning', () => {
  it('reasoning comes back as the details, or as its text in reasoning or reasoning_content; else 400', async () => {
    const strict = await createSim({ requireReasoning: true });
    try {
      const b = strict.urlFor('openrouter');
      const start = [user('[[think check first]] [[call read {"p":1}]]')];
      const r = await post(strict, { model: 'm', tools, messages: start }, { base: b });
      const { reasoning, reasoning_details: details, refusal: _r, ...bare } = r.json.choices[0].message;
      const next = (m: Msg) => ({ model: 'm', tools, messages: [...start, m, { role: 'tool', tool_call_id: bare.tool_calls[0].id, content: 'x' }] });
      expect((await post(strict, next({ ...bare, reasoning_details: details }), { base: b })).status).toBe(200);
      expect((await post(strict, next({ ...bare, reasoning_content: reasoning }), { base: b })).status).toBe(200);
      expect((await post(strict, next({ ...bare, reasoning }), { base: b })).status).toBe(200);
      expect(strict.stats().reasoning).toMatchObject({ returned: 3, missing: 0 });
      const dropped = await post(strict, next(bare), { base: b });
      expect(dropped.status).toBe(400);
      expect(dropped.json.error.code).toBe('reasoning_not_returned');
    } finally {
      await strict.close();
    }
  });
});

describe('openrouter caching and usage', () => {
  const long = (t: string) => [{ role: 'system', content: text(1500, t) }, user('[[say ok]]')];

  it('a model that caches by itself: hits with a session key (x-session-id), reported with their cost', async () => {
    const headers = { 'x-session-id': 'sess-or-1' };
    const body = { model: 'z-ai/glm-5.3-flash', messages: long('auto') };
    const first = await post(sim, body, { base, headers });
    expect(first.json.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const second = await post(sim, body, { base, headers });
    const u = second.json.usage;
    expect(u.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(1024);
    expect(u.prompt_tokens_details.cache_write_tokens).toBe(0);
    expect(sim.requests.at(-1)).toMatchObject({ sessionKey: 'sess-or-1', sessionKeySource: 'x-session-id' });
    expect(u.cost).toBe(openrouterCost({ prompt: u.prompt_tokens, cached: u.prompt_tokens_details.cached_tokens, cacheWrite: 0, completion: u.completion_tokens, reasoning: 0 }));
    expect(u.cost).toBeLessThan(first.json.usage.cost);
  });

  it('a Claude model caches nothing without a top-level cache_control', async () => {
    const body = { model: 'anthropic/claude-sonnet-4.6', messages: long('claude-off'), prompt_cache_key: 'k-off' };
    await post(sim, body, { base });
    const again = await post(sim, body, { base });
    expect(again.json.usage.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
    expect(sim.requests.at(-1)!.cachedTokens).toBe(0);
  });

  it('a Claude model with cache_control writes, then reads, and is billed for both', async () => {
    const body = { model: 'anthropic/claude-sonnet-4.6', messages: long('claude-on'), prompt_cache_key: 'k-on', cache_control: { type: 'ephemeral' } };
    const first = (await post(sim, body, { base })).json.usage;
    expect(first.prompt_tokens_details.cached_tokens).toBe(0);
    expect(first.prompt_tokens_details.cache_write_tokens).toBeGreaterThanOrEqual(1024);
    const second = (await post(sim, body, { base })).json.usage;
    expect(second.prompt_tokens_details.cached_tokens).toBe(first.prompt_tokens_details.cache_write_tokens);
    expect(second.prompt_tokens_details.cache_write_tokens).toBe(0);
    const costOf = (u: typeof first) => openrouterCost({
      prompt: u.prompt_tokens, cached: u.prompt_tokens_details.cached_tokens, cacheWrite: u.prompt_tokens_details.cache_write_tokens, completion: u.completion_tokens, reasoning: 0,
    });
    expect(first.cost).toBe(costOf(first));
    expect(second.cost).toBe(costOf(second));
    expect(second.cost).toBeLessThan(first.cost);
  });
});
