import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { NeutralRequest, ToolSpec } from '../../../src/core/types.js';
import { argumentsObject, DEFAULT_KEEP_ALIVE, encodeRequest, thinkValue } from '../../../src/dialects/ollama-chat/encode-request.js';
import { decodeReply } from '../../../src/dialects/ollama-chat/decode-reply.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';

const route = (over: Partial<DialectRoute> = {}): DialectRoute => ({
  wire: 'ollama-chat',
  preset: 'ollama',
  provider: 'ollama',
  model: 'qwen3',
  baseUrl: 'http://127.0.0.1:11434',
  reasoningOut: 'reasoning',
  reasoningOnToolTurns: false,
  headers: {},
  numCtx: 65536,
  ...over,
});
const noHints: WireHints = { bodyKey: false, headers: {} };
const opts = (stream = true): EncodeOptions => ({
  stream,
  resolveImage: (sha) => {
    if (sha !== 'abc123') throw new Error(`no image ${sha}`);
    return { mime: 'image/png', base64: 'iVBORw0KGgo=' };
  },
});
const request = (messages: NeutralRequest['messages'], over: Partial<NeutralRequest> = {}): NeutralRequest => ({ messages, model: 'qwen3', params: {}, tools: [], ...over });
const body = (req: NeutralRequest, r = route(), hints = noHints, o = opts()): Record<string, unknown> =>
  JSON.parse(String(encodeRequest(req, r, hints, o).body)) as Record<string, unknown>;

const tool: ToolSpec = { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };

describe('ollama-chat encodeRequest', () => {
  it('writes the whole body in a fixed key order (golden bytes), as the reference example shapes it', () => {
    const req = request(
      [
        { role: 'system', content: '<stable system prompt>' },
        { role: 'user', content: 'Fix the bug' },
        { role: 'assistant', content: null, thinking: 'Need to read a.ts...', tool_calls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: '...' },
      ],
      { tools: [tool], params: { seed: 7, stop: 'END', max_tokens: 8192, temperature: 0.2, top_p: 0.9, reasoning_effort: 'high' } },
    );
    const out = encodeRequest(req, route(), noHints, opts());
    expect(out.path).toBe('/api/chat');
    expect(out.headers).toStrictEqual({ 'content-type': 'application/json' });
    expect(String(out.body)).toBe(
      '{"model":"qwen3","messages":[{"role":"system","content":"<stable system prompt>"},{"role":"user","content":"Fix the bug"},' +
        '{"role":"assistant","content":"","thinking":"Need to read a.ts...","tool_calls":[{"id":"call_1","function":{"name":"read_file","arguments":{"path":"a.ts"}}}]},' +
        '{"role":"tool","content":"...","tool_name":"read_file","tool_call_id":"call_1"}],' +
        '"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}],' +
        '"think":"high","options":{"num_ctx":65536,"num_predict":8192,"temperature":0.2,"top_p":0.9,"seed":7,"stop":["END"]},' +
        '"keep_alive":"30m","truncate":false,"stream":true}',
    );
  });

  it('gives equal bytes for equal requests, whatever key order the caller used', () => {
    const a = request([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo', thinking: 't' }], { params: { temperature: 1, max_tokens: 5 } });
    const b: NeutralRequest = { tools: [], params: { max_tokens: 5, temperature: 1 }, model: 'qwen3', messages: [{ content: 'hi', role: 'user' }, { thinking: 't', content: 'yo', role: 'assistant' }] };
    expect(String(encodeRequest(b, route(), noHints, opts()).body)).toBe(String(encodeRequest(a, route(), noHints, opts()).body));
  });

  it('always sends the route context as num_ctx (a change reloads the model), and the keep-alive', () => {
    const plain = body(request([{ role: 'user', content: 'q' }]));
    expect(plain.options).toStrictEqual({ num_ctx: 65536 });
    expect(plain.keep_alive).toBe(DEFAULT_KEEP_ALIVE);
    expect(plain.truncate).toBe(false);
    expect(plain).not.toHaveProperty('think');
    expect(plain).not.toHaveProperty('tools');
    expect(body(request([{ role: 'user', content: 'q' }]), route({ keepAlive: -1 })).keep_alive).toBe(-1);
    expect(body(request([{ role: 'user', content: 'q' }]), route(), noHints, opts(false)).stream).toBe(false);
  });

  it('sends images as base64 without the data-URL prefix, text parts joined by newlines', () => {
    const out = body(request([{ role: 'user', content: [{ type: 'text', text: 'What is' }, { type: 'image', sha256: 'abc123', mime: 'image/png', tokens: 85 }, { type: 'text', text: 'this?' }] }]));
    expect(out.messages).toStrictEqual([{ role: 'user', content: 'What is\nthis?', images: ['iVBORw0KGgo='] }]);
  });

  it('gives arguments back as an object in their own key order; text that is not an object goes as {}', () => {
    const out = body(request([{ role: 'assistant', content: 'ok', tool_calls: [{ id: 'c', name: 'f', arguments: '{"z":1,"a":{"y":2,"b":3}}' }, { id: 'd', name: 'g', arguments: 'not json' }] }]));
    const calls = (out.messages as { tool_calls: unknown[] }[])[0]?.tool_calls;
    expect(calls).toStrictEqual([{ id: 'c', function: { name: 'f', arguments: { z: 1, a: { y: 2, b: 3 } } } }, { id: 'd', function: { name: 'g', arguments: {} } }]);
    expect(String(encodeRequest(request([{ role: 'assistant', content: 'ok', tool_calls: [{ id: 'c', name: 'f', arguments: '{"z":1,"a":2}' }] }]), route(), noHints, opts()).body)).toContain('"arguments":{"z":1,"a":2}');
    expect(argumentsObject('[1,2]')).toStrictEqual({});
  });

  it('names the function a tool result answers only when an earlier call has that id', () => {
    const out = body(request([{ role: 'tool', tool_call_id: 'orphan', content: 'x' }]));
    expect(out.messages).toStrictEqual([{ role: 'tool', content: 'x', tool_call_id: 'orphan' }]);
  });

  it('leaves the thinking out on a route whose reasoning is "none"', () => {
    const msg = { role: 'assistant' as const, content: 'a', thinking: 'long thoughts' };
    expect(body(request([msg]), route({ reasoningOut: 'none' })).messages).toStrictEqual([{ role: 'assistant', content: 'a' }]);
    expect(body(request([msg]), route({ reasoningOut: 'reasoning_content' })).messages).toStrictEqual([{ role: 'assistant', content: 'a', thinking: 'long thoughts' }]);
  });

  it('leaves out thinking that is empty, and blocks (this wire has none)', () => {
    const out = body(request([{ role: 'assistant', content: 'a', thinking: '', blocks: [{ kind: 'responses.reasoning', origin: { provider: 'p', model: 'm' }, data: {} }] }]));
    expect(out.messages).toStrictEqual([{ role: 'assistant', content: 'a' }]);
  });

  it('maps response_format to format, penalties to options, and drops tool_choice', () => {
    const json = body(request([{ role: 'user', content: 'q' }], { params: { response_format: { type: 'json_object' }, tool_choice: 'auto', presence_penalty: 0.5, frequency_penalty: 0 } }));
    expect(json.format).toBe('json');
    expect(json.options).toStrictEqual({ num_ctx: 65536, presence_penalty: 0.5, frequency_penalty: 0 });
    expect(json).not.toHaveProperty('tool_choice');
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    expect(body(request([{ role: 'user', content: 'q' }], { params: { response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } } })).format).toStrictEqual(schema);
  });

  it('merges route headers, then hint headers; no session key goes anywhere in the body', () => {
    const out = encodeRequest(request([{ role: 'user', content: 'q' }]), route({ headers: { 'X-Env': 'lab', 'Content-Type': 'text/plain' } }), { bodyKey: true, sessionKey: 'k', headers: { 'x-session-id': 'k' } }, opts());
    expect(out.headers).toStrictEqual({ 'X-Env': 'lab', 'x-session-id': 'k', 'content-type': 'application/json' });
    expect(String(out.body)).not.toContain('"k"');
  });
});

describe('ollama-chat think', () => {
  it('takes the client effort first: none is off, levels go as levels, other words switch it on', () => {
    expect(thinkValue('none', 'enabled')).toBe(false);
    for (const level of ['low', 'medium', 'high', 'max'] as const) expect(thinkValue(level, undefined)).toBe(level);
    expect(thinkValue('minimal', undefined)).toBe('low');
    expect(thinkValue('xhigh', undefined)).toBe('high');
    expect(thinkValue('deep', undefined)).toBe(true);
  });

  it('falls back to the route setting; adaptive or unset leaves the model its default', () => {
    expect(thinkValue(undefined, 'enabled')).toBe(true);
    expect(thinkValue(undefined, 'disabled')).toBe(false);
    expect(thinkValue(undefined, 'adaptive')).toBeUndefined();
    expect(thinkValue(undefined, undefined)).toBeUndefined();
    expect(body(request([{ role: 'user', content: 'q' }]), route({ thinking: 'disabled' })).think).toBe(false);
  });
});

describe('ollama-chat decodeReply', () => {
  it('turns an error body with status 200 into the proxy error, and a body without a message into bad reply', () => {
    expect(() => decodeReply(200, { error: 'model "x" not found, try pulling it first' }, route())).toThrow(/not found/);
    expect(() => decodeReply(200, { model: 'm', done: true }, route())).toThrow(/no message/);
    expect(() => decodeReply(200, 'text', route())).toThrow(/not a JSON object/);
  });

  it('reads a reply that never finished as finish_reason null, without usage', () => {
    expect(decodeReply(200, { model: 'm', message: { role: 'assistant', content: 'part' }, done: false }, route())).toStrictEqual({ content: 'part', finish_reason: null, model: 'm' });
  });
});
