import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../../src/core/route.js';
import { decodeReply } from '../../../src/dialects/ollama-chat/decode-reply.js';
import { ollamaChat } from '../../../src/dialects/ollama-chat/index.js';
import type { DecodeContext } from '../../../src/dialects/types.js';
import { decodeStream } from '../common.case.js';

const route: DialectRoute = { wire: 'ollama-chat', preset: 'ollama', provider: 'ollama', model: 'qwen3', baseUrl: 'http://127.0.0.1:11434', reasoningOut: 'reasoning', reasoningOnToolTurns: false, headers: {} };
const fixture = (file: string): string => readFileSync(new URL(`../../fixtures/dialects/ollama-chat/parallel-tool-calls/${file}`, import.meta.url), 'utf8');
const wholeBody = JSON.parse(fixture('reply.json')) as unknown;

/** One reply that calls `read_file {"path":"same.ts"}`, as Ollama sends it (no id). */
const sameCall = { model: 'qwen3', message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'read_file', arguments: { path: 'same.ts' } } }] }, done: true, done_reason: 'stop' };
const idOf = (ctx?: DecodeContext): string => decodeReply(200, sameCall, route, ctx).tool_calls?.[0]?.id ?? '';

describe('ollama-chat call ids', () => {
  it('an equal call in the reply to another request gets another id; an identical retry gets the same', () => {
    const first = idOf({ idSeed: 'digest-of-request-1' });
    const later = idOf({ idSeed: 'digest-of-request-2' });
    expect(first).toMatch(/^call_0_[0-9a-f]{12}$/);
    expect(later).toMatch(/^call_0_[0-9a-f]{12}$/);
    expect(later).not.toBe(first);
    expect(idOf({ idSeed: 'digest-of-request-1' })).toBe(first);
    // Without a seed: the name and arguments alone, as the shared fixtures record.
    expect(idOf()).toBe(idOf({}));
    expect(idOf()).not.toBe(first);
  });

  it('the stream and the whole reply agree under a seed, and two calls of one reply still differ', () => {
    const ctx = { idSeed: 'digest-of-request-1' };
    const whole = ollamaChat.decodeReply(200, wholeBody, route, ctx);
    const streamed = decodeStream({ ...ollamaChat, createStreamDecoder: (r) => ollamaChat.createStreamDecoder(r, ctx) }, route, [new TextEncoder().encode(fixture('stream.ndjson'))]);
    expect(streamed.reply).toStrictEqual(whole);
    const ids = whole.tool_calls?.map((c) => c.id) ?? [];
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^call_0_[0-9a-f]{12}$/);
    expect(ids[1]).toMatch(/^call_1_[0-9a-f]{12}$/);
    // The seed changed them from the unseeded ids the fixture records.
    const unseeded = ollamaChat.decodeReply(200, wholeBody, route).tool_calls?.map((c) => c.id);
    expect(unseeded).toStrictEqual(['call_0_0869913e4b55', 'call_1_3598270e3cae']);
    expect(ids.filter((id) => unseeded?.includes(id))).toStrictEqual([]);
    // An id Ollama did send is kept as it is.
    const named = { ...sameCall, message: { ...sameCall.message, tool_calls: [{ id: 'call_abc', function: { name: 'f', arguments: {} } }] } };
    expect(decodeReply(200, named, route, ctx).tool_calls?.[0]?.id).toBe('call_abc');
  });
});
