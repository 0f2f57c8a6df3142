/**
 * OpenAI Responses through the proxy, with the official `openai` client, on a route with
 * `keep_reasoning = true`: stateless requests (`store: false`) that ask for the reasoning encrypted,
 * each reply's reasoning item given back unchanged right before its calls though the client
 * dropped it (the simulator answers 400 to encrypted content that changed), and the session key
 * as `prompt_cache_key`, which keeps the session on one of the simulator's four replicas so every
 * request reads its predecessor's whole prompt from the cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { replayAll, tag } from './harness.js';
import { toolSession } from './wires-client.js';
import { responsesReasoning, sessionWith, sseData, startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  // Four replicas picked at random without a key: only a session key makes the cache hit reliably.
  w = await startWiresWorld({
    sim: { replicas: 4, routing: 'random', seed: 7 },
    models: `
[models.gpt]
provider = "rs"
model = "gpt-sim"
keep_reasoning = true

[models.gpt-nokey]
provider = "rs"
model = "gpt-sim"
keep_reasoning = true
cache_key = "off"
`,
  });
});
afterAll(async () => {
  await w?.close();
});

interface Item {
  type: string;
  id?: string;
  role?: string;
  call_id?: string;
  name?: string;
  encrypted_content?: string;
  summary?: { type: string; text: string }[];
}

const BLOCK = 128;

describe('a tool session with keep_reasoning', () => {
  it('asks for encrypted reasoning with store false; gives each reasoning item back unchanged before its calls; refuses nothing', async () => {
    const t = tag('rs-tools');
    const from = w.tap.requests.length;
    const answers = await toolSession(w, 'gpt', t, { rounds: 6, resultTokens: 150, systemTokens: 1200 });
    const reqs = wire(w, '/v1/responses', from);
    expect(reqs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);

    // What the simulator gave: one reasoning item per reply, with its encrypted content.
    const given = reqs.map((r) => responsesReasoning(r.response));
    answers.forEach((a, j) => {
      expect(given[j]).toHaveLength(1);
      const item = given[j]![0] as unknown as Item;
      expect(item.encrypted_content).toMatch(/^[A-Za-z0-9_-]{40,}$/);
      // The summary is the thinking shown to the client.
      expect(a.reasoning).toBe(item.summary![0]!.text);
      expect(a.reasoning).toMatch(/^Considered prompt/);
    });

    for (const [k, req] of reqs.entries()) {
      expect(req.body).toMatchObject({ model: 'gpt-sim', store: false, include: ['reasoning.encrypted_content'], stream: true });
      expect(req.body.reasoning).toMatchObject({ context: 'all_turns' });
      expect(req.body.instructions).toContain(t);
      const input = req.body.input as Item[];
      expect(input.every((item) => item.id === undefined)).toBe(true);
      const reasoning = input.filter((item) => item.type === 'reasoning');
      expect(reasoning).toHaveLength(k);
      reasoning.forEach((item, j) => {
        expect(item.encrypted_content).toBe((given[j]![0] as unknown as Item).encrypted_content);
        expect(item.summary).toEqual((given[j]![0] as unknown as Item).summary);
        // Right before the reply's first call, which is followed by the rest of its calls.
        const at = input.indexOf(item);
        const calls = answers[j]!.toolCalls.map((c) => c.id);
        expect(input.slice(at + 1, at + 1 + calls.length).map((x) => [x.type, x.call_id])).toEqual(calls.map((id) => ['function_call', id]));
      });
    }
  });

  it('sends the session key as prompt_cache_key; each request reads its predecessor\'s whole prompt', async () => {
    const t = tag('rs-cache');
    const from = w.tap.requests.length;
    const answers = await toolSession(w, 'gpt', t, { rounds: 6, resultTokens: 200, systemTokens: 1200 });
    const reqs = wire(w, '/v1/responses', from);
    const keys = new Set(reqs.map((r) => r.body.prompt_cache_key as string));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f]{64}$/);
    expect([...keys][0]).not.toContain(t);

    const prompts = answers.map((a) => a.usage!.prompt_tokens);
    const cached = answers.map((a) => a.usage!.prompt_tokens_details?.cached_tokens);
    expect(prompts[0]).toBeGreaterThan(1024);
    expect(cached[0]).toBe(0);
    for (let k = 1; k < answers.length; k++) expect(cached[k], `request ${k}`).toBe(Math.floor(prompts[k - 1]! / BLOCK) * BLOCK);
    // The client's figures are the upstream's.
    const completed = reqs.map((r) => sseData(r.response).find((e) => e.type === 'response.completed')!.response as { usage: { input_tokens: number; input_tokens_details: { cached_tokens: number } } });
    expect(completed.map((c) => c.usage.input_tokens)).toEqual(prompts);
    expect(completed.map((c) => c.usage.input_tokens_details.cached_tokens)).toEqual(cached);

    const events = await sessionWith(w, t);
    const hints = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').map((e) => e.hints);
    expect(hints.every((h) => h?.session_key === true)).toBe(true);
  });

  it('without a key (cache_key = "off") nothing is sent and random replicas read less', async () => {
    const t = tag('rs-nokey');
    const from = w.tap.requests.length;
    const answers = await toolSession(w, 'gpt-nokey', t, { rounds: 6, resultTokens: 200, systemTokens: 1200 });
    const reqs = wire(w, '/v1/responses', from);
    expect(reqs.every((r) => r.status === 200 && r.body.prompt_cache_key === undefined)).toBe(true);
    let ideal = 0;
    let read = 0;
    for (let k = 1; k < answers.length; k++) {
      ideal += Math.floor(answers[k - 1]!.usage!.prompt_tokens / BLOCK) * BLOCK;
      read += answers[k]!.usage!.prompt_tokens_details?.cached_tokens ?? 0;
    }
    expect(read).toBeLessThan(ideal);
  });
});

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
