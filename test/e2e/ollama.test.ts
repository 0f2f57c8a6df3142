/**
 * Ollama's native /api/chat through the proxy, with the official `openai` client: `think` from the
 * client's reasoning_effort, each reply's thinking back as `messages[].thinking` though the client
 * dropped it, usage read from prompt_eval_count, and the acceptance check on the KV cache
 * (docs/decisions.md, Ollama prompt-eval as the cache check)
 * (the simulator reports prompt_eval_duration in proportion to the tokens it had to evaluate): while
 * the prefix holds each request evaluates only what is new; the request that trims the window
 * evaluates most of its prompt again, once, and the next one is warm again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { PROMPT_EVAL_NS_PER_TOKEN } from '../../src/sim/ollama/kv-slot.js';
import { replayAll, tag } from './harness.js';
import { ask, keep, toolSession, TOOLS } from './wires-client.js';
import { metricsText, ndjson, sessionWith, startWiresWorld, wire, type WireExchange, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.qwen]
provider = "ol"
model = "qwen-sim"

[models.claude]
provider = "an"
model = "claude-sim"

[models.qwen-small]
provider = "ol"
model = "qwen-sim"
context = 8000
output_reserve = 2000
max_result_tokens = 1000
`,
  });
});
afterAll(async () => {
  await w?.close();
});

interface OllamaMsg {
  role: string;
  content: string;
  thinking?: string;
  tool_calls?: { function: { name: string; arguments: unknown } }[];
  tool_name?: string;
}

/** The `done: true` line of an NDJSON reply: Ollama's figures. */
function doneLine(ex: WireExchange): { prompt_eval_count: number; prompt_eval_duration: number; eval_count: number } {
  const done = ndjson(ex.response).find((l) => l.done === true);
  expect(done, 'a done line').toBeDefined();
  return done as never;
}

/** Prompt tokens the simulated runner evaluated (not read from its KV slot). */
function evaluated(ex: WireExchange): number {
  return doneLine(ex).prompt_eval_duration / PROMPT_EVAL_NS_PER_TOKEN;
}

describe('a tool session', () => {
  it('think from reasoning_effort; thinking shown as reasoning_content and sent back as messages[].thinking; usage from prompt_eval_count', async () => {
    const t = tag('ol-tools');
    const from = w.tap.requests.length;
    const answers = await toolSession(w, 'qwen', t, { rounds: 6, resultTokens: 150, systemTokens: 200, think: true, body: { reasoning_effort: 'high' } });
    const reqs = wire(w, '/api/chat', from);
    expect(reqs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);

    answers.forEach((a, j) => {
      expect(a.reasoning).toBe(`step ${j} of ${t}`);
      expect(a.toolCalls.length).toBe(j > 0 && j % 3 === 0 ? 2 : 1);
    });
    for (const [k, req] of reqs.entries()) {
      expect(req.body).toMatchObject({ model: 'qwen-sim', think: 'high', stream: true, truncate: false, keep_alive: '30m', options: { num_ctx: 131072 } });
      const mine = (req.body.messages as OllamaMsg[]).filter((m) => m.role === 'assistant');
      expect(mine).toHaveLength(k);
      mine.forEach((m, j) => {
        expect(m.thinking).toBe(answers[j]!.reasoning);
        expect(m.tool_calls!.map((c) => c.function.name)).toEqual(answers[j]!.toolCalls.map((c) => c.function.name));
        // Arguments go as objects, as Ollama takes them.
        expect(m.tool_calls!.map((c) => c.function.arguments)).toEqual(answers[j]!.toolCalls.map((c) => JSON.parse(c.function.arguments)));
      });
      const tools = (req.body.messages as OllamaMsg[]).filter((m) => m.role === 'tool');
      expect(tools.every((m) => m.tool_name === 'read_file' || m.tool_name === 'grep')).toBe(true);

      // Usage: what Ollama reported, and no cached count (Ollama gives none: unknown is not zero).
      const done = doneLine(req);
      expect(answers[k]!.usage!.prompt_tokens).toBe(done.prompt_eval_count);
      expect(answers[k]!.usage!.completion_tokens).toBe(done.eval_count);
      expect(answers[k]!.usage!.prompt_tokens_details?.cached_tokens).toBeUndefined();
    }

    const resps = (await sessionWith(w, t)).filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
    expect(resps.map((r) => r.reply.usage?.prompt_eval_ms)).toEqual(reqs.map((r) => doneLine(r).prompt_eval_duration / 1e6));
  });

  it('reasoning_effort "none" sends think: false, and nothing is shown', async () => {
    const t = tag('ol-none');
    const from = w.tap.requests.length;
    const a = await ask(w, 'qwen', [{ role: 'user', content: `${t} [[think hidden]] [[say plain]]` }], undefined, { body: { reasoning_effort: 'none' } });
    const [req] = wire(w, '/api/chat', from);
    expect(req!.body.think).toBe(false);
    expect(a.content).toBe('plain');
    expect(a.reasoning).toBe('');
  });
});

describe('the KV cache across a trim', () => {
  it('prompt_eval is small while the prefix holds, large on the request that trims, then small again', async () => {
    const t = tag('ol-trim');
    const from = w.tap.requests.length;
    await toolSession(w, 'qwen-small', t, { rounds: 16, resultTokens: 600, systemTokens: 50, think: true });
    const reqs = wire(w, '/api/chat', from);
    expect(reqs).toHaveLength(16);
    expect(reqs.every((r) => r.status === 200 && r.body.options.num_ctx === 8000)).toBe(true);

    const events = await sessionWith(w, t);
    const llmReqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
    const resps = events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
    const trimmed = llmReqs.map((e) => e.elided.length > 0);
    expect(trimmed.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(trimmed[0]).toBe(false);

    const prompt = reqs.map((r) => doneLine(r).prompt_eval_count);
    const held: number[] = [];
    const cold: number[] = [];
    for (let i = 1; i < reqs.length; i++) {
      const ms = resps[i]!.reply.usage!.prompt_eval_ms!;
      expect(ms).toBe(evaluated(reqs[i]!) * PROMPT_EVAL_NS_PER_TOKEN / 1e6);
      if (trimmed[i]) {
        // Re-prefilled: most of the prompt evaluated again.
        expect(evaluated(reqs[i]!)).toBeGreaterThan(prompt[i]! / 2);
        cold.push(ms);
      } else {
        // Warm: only what this request added to the one before (to a token's rounding).
        expect(evaluated(reqs[i]!)).toBeLessThanOrEqual(prompt[i]! - prompt[i - 1]! + 1);
        held.push(ms);
      }
    }
    // A trim is followed by a warm request: it re-prefills once.
    for (let i = 1; i < trimmed.length - 1; i++) if (trimmed[i]) expect(trimmed[i + 1]).toBe(false);
    expect(Math.min(...cold)).toBeGreaterThan(Math.max(...held));
  });

  it('proxy_prompt_eval_seconds is exported for the route', async () => {
    const text = await metricsText(w);
    const count = /^proxy_prompt_eval_seconds_count\{[^}]*provider="ol"[^}]*model="qwen-small"[^}]*\} (\d+)/m.exec(text)
      ?? /^proxy_prompt_eval_seconds_count\{[^}]*model="qwen-small"[^}]*provider="ol"[^}]*\} (\d+)/m.exec(text);
    expect(count, text.split('\n').filter((l) => l.startsWith('proxy_prompt_eval')).join('\n')).not.toBeNull();
    expect(Number(count![1])).toBe(16);
    expect(text).toMatch(/^proxy_prompt_eval_seconds_sum\{[^}]*model="qwen"[^}]*\} [0-9.e-]+/m);
  });
});

/*
 * Ollama sends calls without ids, and a model repeats calls (`git status`, `run_tests {}`). The id
 * the dialect makes mixes in the request's digest, so a call repeated in a later reply gets an id of
 * its own: a client holding two calls with one id, or the Anthropic wire the conversation may move
 * to, would refuse the conversation ("`tool_use` ids must be unique"). A retry of the same request
 * has the same digest, so it gets the same ids.
 */
describe('a call repeated in a later reply', () => {
  it('gets an id of its own, the same on a retry; the conversation goes on, on Ollama and on Anthropic', async () => {
    const t = tag('ol-same-call');
    const from = w.tap.requests.length;
    const again = '[[call read_file {"path":"same.ts"}]]';
    const history: Parameters<typeof ask>[2] = [{ role: 'user', content: `${t} ${again}` }];
    const first = await ask(w, 'qwen', history, TOOLS);
    keep(history, first, () => 'export {};', again);
    const second = await ask(w, 'qwen', history, TOOLS, { stream: true });
    const retried = await ask(w, 'qwen', history, TOOLS);
    expect([first, second, retried].map((a) => a.toolCalls.map((c) => [c.function.name, c.function.arguments]))).toEqual([
      [['read_file', '{"path":"same.ts"}']], [['read_file', '{"path":"same.ts"}']], [['read_file', '{"path":"same.ts"}']],
    ]);
    const [a, b] = [first.toolCalls[0]!.id, second.toolCalls[0]!.id];
    expect(a).toMatch(/^call_0_[0-9a-f]{12}$/);
    expect(b).toMatch(/^call_0_[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
    expect(retried.toolCalls[0]!.id).toBe(b);
    // The log holds the ids the client got.
    const resps = (await sessionWith(w, t)).filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
    expect(resps.map((r) => r.reply.tool_calls?.map((c) => c.id))).toEqual([[a], [b], [b]]);

    keep(history, second, () => 'export {};', '[[say same as before]]');
    const third = await ask(w, 'qwen', history, TOOLS);
    expect(third.content).toBe('same as before');
    const moved = await ask(w, 'claude', history, TOOLS, { stream: true });
    expect(moved.content).toBe('same as before');
    const [toOllama] = wire(w, '/api/chat', from).slice(3);
    const [toAnthropic] = wire(w, '/anthropic/', from);
    expect([toOllama!.status, toAnthropic!.status]).toEqual([200, 200]);
    const body = toAnthropic!.body as { messages: { role: string; content: { type: string; id?: string; tool_use_id?: string }[] }[] };
    const uses = body.messages.flatMap((m) => m.content.filter((x) => x.type === 'tool_use').map((x) => x.id));
    const results = body.messages.flatMap((m) => m.content.filter((x) => x.type === 'tool_result').map((x) => x.tool_use_id));
    expect(uses).toEqual([a, b]);
    expect(results).toEqual([a, b]);
  });
});

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
