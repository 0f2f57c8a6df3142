import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../../src/core/errors.js';
import type { DialectRoute } from '../../../src/core/route.js';
import { decodeReply, finishReasonFrom } from '../../../src/dialects/anthropic-messages/decode-reply.js';
import { anthropicMessages } from '../../../src/dialects/anthropic-messages/index.js';
import { usageFromWire } from '../../../src/dialects/anthropic-messages/usage.js';
import { dialectFor } from '../../../src/dialects/registry.js';
import { decodeStream } from '../common.case.js';

const route: DialectRoute = {
  wire: 'anthropic-messages', preset: 'anthropic', provider: 'work-claude', model: 'claude-opus-5',
  baseUrl: 'https://api.anthropic.com/v1', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {},
};
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('anthropic-messages decoding', () => {
  it('is the registered dialect of its wire', () => {
    expect(dialectFor('anthropic-messages')).toBe(anthropicMessages);
    expect(anthropicMessages.createStreamDecoder(route).framing).toBe('sse');
  });

  it('maps every stop reason; unknown ones read as stop, none as null', () => {
    expect(['end_turn', 'stop_sequence', 'pause_turn', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'refusal', 'new_reason'].map(finishReasonFrom))
      .toStrictEqual(['stop', 'stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter', 'stop']);
    expect(finishReasonFrom(null)).toBeNull();
  });

  it("names the route's provider and model as the origin of the blocks", () => {
    const reply = decodeReply(200, { content: [{ type: 'redacted_thinking', data: 'xyz', extra: 1 }, { type: 'text', text: 'ok' }], stop_reason: 'end_turn' }, route);
    expect(reply.blocks).toStrictEqual([{ kind: 'anthropic.redacted_thinking', origin: { provider: 'work-claude', model: 'claude-opus-5' }, data: { type: 'redacted_thinking', data: 'xyz', extra: 1 }, before_call: 0 }]);
    expect(reply.thinking).toBeUndefined();
  });

  it('ignores server-tool blocks and keeps empty thinking blocks (they must go back) without showing them', () => {
    const reply = decodeReply(200, {
      content: [{ type: 'thinking', thinking: '', signature: 's' }, { type: 'server_tool_use', id: 'srv', name: 'web_search', input: {} }, { type: 'text', text: 'done' }],
      stop_reason: 'end_turn',
    }, route);
    expect(reply.blocks?.map((b) => b.data)).toStrictEqual([{ type: 'thinking', thinking: '', signature: 's' }]);
    expect(reply.thinking).toBeUndefined();
    expect(reply.tool_calls).toBeUndefined();
    expect(reply.content).toBe('done');
  });

  it('throws the upstream error for an error body, context overflow recognised', () => {
    const err = thrown(() => decodeReply(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210183 tokens > 200000 maximum' } }, route));
    expect(isProxyError(err) && err.code).toBe('context_length_exceeded');
    const bad = thrown(() => decodeReply(200, { type: 'message' }, route));
    expect(isProxyError(bad) && bad.code).toBe('upstream_bad_reply');
    expect(isProxyError(thrown(() => decodeReply(200, 'text', route))) && 'thrown').toBe('thrown');
  });

  it('reads usage: the prompt is the sum of the three input figures; unknown stays absent, 0 stays 0', () => {
    expect(usageFromWire({ input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, cache_creation: { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 60 }, output_tokens: 0 }))
      .toStrictEqual({ prompt_tokens: 2105, cached_tokens: 2000, cache_write_tokens: 100, cache_write_1h_tokens: 60, completion_tokens: 0 });
    expect(usageFromWire({ output_tokens: 3 })).toStrictEqual({ completion_tokens: 3 });
    expect(usageFromWire({})).toBeUndefined();
    expect(usageFromWire(null)).toBeUndefined();
  });

  it('reports an event that is not JSON as an error and ends the reply as error', () => {
    const bytes = new TextEncoder().encode('event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}\n\ndata: {not json\n\n');
    const { deltas, reply } = decodeStream(anthropicMessages, route, [bytes]);
    expect(deltas.filter((d) => d.type === 'error')).toHaveLength(1);
    expect(reply.finish_reason).toBe('error');
    expect(reply.usage).toStrictEqual({ prompt_tokens: 3 });
  });

  it('shows the usage of message_start at once, then the cumulative one', () => {
    const frames = [
      'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":10,"cache_read_input_tokens":2048,"cache_creation_input_tokens":0,"output_tokens":1}}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":null,"output_tokens":42}}\n\n',
    ];
    const { deltas } = decodeStream(anthropicMessages, route, frames.map((f) => new TextEncoder().encode(f)));
    expect(deltas.filter((d) => d.type === 'usage').map((d) => (d.type === 'usage' ? d.usage : undefined))).toStrictEqual([
      { prompt_tokens: 2058, cached_tokens: 2048, cache_write_tokens: 0, completion_tokens: 1 },
      { prompt_tokens: 2058, cached_tokens: 2048, cache_write_tokens: 0, completion_tokens: 42 },
    ]);
  });

  it('counts the thinking blocks the API says it dropped (input_transformations), streamed and not; none said is absent', () => {
    const dropped = [{ type: 'thinking_dropped', path: 'messages.3.content.0', reason: 'prefix_binding_mismatch' }, { type: 'thinking_dropped', path: 'messages.5.content.0', reason: 'prefix_binding_mismatch' }, { type: 'other' }];
    const body = (t: unknown) => ({ content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', ...(t === undefined ? {} : { input_transformations: t }) });
    expect(decodeReply(200, body(dropped), route).dropped_blocks).toBe(2);
    expect(decodeReply(200, body([]), route).dropped_blocks).toBeUndefined();
    expect(decodeReply(200, body(undefined), route).dropped_blocks).toBeUndefined();
    const frames = [
      `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { model: 'm', usage: { input_tokens: 3 }, input_transformations: dropped } })}\n\n`,
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}\n\n',
    ];
    expect(decodeStream(anthropicMessages, route, frames.map((f) => new TextEncoder().encode(f))).reply.dropped_blocks).toBe(2);
  });
});
