/**
 * The chat endpoint end to end through the official `openai` client: plain and streamed replies,
 * an agent running tools over many rounds, parallel tool calls, and usage with cached tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { runAgent } from '../../bench/agent.js';
import { newSessions, replayAll, sessionIds, startWorld, tag, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld({ sim: { requireReasoning: true } });
});
afterAll(async () => {
  await w?.close();
});

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

async function collect(stream: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

/** Filler of about n tokens, so prompts pass the simulator's 1024-token cache minimum. */
function filler(n: number, seed: string): string {
  let s = '';
  for (let i = 0; s.length < n * 4; i++) s += `${seed} line ${i}: the quick brown fox.\n`;
  return s;
}

describe('replies', () => {
  it('non-stream: content, reasoning shown as reasoning_content, usage, stop', async () => {
    const t = tag('plain');
    const r = await w.client.chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: `${t} [[say hello there]]` }] });
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('ds');
    expect(r.choices[0]!.message.content).toBe('hello there');
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect((r.choices[0]!.message as unknown as { reasoning_content?: string }).reasoning_content).toMatch(/considered/);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('stream: the chunks add up to the reply; no usage chunk unless asked', async () => {
    const t = tag('stream');
    const chunks = await collect(await w.client.chat.completions.create({
      model: 'oa', stream: true, messages: [{ role: 'user', content: `${t} [[say a streamed reply that is longer than sixteen bytes]]` }],
    }));
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('a streamed reply that is longer than sixteen bytes');
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.every((c) => c.usage === undefined || c.usage === null)).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('stream_options.include_usage: a last chunk with usage and cached tokens (openai and deepseek usage fields)', async () => {
    for (const model of ['oa', 'ds']) {
      const t = tag(`usage-${model}`);
      const system = `${t}\n${filler(1500, t)}`;
      const first = await w.client.chat.completions.create({ model, messages: [{ role: 'system', content: system }, { role: 'user', content: 'one [[say first]]' }] });
      expect(first.usage!.prompt_tokens).toBeGreaterThan(1024);
      const chunks = await collect(await w.client.chat.completions.create({
        model, stream: true, stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'one [[say first]]' },
          { role: 'assistant', content: first.choices[0]!.message.content },
          { role: 'user', content: 'two [[say second]]' },
        ],
      }));
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
      expect(last.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(1024);
      // With include_usage every other chunk carries usage: null (OpenAI's shape).
      expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('second');
    }
  });
});

describe('tools', () => {
  for (const stream of [false, true]) {
    it(`an agent over 12 requests (${stream ? 'stream' : 'non-stream'}): every round answered, one session, cache reused`, async () => {
      const before = await sessionIds(w);
      const run = await runAgent(w.client, 'ds', { requests: 12, stream, seed: stream ? 11 : 12, system: `${tag('agent')} You are a careful coding agent.` });
      expect(run.steps).toHaveLength(12);
      expect(run.steps.filter((s) => s.tool_calls > 0).length).toBeGreaterThanOrEqual(9);
      expect(run.steps.some((s) => s.tool_calls === 2)).toBe(true);
      // Every step after the prompt passed the cache minimum read most of its predecessor.
      for (let i = 4; i < run.steps.length; i++) {
        expect(run.steps[i]!.cached_tokens!).toBeGreaterThan(run.steps[i - 1]!.prompt_tokens! * 0.5);
      }
      const created = await newSessions(w, before);
      expect(created.size).toBe(1);
      const events = [...created.values()][0]!;
      expect(events.filter((e) => e.type === 'llm.req')).toHaveLength(12);
      const resps = events.filter((e) => e.type === 'llm.resp');
      expect(resps).toHaveLength(12);
      expect(events.some((e) => e.type === 'client.rewrite')).toBe(false);
      // The log holds the tool calls the client got, ids included.
      const lastCalls = run.messages.filter((m) => m.role === 'assistant').at(-1) as { tool_calls?: { id: string }[] };
      const loggedCalls = (resps.at(-1) as { reply: { tool_calls?: { id: string }[] } }).reply.tool_calls;
      expect(loggedCalls?.map((c) => c.id)).toEqual(lastCalls.tool_calls?.map((c) => c.id));
    });
  }

  for (const stream of [false, true]) {
    it(`parallel tool calls (${stream ? 'stream' : 'non-stream'}): two calls, both results go back, next turn works`, async () => {
      const t = tag('parallel');
      const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
        { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
      ];
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: 'user', content: `${t} [[call read_file {"path":"a.ts"}]] [[call read_file {"path":"b.ts","lines":[1,2]}]]` },
      ];
      let calls: { id: string; function: { name: string; arguments: string } }[];
      if (stream) {
        const chunks = await collect(await w.client.chat.completions.create({ model: 'ds', stream: true, tools, messages }));
        const byIndex: { id: string; function: { name: string; arguments: string } }[] = [];
        for (const c of chunks) {
          for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
            const call = (byIndex[tc.index] ??= { id: '', function: { name: '', arguments: '' } });
            if (tc.id) call.id = tc.id;
            call.function.name += tc.function?.name ?? '';
            call.function.arguments += tc.function?.arguments ?? '';
          }
        }
        expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
        calls = byIndex;
      } else {
        const r = await w.client.chat.completions.create({ model: 'ds', tools, messages });
        expect(r.choices[0]!.finish_reason).toBe('tool_calls');
        calls = r.choices[0]!.message.tool_calls as typeof calls;
      }
      expect(calls).toHaveLength(2);
      expect(calls.map((c) => JSON.parse(c.function.arguments))).toEqual([{ path: 'a.ts' }, { path: 'b.ts', lines: [1, 2] }]);
      expect(calls[0]!.id).not.toBe(calls[1]!.id);
      messages.push({ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ ...c, type: 'function' as const })) });
      messages.push({ role: 'tool', tool_call_id: calls[0]!.id, content: 'A' });
      messages.push({ role: 'tool', tool_call_id: calls[1]!.id, content: 'B [[say both read]]' });
      const next = await w.client.chat.completions.create({ model: 'ds', tools, messages });
      expect(next.choices[0]!.message.content).toBe('both read');
      expect(w.sim.requests.at(-1)!.status).toBe(200);
    });
  }

  it('every upstream request was accepted and every reasoning came back', () => {
    expect(w.sim.requests.every((r) => r.status === 200)).toBe(true);
    const reasoning = w.sim.stats().reasoning;
    expect(reasoning.returned).toBeGreaterThan(20);
    expect(reasoning.missing).toBe(0);
    expect(reasoning.wrongField).toBe(0);
  });

  it('every logged request replays (proxy replay --all)', async () => {
    const r = await replayAll(w);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { requests: number; failed: number };
    expect(report.failed).toBe(0);
    expect(report.requests).toBeGreaterThanOrEqual(30);
  });
});
