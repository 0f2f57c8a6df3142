import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { AssistantMessage, NeutralRequest, OpaqueBlock, ToolSpec } from '../../../src/core/types.js';
import { decodeReply } from '../../../src/dialects/openai-responses/decode-reply.js';
import { encodeRequest } from '../../../src/dialects/openai-responses/encode-request.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';

const route = (over: Partial<DialectRoute> = {}): DialectRoute => ({
  wire: 'openai-responses',
  preset: 'openai-responses',
  provider: 'openai',
  model: 'gpt-5.6',
  baseUrl: 'https://api.openai.com/v1',
  reasoningOut: 'none',
  reasoningOnToolTurns: false,
  headers: {},
  ...over,
});
const noHints: WireHints = { bodyKey: false, headers: {} };
const opts = (stream = true): EncodeOptions => ({ stream, resolveImage: () => ({ mime: 'image/png', base64: 'iVBORw0KGgo=' }) });
const request = (messages: NeutralRequest['messages'], over: Partial<NeutralRequest> = {}): NeutralRequest => ({ messages, model: 'gpt-5.6', params: {}, tools: [], ...over });
const body = (req: NeutralRequest, r = route(), hints = noHints, o = opts()): Record<string, unknown> =>
  JSON.parse(String(encodeRequest(req, r, hints, o).body)) as Record<string, unknown>;
const origin = { provider: 'openai', model: 'gpt-5.6' };
const block = (data: unknown, beforeCall?: number): OpaqueBlock => ({ kind: 'responses.reasoning', origin, data, ...(beforeCall === undefined ? {} : { before_call: beforeCall }) });
const rs = (id: string) => ({ id, type: 'reasoning', summary: [{ type: 'summary_text', text: `why ${id}` }], encrypted_content: `enc-${id}`, status: 'completed' });
const given = (id: string) => ({ type: 'reasoning', summary: [{ type: 'summary_text', text: `why ${id}` }], encrypted_content: `enc-${id}` });

describe('openai-responses encodeRequest', () => {
  it('writes the whole body in a fixed key order (golden bytes)', () => {
    const tool: ToolSpec = { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };
    const req = request(
      [
        { role: 'system', content: '<stable system prompt>' },
        { role: 'user', content: [{ type: 'text', text: 'Fix the bug' }, { type: 'image', sha256: 'abc', mime: 'image/png', tokens: 85 }] },
        { role: 'assistant', content: null, blocks: [block(rs('rs_abc123'), 0)], tool_calls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: '...' },
      ],
      { tools: [tool], params: { reasoning_effort: 'high', max_tokens: 8192, tool_choice: { type: 'function', function: { name: 'read_file' } }, stop: ['X'], seed: 1, temperature: 1 } },
    );
    const out = encodeRequest(req, route({ keepReasoning: true }), { bodyKey: true, sessionKey: 'sess_7f3c', headers: {} }, opts());
    expect(out.path).toBe('/responses');
    expect(String(out.body)).toBe(
      '{"model":"gpt-5.6","instructions":"<stable system prompt>","input":[' +
        '{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the bug"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]},' +
        '{"type":"reasoning","summary":[{"type":"summary_text","text":"why rs_abc123"}],"encrypted_content":"enc-rs_abc123"},' +
        '{"type":"function_call","call_id":"call_1","name":"read_file","arguments":"{\\"path\\":\\"a.ts\\"}"},' +
        '{"type":"function_call_output","call_id":"call_1","output":"..."}],' +
        '"tools":[{"type":"function","name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}},"strict":false}],' +
        '"tool_choice":{"type":"function","name":"read_file"},"temperature":1,"max_output_tokens":8192,' +
        '"reasoning":{"effort":"high","summary":"auto","context":"all_turns"},"include":["reasoning.encrypted_content"],' +
        '"store":false,"prompt_cache_key":"sess_7f3c","stream":true}',
    );
  });

  it('keeps the instructions and every earlier byte when a later system message is appended', () => {
    const base: NeutralRequest['messages'] = [{ role: 'system', content: 'S' }, { role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }];
    const before = String(encodeRequest(request(base), route(), noHints, opts()).body);
    const after = String(encodeRequest(request([...base, { role: 'system', content: 'S2' }]), route(), noHints, opts()).body);
    const cut = before.indexOf('],"store"');
    expect(after.slice(0, cut)).toBe(before.slice(0, cut));
    expect((JSON.parse(after) as { input: unknown[] }).input.at(-1)).toStrictEqual({ type: 'message', role: 'system', content: [{ type: 'input_text', text: 'S2' }] });
  });

  it('sends no instructions when the conversation does not start with a system message', () => {
    const out = body(request([{ role: 'user', content: 'q' }]));
    expect(out).not.toHaveProperty('instructions');
    expect(out.input).toStrictEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }] }]);
  });

  it('asks for reasoning only with an effort or keep_reasoning; encrypted content and all_turns only with keep_reasoning', () => {
    const q = request([{ role: 'user', content: 'q' }]);
    expect(body(q)).not.toHaveProperty('reasoning');
    expect(body(q)).not.toHaveProperty('include');
    expect(body(request([{ role: 'user', content: 'q' }], { params: { reasoning_effort: 'low' } })).reasoning).toStrictEqual({ effort: 'low', summary: 'auto' });
    const kept = body(q, route({ keepReasoning: true }));
    expect(kept.reasoning).toStrictEqual({ summary: 'auto', context: 'all_turns' });
    expect(kept.include).toStrictEqual(['reasoning.encrypted_content']);
    expect(kept.store).toBe(false);
  });

  it('asks for reasoning as the client asked (Codex: a summary and encrypted content, no effort) unless the route turns keeping off', () => {
    const codex = request([{ role: 'user', content: 'q' }], {
      params: { reasoning_summary: 'auto', extra: { wire: 'openai-responses', fields: { include: ['reasoning.encrypted_content', 'message.output_text.logprobs'] } } },
    });
    const asked = body(codex);
    expect(asked.reasoning).toStrictEqual({ summary: 'auto', context: 'all_turns' });
    expect(asked.include).toStrictEqual(['reasoning.encrypted_content', 'message.output_text.logprobs']);
    const off = body(codex, route({ keepReasoning: false }));
    expect(off.reasoning).toStrictEqual({ summary: 'auto' });
    expect(off.include).toStrictEqual(['message.output_text.logprobs']);
    expect(body(request([{ role: 'user', content: 'q' }], { params: { reasoning_summary: 'detailed' } })).reasoning).toStrictEqual({ summary: 'detailed' });
  });

  it('keeps a reply\'s encrypted reasoning as a block unless the route turns keeping off', () => {
    const reply = { id: 'resp_1', status: 'completed', output: [rs('rs_1'), { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }] };
    const blocksOf = (r: DialectRoute) => decodeReply(200, reply, r).blocks ?? [];
    expect(blocksOf(route())).toHaveLength(1);
    expect(blocksOf(route({ keepReasoning: false }))).toHaveLength(0);
  });

  it('puts each reasoning item back before the call it came before, without its id or status', () => {
    const msg: AssistantMessage = {
      role: 'assistant',
      content: 'Reading both.',
      thinking: 'not sent as text',
      blocks: [block(rs('r1'), 0), block(rs('r2'), 1), block(rs('late'), 9), block({ id: 'bare', type: 'reasoning', summary: [] }, 0), { kind: 'anthropic.thinking', origin, data: { thinking: 'x' } }],
      tool_calls: [{ id: 'a', name: 'f', arguments: '{}' }, { id: 'b', name: 'g', arguments: '{"x":1}' }],
    };
    expect(body(request([msg])).input).toStrictEqual([
      given('r1'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading both.' }] },
      { type: 'function_call', call_id: 'a', name: 'f', arguments: '{}' },
      given('r2'),
      { type: 'function_call', call_id: 'b', name: 'g', arguments: '{"x":1}' },
      given('late'),
    ]);
  });

  it('gives a decoded reply back as the items it came as, in their order (ids dropped)', () => {
    const raw = JSON.parse(readFileSync(new URL('../../fixtures/dialects/openai-responses/parallel-tool-calls/reply.json', import.meta.url), 'utf8')) as { output: Record<string, unknown>[] };
    const reply = decodeReply(200, raw, route({ keepReasoning: true }));
    const msg: AssistantMessage = { role: 'assistant', content: reply.content, blocks: reply.blocks, tool_calls: reply.tool_calls };
    const items = body(request([msg])).input as Record<string, unknown>[];
    expect(items.map((i) => i.type)).toStrictEqual(raw.output.map((o) => o.type));
    const reasoning = raw.output.filter((o) => o.type === 'reasoning');
    expect(items.filter((i) => i.type === 'reasoning')).toStrictEqual(reasoning.map((r) => ({ type: 'reasoning', summary: r.summary, encrypted_content: r.encrypted_content })));
  });

  it('maps response_format to text.format and leaves out fields the wire lacks', () => {
    const schema = { type: 'object', properties: {} };
    const out = body(request([{ role: 'user', content: 'q' }], { params: { response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } }, stop: 'END', seed: 3, presence_penalty: 1, frequency_penalty: 1, tool_choice: 'required', parallel_tool_calls: false } }));
    expect(out.text).toStrictEqual({ format: { type: 'json_schema', name: 'x', schema, strict: true } });
    expect(out.tool_choice).toBe('required');
    expect(out.parallel_tool_calls).toBe(false);
    for (const key of ['stop', 'seed', 'presence_penalty', 'frequency_penalty']) expect(out).not.toHaveProperty(key);
    expect(body(request([{ role: 'user', content: 'q' }], { params: { response_format: { type: 'json_object' } } })).text).toStrictEqual({ format: { type: 'json_object' } });
  });

  it('sends a tool without parameters with an empty object schema, and strict as the client said', () => {
    const tools: ToolSpec[] = [{ type: 'function', function: { name: 'now' } }, { type: 'function', function: { name: 's', parameters: { type: 'object' }, strict: true } }];
    expect(body(request([{ role: 'user', content: 'q' }], { tools })).tools).toStrictEqual([
      { type: 'function', name: 'now', parameters: { type: 'object', properties: {} }, strict: false },
      { type: 'function', name: 's', parameters: { type: 'object' }, strict: true },
    ]);
  });

  it('carries the hints: Codex session headers, the body key only when asked', () => {
    const hints: WireHints = { bodyKey: false, sessionKey: 'k1', headers: { 'session-id': 'k1', 'thread-id': 'k1', 'x-client-request-id': 'k1' } };
    const out = encodeRequest(request([{ role: 'user', content: 'q' }]), route({ headers: { originator: 'prefix-proxy' } }), hints, opts(false));
    expect(out.headers).toStrictEqual({ originator: 'prefix-proxy', 'session-id': 'k1', 'thread-id': 'k1', 'x-client-request-id': 'k1', 'content-type': 'application/json' });
    const parsed = JSON.parse(String(out.body)) as Record<string, unknown>;
    expect(parsed).not.toHaveProperty('prompt_cache_key');
    expect(parsed).not.toHaveProperty('stream');
  });
});

describe('openai-responses decodeReply', () => {
  it('throws the error of a failed response, and a bad reply for a body without output', () => {
    expect(() => decodeReply(200, { status: 'failed', output: [], error: { code: 'server_error', message: 'boom' } }, route())).toThrow(/boom/);
    expect(() => decodeReply(200, { error: { message: 'Your input exceeds the context window of this model.', code: 'context_length_exceeded' } }, route())).toThrow(/context window/);
    expect(() => decodeReply(200, { status: 'completed' }, route())).toThrow(/no output/);
  });
});
