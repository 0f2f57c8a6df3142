/**
 * Reasoning the client drops goes back upstream on the right assistant message, in the field the
 * preset names: DeepSeek `reasoning_content` (always present on tool-call turns), Cerebras
 * `reasoning` (never `reasoning_content`, which it answers with a 400). A recording tap between
 * the proxy and the simulator shows the wire bodies; the simulator, run with requireReasoning,
 * answers 400 to any reply of its own that comes back without its reasoning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { runAgent } from '../../bench/agent.js';
import type { SimMode } from '../../src/sim/types.js';
import { replayAll, startWorld, tag, type TappedRequest, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld({ sim: { requireReasoning: true }, tap: true });
});
afterAll(async () => {
  await w?.close();
});

interface WireMsg {
  role: string;
  content?: unknown;
  tool_calls?: { id: string }[];
  reasoning_content?: unknown;
  reasoning?: unknown;
}

function tapped(mode: SimMode, from = 0): TappedRequest[] {
  return w.tap!.requests.slice(from).filter((r) => r.path.startsWith(`/${mode}/`));
}

function assistants(req: TappedRequest): WireMsg[] {
  return (req.body.messages as WireMsg[]).filter((m) => m.role === 'assistant');
}

function reasoningOf(mode: SimMode) {
  const counts = { expected: 0, returned: 0, missing: 0, wrongField: 0 };
  for (const r of w.sim.requests.filter((x) => x.mode === mode)) {
    for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += r.reasoning[k];
  }
  return counts;
}

describe('deepseek preset', () => {
  it('an agent that drops reasoning: every reply of ours goes back with its reasoning_content', async () => {
    const from = w.tap!.requests.length;
    const run = await runAgent(w.client, 'ds', { requests: 10, stream: false, seed: 21, system: tag('ds-agent') });
    // The client kept no reasoning.
    expect(run.messages.some((m) => 'reasoning_content' in m)).toBe(false);
    const wire = tapped('deepseek', from);
    expect(wire).toHaveLength(10);
    const last = wire.at(-1)!;
    const ours = assistants(last);
    expect(ours.length).toBe(9);
    for (const m of ours) {
      expect(typeof m.reasoning_content).toBe('string');
      expect((m.reasoning_content as string).length).toBeGreaterThan(0);
      expect(m.reasoning).toBeUndefined();
    }
    // Right message: each assistant message's reasoning is the one the simulator produced for it
    // (the simulator checks it by tool call id and text, and answered 200 to every request).
    expect(w.sim.requests.filter((r) => r.mode === 'deepseek').every((r) => r.status === 200)).toBe(true);
    const counts = reasoningOf('deepseek');
    expect(counts.returned).toBeGreaterThanOrEqual(9 * 10 / 2);
    expect(counts.missing).toBe(0);
    expect(counts.wrongField).toBe(0);
  });

  it('a tool-call turn the proxy never produced still carries reasoning_content ("")', async () => {
    const from = w.tap!.requests.length;
    const t = tag('ds-foreign');
    const r = await w.client.chat.completions.create({
      model: 'ds',
      messages: [
        { role: 'user', content: `${t} read a.ts` },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_foreign_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }] },
        { role: 'tool', tool_call_id: 'call_foreign_1', content: 'export const a = 1; [[say read it]]' },
      ],
    });
    expect(r.choices[0]!.message.content).toBe('read it');
    const [req] = tapped('deepseek', from);
    expect(assistants(req!)[0]!.reasoning_content).toBe('');
  });

  it('a streamed reply with tool calls: its reasoning goes back on the next request', async () => {
    const from = w.tap!.requests.length;
    const t = tag('ds-stream');
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: `${t} [[think I should call f twice.]] [[call f {"x":1}]]` }];
    const stream = await w.client.chat.completions.create({ model: 'ds', stream: true, tools, messages });
    let shown = '';
    let id = '';
    for await (const c of stream) {
      shown += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      id ||= c.choices[0]?.delta.tool_calls?.[0]?.id ?? '';
    }
    expect(shown).toBe('I should call f twice.');
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] });
    messages.push({ role: 'tool', tool_call_id: id, content: 'done [[say ok]]' });
    await w.client.chat.completions.create({ model: 'ds', tools, messages });
    const second = tapped('deepseek', from)[1]!;
    expect(assistants(second)[0]!.reasoning_content).toBe('I should call f twice.');
  });
});

describe('cerebras preset', () => {
  it('an agent that drops reasoning: it goes back as `reasoning`, never as reasoning_content', async () => {
    const from = w.tap!.requests.length;
    await runAgent(w.client, 'cb', { requests: 10, stream: true, seed: 22, system: tag('cb-agent') });
    const wire = tapped('cerebras', from);
    expect(wire).toHaveLength(10);
    for (const req of wire) {
      expect(JSON.stringify(req.body)).not.toContain('reasoning_content');
      for (const m of assistants(req)) {
        expect(typeof m.reasoning).toBe('string');
        expect((m.reasoning as string).length).toBeGreaterThan(0);
      }
    }
    expect(assistants(wire.at(-1)!)).toHaveLength(9);
    expect(w.sim.requests.filter((r) => r.mode === 'cerebras').every((r) => r.status === 200)).toBe(true);
    const counts = reasoningOf('cerebras');
    expect(counts.returned).toBeGreaterThanOrEqual(9 * 10 / 2);
    expect(counts.missing).toBe(0);
    expect(counts.wrongField).toBe(0);
  });

  it('a client that echoes reasoning_content back: the proxy does not pass it on', async () => {
    const from = w.tap!.requests.length;
    const t = tag('cb-echo');
    const first = await w.client.chat.completions.create({ model: 'cb', messages: [{ role: 'user', content: `${t} [[say one]]` }] });
    const shown = first.choices[0]!.message as unknown as { content: string; reasoning_content?: string };
    expect(shown.reasoning_content).toMatch(/considered/);
    const second = await w.client.chat.completions.create({
      model: 'cb',
      messages: [
        { role: 'user', content: `${t} [[say one]]` },
        { role: 'assistant', content: shown.content, reasoning_content: shown.reasoning_content } as OpenAI.Chat.Completions.ChatCompletionMessageParam,
        { role: 'user', content: '[[say two]]' },
      ],
    });
    expect(second.choices[0]!.message.content).toBe('two');
    const wire = tapped('cerebras', from)[1]!;
    expect(assistants(wire)[0]).toMatchObject({ content: 'one', reasoning: shown.reasoning_content });
    expect(JSON.stringify(wire.body)).not.toContain('reasoning_content');
  });
});

describe('a conversation that switches model', () => {
  it('ds -> cb -> ds ...: each upstream gets every reply\'s reasoning in its own field', async () => {
    const from = w.tap!.requests.length;
    const t = tag('switch');
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: `sys ${t}` },
      { role: 'user', content: `${t} [[call f {"n":0}]]` },
    ];
    for (let i = 0; i < 6; i++) {
      const model = i % 2 === 0 ? 'ds' : 'cb';
      const r = await w.client.chat.completions.create({ model, tools, messages });
      const call = r.choices[0]!.message.tool_calls![0]!;
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      messages.push({ role: 'tool', tool_call_id: call.id, content: `result ${i} [[call f {"n":${i + 1}}]]` });
    }
    const wire = w.tap!.requests.slice(from);
    expect(wire.map((r) => r.path.split('/')[1])).toEqual(['deepseek', 'cerebras', 'deepseek', 'cerebras', 'deepseek', 'cerebras']);
    for (const req of wire) {
      const field = req.path.startsWith('/deepseek/') ? 'reasoning_content' : 'reasoning';
      const other = field === 'reasoning' ? 'reasoning_content' : 'reasoning';
      for (const m of assistants(req)) {
        expect(typeof m[field]).toBe('string');
        expect((m[field] as string).length).toBeGreaterThan(0);
        expect(m[other]).toBeUndefined();
      }
    }
    expect(assistants(wire.at(-1)!)).toHaveLength(5);
    expect(w.sim.requests.slice(-6).every((r) => r.status === 200 && r.reasoning.missing === 0 && r.reasoning.wrongField === 0)).toBe(true);
  });
});

it('over the whole file: every upstream request accepted, reasoning returned and never missing', () => {
  expect(w.sim.requests.every((r) => r.status === 200)).toBe(true);
  const stats = w.sim.stats();
  expect(stats.reasoning.returned).toBeGreaterThan(0);
  expect(stats.reasoning.missing).toBe(0);
  expect(stats.reasoning.wrongField).toBe(0);
});

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
