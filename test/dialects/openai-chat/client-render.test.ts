import { describe, expect, it } from 'vitest';
import { createChunkRenderer, renderCompletion, renderUsage } from '../../../src/dialects/openai-chat/client-render.js';
import type { ClientChunk } from '../../../src/dialects/openai-chat/wire-types.js';
import type { StreamDelta } from '../../../src/dialects/types.js';
import { replayThroughOpenAISdk } from '../sdk-client.js';

const meta = { id: 'chatcmpl-1', created: 1760000000, model: 'my-model' };

function renderAll(deltas: StreamDelta[], includeUsage: boolean): ClientChunk[] {
  const r = createChunkRenderer({ ...meta, includeUsage });
  const out: ClientChunk[] = [];
  for (const d of deltas) out.push(...r.render(d));
  out.push(...r.end());
  return out;
}
const deltasOf = (chunks: ClientChunk[]) => chunks.map((c) => (c.choices[0] === undefined ? { usage: c.usage } : { delta: c.choices[0].delta, finish: c.choices[0].finish_reason }));

describe('client rendering: chunks', () => {
  it('opens with the role, streams tool calls as the SDK reads them, finishes once, then usage', () => {
    const chunks = renderAll(
      [
        { type: 'thinking', text: 'hm' },
        { type: 'content', text: 'Reading.' },
        { type: 'tool_call_start', index: 0, id: 'c1', name: 'read_file' },
        { type: 'tool_call_args', index: 0, text: '{"p":1}' },
        { type: 'usage', usage: { prompt_tokens: 10, cached_tokens: 8, completion_tokens: 4 } },
        { type: 'finish', reason: 'tool_calls' },
        { type: 'finish', reason: 'stop' },
      ],
      true,
    );
    expect(deltasOf(chunks)).toStrictEqual([
      { delta: { role: 'assistant', content: '' }, finish: null },
      { delta: { reasoning_content: 'hm' }, finish: null },
      { delta: { content: 'Reading.' }, finish: null },
      { delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'read_file', arguments: '' } }] }, finish: null },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '{"p":1}' } }] }, finish: null },
      { delta: {}, finish: 'tool_calls' },
      { usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: { cached_tokens: 8 } } },
    ]);
    for (const c of chunks) expect([c.id, c.object, c.created, c.model]).toStrictEqual(['chatcmpl-1', 'chat.completion.chunk', 1760000000, 'my-model']);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-1)?.choices).toStrictEqual([]);
  });

  it('sends no usage at all when the client did not ask for it', () => {
    const chunks = renderAll([{ type: 'content', text: 'x' }, { type: 'usage', usage: { prompt_tokens: 1 } }], false);
    expect(chunks.every((c) => !('usage' in c) && c.choices.length === 1)).toBe(true);
  });

  it('ends a stream that gave no finish reason as its calls say, and renders no error delta', () => {
    const stop = renderAll([{ type: 'content', text: 'x' }, { type: 'error', error: { message: 'e', contextOverflow: false } }], false);
    expect(deltasOf(stop).at(-1)).toStrictEqual({ delta: {}, finish: 'stop' });
    expect(stop).toHaveLength(3);
    const calls = renderAll([{ type: 'tool_call_start', index: 0, id: 'c', name: 'f' }, { type: 'finish', reason: 'error' }], false);
    expect(deltasOf(calls).at(-1)).toStrictEqual({ delta: {}, finish: 'tool_calls' });
  });

  it('sends the role chunk once, through start() or the first render', () => {
    const r = createChunkRenderer({ ...meta, includeUsage: false });
    expect(r.start()).toHaveLength(1);
    expect(r.start()).toStrictEqual([]);
    expect(r.render({ type: 'content', text: 'a' })).toHaveLength(1);
  });

  it('uses the usage given to end() over the last one seen', () => {
    const r = createChunkRenderer({ ...meta, includeUsage: true });
    r.render({ type: 'usage', usage: { prompt_tokens: 1 } });
    expect(r.end({ prompt_tokens: 5, completion_tokens: 1 }).at(-1)?.usage).toStrictEqual({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 });
  });
});

describe('client rendering: usage and completions', () => {
  it('writes unknown counts as 0 and details only when reported', () => {
    expect(renderUsage(undefined)).toStrictEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    expect(renderUsage({ prompt_tokens: 100, cache_write_tokens: 20, reasoning_tokens: 0, completion_tokens: 7, cost_usd: 0.1 })).toStrictEqual({
      prompt_tokens: 100,
      completion_tokens: 7,
      total_tokens: 107,
      prompt_tokens_details: { cache_write_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('renders a chat.completion with reasoning_content and tool calls', () => {
    const out = renderCompletion({ content: null, thinking: 't', tool_calls: [{ id: 'c', name: 'f', arguments: '{}' }], finish_reason: 'tool_calls', usage: { prompt_tokens: 3, completion_tokens: 2 } }, meta);
    expect(out).toStrictEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1760000000,
      model: 'my-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: null, reasoning_content: 't', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('is read by the openai SDK: parallel calls, reasoning and usage details', async () => {
    const deltas: StreamDelta[] = [
      { type: 'thinking', text: 'two files' },
      { type: 'tool_call_start', index: 0, id: 'a', name: 'read' },
      { type: 'tool_call_args', index: 0, text: '{"p":' },
      { type: 'tool_call_start', index: 1, id: 'b', name: 'read' },
      { type: 'tool_call_args', index: 1, text: '{"p":2}' },
      { type: 'tool_call_args', index: 0, text: '1}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: { prompt_tokens: 50, cached_tokens: 0, completion_tokens: 9, reasoning_tokens: 4 } },
    ];
    const reply = {
      content: null,
      thinking: 'two files',
      tool_calls: [{ id: 'a', name: 'read', arguments: '{"p":1}' }, { id: 'b', name: 'read', arguments: '{"p":2}' }],
      finish_reason: 'tool_calls' as const,
      usage: { prompt_tokens: 50, cached_tokens: 0, completion_tokens: 9, reasoning_tokens: 4 },
    };
    const seen = await replayThroughOpenAISdk(deltas, reply);
    for (const msg of [seen.streamed, seen.whole]) {
      expect(msg).toStrictEqual({
        content: null,
        reasoning_content: 'two files',
        tool_calls: reply.tool_calls,
        finish_reason: 'tool_calls',
        usage: { prompt_tokens: 50, cached_tokens: 0, reasoning_tokens: 4 },
      });
    }
  });
});
