import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../../src/core/errors.js';
import type { DialectRoute } from '../../../src/core/route.js';
import { decodeReply } from '../../../src/dialects/openai-chat/decode-reply.js';
import { createStreamDecoder } from '../../../src/dialects/openai-chat/decode-stream.js';
import { usageFromWire } from '../../../src/dialects/openai-chat/usage.js';
import type { StreamDelta } from '../../../src/dialects/types.js';

const route: DialectRoute = {
  wire: 'openai-chat',
  preset: 'generic',
  provider: 'prov',
  model: 'mod',
  baseUrl: 'https://upstream.invalid/v1',
  reasoningOut: 'reasoning_content',
  reasoningOnToolTurns: false,
  headers: {},
};

/** Feeds chunk objects (or raw data strings) as events; returns deltas and the finished reply. */
function stream(events: (object | string)[], name: string | null = null) {
  const dec = createStreamDecoder(route);
  const deltas: StreamDelta[] = [];
  for (const e of events) deltas.push(...dec.onEvent({ event: name, data: typeof e === 'string' ? e : JSON.stringify(e), id: null }));
  return { deltas, reply: dec.finish() };
}
const delta = (d: object, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('openai-chat usage', () => {
  it('keeps reported zeros and leaves unreported figures out', () => {
    expect(usageFromWire({ prompt_tokens: 0, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } })).toStrictEqual({ prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0 });
    expect(usageFromWire({ prompt_tokens: 10, prompt_tokens_details: null, completion_tokens_details: null })).toStrictEqual({ prompt_tokens: 10 });
    expect(usageFromWire(null)).toBeUndefined();
    expect(usageFromWire({})).toBeUndefined();
    expect(usageFromWire({ prompt_tokens: '12', cost: null })).toBeUndefined();
  });

  it("prefers DeepSeek's prompt_cache_hit_tokens over a cached_tokens beside it", () => {
    expect(usageFromWire({ prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 0 }, prompt_cache_hit_tokens: 64 })).toMatchObject({ cached_tokens: 64 });
  });

  it('reads SGLang top-level reasoning_tokens and OpenRouter cost', () => {
    expect(usageFromWire({ reasoning_tokens: 9, cost: 0 })).toStrictEqual({ reasoning_tokens: 9, cost_usd: 0 });
  });
});

describe('openai-chat decodeReply', () => {
  it('throws upstream_bad_reply for a body that is not a completion', () => {
    for (const body of [null, 'text', [], { id: 'x' }]) {
      const err = thrown(() => decodeReply(200, body, route));
      expect(isProxyError(err) && err.code).toBe('upstream_bad_reply');
    }
  });

  it('throws the error an error body with status 200 holds, overflow recognised', () => {
    const err = thrown(() => decodeReply(200, { error: { message: "This model's maximum context length is 8192 tokens.", code: null } }, route));
    expect(isProxyError(err) && err.code).toBe('context_length_exceeded');
    const other = thrown(() => decodeReply(200, { error: { message: 'busy' } }, route));
    expect(isProxyError(other) && other.code).toBe('upstream_error');
  });

  it('reads an empty choices list as an empty reply', () => {
    expect(decodeReply(200, { choices: [] }, route)).toStrictEqual({ content: null, finish_reason: null });
  });

  it('maps finish reasons, borrowed spellings and unknown ones included', () => {
    const finish = (r: unknown) => decodeReply(200, { choices: [{ message: { content: 'x' }, finish_reason: r }] }, route).finish_reason;
    expect([finish('stop'), finish('length'), finish('function_call'), finish('end_turn'), finish('max_tokens'), finish('abort'), finish(null)]).toStrictEqual([
      'stop', 'length', 'tool_calls', 'stop', 'length', 'stop', null,
    ]);
  });

  it('reads content given as parts, object arguments, and calls without ids', () => {
    const reply = decodeReply(
      200,
      { choices: [{ message: { content: [{ type: 'text', text: 'a' }, { type: 'image_url' }, { type: 'text', text: 'b' }], tool_calls: [{ function: { name: 'f', arguments: { x: 1 } } }] }, finish_reason: 'tool_calls' }] },
      route,
    );
    expect(reply).toStrictEqual({ content: 'ab', tool_calls: [{ id: 'call_0', name: 'f', arguments: '{"x":1}' }], finish_reason: 'tool_calls' });
  });

  it('keeps no block for an empty or null reasoning_details', () => {
    for (const details of [[], null]) {
      expect(decodeReply(200, { choices: [{ message: { content: 'x', reasoning_details: details }, finish_reason: 'stop' }] }, route)).not.toHaveProperty('blocks');
    }
  });

  it('prefers reasoning text over text read from reasoning_details', () => {
    const reply = decodeReply(200, { choices: [{ message: { content: 'x', reasoning: 'plain', reasoning_details: [{ type: 'reasoning.summary', summary: 'sum' }] } }] }, route);
    expect(reply.thinking).toBe('plain');
    expect(reply.blocks).toStrictEqual([{ kind: 'openrouter.reasoning_details', origin: { provider: 'prov', model: 'mod' }, data: [{ type: 'reasoning.summary', summary: 'sum' }] }]);
  });
});

describe('openai-chat stream decoder', () => {
  it('starts a call once its name is known, handing out arguments that came before', () => {
    const { deltas, reply } = stream([
      delta({ tool_calls: [{ index: 3, id: 'c1', function: { arguments: '{"a"' } }] }),
      delta({ tool_calls: [{ index: 3, function: { name: 'f', arguments: ':1}' } }] }),
      delta({ tool_calls: [{ index: 3, id: 'late-id', function: { arguments: '' } }] }),
    ]);
    expect(deltas).toStrictEqual([
      { type: 'tool_call_start', index: 0, id: 'c1', name: 'f' },
      { type: 'tool_call_args', index: 0, text: '{"a":1}' },
    ]);
    expect(reply.tool_calls).toStrictEqual([{ id: 'c1', name: 'f', arguments: '{"a":1}' }]);
  });

  it('places fragments without an index by id, else on the last call, with dense indexes', () => {
    const { deltas, reply } = stream([
      delta({ tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{' } }] }),
      delta({ tool_calls: [{ function: { arguments: '}' } }] }),
      delta({ tool_calls: [{ id: 'y', function: { name: 'g', arguments: '[]' } }] }),
      delta({ tool_calls: [{ id: 'x', function: { arguments: ' ' } }] }),
    ]);
    expect(reply.tool_calls).toStrictEqual([
      { id: 'x', name: 'f', arguments: '{} ' },
      { id: 'y', name: 'g', arguments: '[]' },
    ]);
    expect(deltas.filter((d) => d.type === 'tool_call_start')).toStrictEqual([
      { type: 'tool_call_start', index: 0, id: 'x', name: 'f' },
      { type: 'tool_call_start', index: 1, id: 'y', name: 'g' },
    ]);
  });

  it('gives a call without an id the same fallback id as decodeReply', () => {
    const { reply } = stream([delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')]);
    const whole = decodeReply(200, { choices: [{ message: { tool_calls: [{ function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }, route);
    expect(reply).toStrictEqual(whole);
    expect(reply.tool_calls?.[0]?.id).toBe('call_0');
  });

  it('reads one reasoning field per chunk when a server sends both with the same text', () => {
    const { deltas, reply } = stream([delta({ reasoning_content: 'abc', reasoning: 'abc' }), delta({ reasoning: 'def' })]);
    expect(deltas).toStrictEqual([
      { type: 'thinking', text: 'abc' },
      { type: 'thinking', text: 'def' },
    ]);
    expect(reply.thinking).toBe('abcdef');
  });

  it('keeps the first finish reason and the last usage', () => {
    const { deltas, reply } = stream([
      delta({ content: 'x' }, 'stop'),
      { choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 1 } },
      { choices: [], usage: { prompt_tokens: 2, completion_tokens: 3 } },
      '[DONE]',
    ]);
    expect(deltas.filter((d) => d.type === 'finish')).toStrictEqual([{ type: 'finish', reason: 'stop' }]);
    expect(reply.finish_reason).toBe('stop');
    expect(reply.usage).toStrictEqual({ prompt_tokens: 2, completion_tokens: 3 });
  });

  it('ignores choices other than the first', () => {
    const { reply } = stream([{ choices: [{ index: 1, delta: { content: 'other' } }, { index: 0, delta: { content: 'mine' } }] }]);
    expect(reply.content).toBe('mine');
  });

  it('reports an `event: error` frame and a non-JSON event as error deltas', () => {
    const named = stream([{ error: { message: 'overloaded', type: 'overloaded_error' } }], 'error');
    expect(named.deltas).toStrictEqual([{ type: 'error', error: { message: 'overloaded', type: 'overloaded_error', contextOverflow: false } }]);
    expect(named.reply.finish_reason).toBe('error');

    const cut = stream([delta({ content: 'a' }), '{"choices":[{"delta":{"cont']);
    expect(cut.deltas[1]).toStrictEqual({ type: 'error', error: { message: 'The upstream sent an event that is not JSON: {"choices":[{"delta":{"cont', code: 'upstream_bad_reply', contextOverflow: false } });
    expect(cut.reply).toStrictEqual({ content: 'a', finish_reason: 'error' });
  });

  it('reads an `event: error` frame whose data is flat or plain text', () => {
    expect(stream([{ message: 'boom', type: 'server_error' }], 'error').deltas).toStrictEqual([{ type: 'error', error: { message: 'boom', type: 'server_error', contextOverflow: false } }]);
    expect(stream(['upstream went away'], 'error').deltas).toStrictEqual([{ type: 'error', error: { message: 'upstream went away', contextOverflow: false } }]);
  });

  it('puts a Gemini signature found on the second call at before_call 1, stream and whole alike', () => {
    const calls = [
      { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
      { index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' }, extra_content: { google: { thought_signature: 'sig-b' } } },
    ];
    const { reply } = stream([delta({ tool_calls: calls }, 'tool_calls')]);
    expect(reply.blocks).toStrictEqual([{ kind: 'gemini.thought_signature', origin: { provider: 'prov', model: 'mod' }, data: 'sig-b', before_call: 1, unbound: true }]);
    expect(decodeReply(200, { choices: [{ message: { tool_calls: calls }, finish_reason: 'tool_calls' }] }, route)).toStrictEqual(reply);
  });

  it('recognises a context overflow reported mid-stream', () => {
    const { deltas } = stream([{ error: { message: 'prompt is too long: 201000 tokens > 200000 maximum', code: 400 } }]);
    expect(deltas).toStrictEqual([{ type: 'error', error: { message: 'prompt is too long: 201000 tokens > 200000 maximum', code: '400', contextOverflow: true } }]);
  });

  it('shows reasoning_details as thinking, a blank line between items, only while no reasoning text came', () => {
    const item = (index: number, text: string) => ({ type: 'reasoning.text', text, index });
    const { deltas, reply } = stream([delta({ reasoning_details: [item(0, 'a')] }), delta({ reasoning_details: [item(0, 'b'), item(1, 'c')] }), delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'zz', index: 2 }] })]);
    expect(deltas).toStrictEqual([
      { type: 'thinking', text: 'a' },
      { type: 'thinking', text: 'b\n\nc' },
    ]);
    expect(reply.thinking).toBe('ab\n\nc');
    expect(reply.blocks?.[0]?.data).toStrictEqual([item(0, 'ab'), item(1, 'c'), { type: 'reasoning.encrypted', data: 'zz', index: 2 }]);
  });
});
