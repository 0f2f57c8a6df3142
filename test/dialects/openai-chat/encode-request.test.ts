import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { AssistantMessage, NeutralRequest, OpaqueBlock, ToolSpec } from '../../../src/core/types.js';
import { encodeRequest as encodeBytes } from '../../../src/dialects/openai-chat/encode-request.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';
import { BodyListMemo } from '../../../src/proxy/list-memo.js';
import { WireMemo } from '../../../src/proxy/wire-memo.js';

const route = (over: Partial<DialectRoute> = {}): DialectRoute => ({
  wire: 'openai-chat',
  preset: 'generic',
  provider: 'p',
  model: 'm',
  baseUrl: 'https://upstream.invalid/v1',
  reasoningOut: 'reasoning_content',
  reasoningOnToolTurns: false,
  headers: {},
  ...over,
});
const noHints: WireHints = { bodyKey: false, headers: {} };
const images: Record<string, { mime: string; base64: string }> = { abc123: { mime: 'image/png', base64: 'iVBORw0KGgo=' } };
const opts = (stream = false): EncodeOptions => ({
  stream,
  resolveImage: (sha) => {
    const img = images[sha];
    if (img === undefined) throw new Error(`no image ${sha}`);
    return img;
  },
});

/** The encoder, its body read as text (it assembles UTF-8 bytes). */
const encodeRequest = (...args: Parameters<typeof encodeBytes>) => {
  const out = encodeBytes(...args);
  return { ...out, body: out.body.toString() };
};
const request = (messages: NeutralRequest['messages'], over: Partial<NeutralRequest> = {}): NeutralRequest => ({ messages, model: 'm', params: {}, tools: [], ...over });
const body = (req: NeutralRequest, r = route(), hints = noHints, o = opts()): Record<string, unknown> => JSON.parse(encodeRequest(req, r, hints, o).body) as Record<string, unknown>;
const assistantOut = (msg: AssistantMessage, r: DialectRoute): Record<string, unknown> =>
  (body(request([{ role: 'user', content: 'q' }, msg]), r).messages as Record<string, unknown>[])[1] as Record<string, unknown>;

const call = (id: string) => ({ id, name: 'read_file', arguments: `{"path":"${id}.ts"}` });
const origin = { provider: 'p', model: 'm' };

describe('openai-chat encodeRequest: body', () => {
  it('writes the whole body in a fixed key order (golden bytes)', () => {
    const tool: ToolSpec = { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };
    const req = request(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', sha256: 'abc123', mime: 'image/png', tokens: 85, detail: 'low' }] },
        { role: 'assistant', content: null, tool_calls: [call('a')] },
        { role: 'tool', tool_call_id: 'a', content: 'x = 1' },
      ],
      {
        tools: [tool],
        // Deliberately inserted in an unusual order: the body's order does not follow it.
        params: { seed: 7, max_tokens: 100, temperature: 0.2, tool_choice: 'auto', stop: ['END'], top_p: 0.9, parallel_tool_calls: false, reasoning_effort: 'low', frequency_penalty: 0, presence_penalty: 0.5, response_format: { type: 'text' } },
      },
    );
    const out = encodeRequest(req, route(), { bodyKey: true, sessionKey: 'f00d', headers: {} }, opts(true));
    expect(out.path).toBe('/chat/completions');
    expect(out.body).toBe(
      '{"model":"m","messages":[{"role":"system","content":"Be brief."},' +
        '{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]},' +
        '{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"a.ts\\"}"}}]},' +
        '{"role":"tool","tool_call_id":"a","content":"x = 1"}],' +
        '"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}],' +
        '"tool_choice":"auto","parallel_tool_calls":false,"temperature":0.2,"top_p":0.9,"max_tokens":100,"stop":["END"],"seed":7,' +
        '"presence_penalty":0.5,"frequency_penalty":0,"response_format":{"type":"text"},"reasoning_effort":"low",' +
        '"prompt_cache_key":"f00d","stream":true,"stream_options":{"include_usage":true}}',
    );
  });

  it('gives equal bytes for equal requests whatever key order their objects hold', () => {
    const a = request([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo', thinking: 't' }], { params: { temperature: 1, max_tokens: 5 } });
    const b: NeutralRequest = {
      tools: [],
      params: { max_tokens: 5, temperature: 1 },
      model: 'm',
      messages: [{ content: 'hi', role: 'user' }, { thinking: 't', content: 'yo', role: 'assistant' }],
    };
    const first = encodeRequest(a, route(), noHints, opts());
    expect(encodeRequest(b, route(), noHints, opts()).body).toBe(first.body);
    expect(encodeRequest(a, route(), noHints, opts()).body).toBe(first.body);
  });

  it('sends tools exactly as given, their own key order kept', () => {
    const odd = { function: { parameters: { z: 1, a: 2 }, name: 'f', strict: true }, type: 'function' } as ToolSpec;
    expect(encodeRequest(request([{ role: 'user', content: 'q' }], { tools: [odd] }), route(), noHints, opts()).body).toContain(
      '"tools":[{"function":{"parameters":{"z":1,"a":2},"name":"f","strict":true},"type":"function"}]',
    );
  });

  it('leaves out tools, params and stream fields that are not set', () => {
    expect(body(request([{ role: 'user', content: 'q' }]))).toStrictEqual({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
  });

  it('puts max_tokens in the field the route names', () => {
    const req = request([{ role: 'user', content: 'q' }], { params: { max_tokens: 64 } });
    expect(body(req, route({ maxTokensField: 'max_completion_tokens' }))).toMatchObject({ max_completion_tokens: 64 });
    expect(body(req, route({ maxTokensField: 'max_completion_tokens' }))).not.toHaveProperty('max_tokens');
    expect(body(req)).toMatchObject({ max_tokens: 64 });
  });

  it('sends images from resolveImage as data URLs, detail only when set', () => {
    const out = body(request([{ role: 'user', content: [{ type: 'image', sha256: 'abc123', mime: 'image/webp', tokens: 85 }] }]));
    expect(out.messages).toStrictEqual([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }]);
  });
});

describe('openai-chat encodeRequest: hints and headers', () => {
  it('sends prompt_cache_key only when the hints ask for a body key', () => {
    const req = request([{ role: 'user', content: 'q' }]);
    expect(body(req, route(), { bodyKey: true, sessionKey: 'k1', headers: {} })).toMatchObject({ prompt_cache_key: 'k1' });
    expect(body(req, route(), { bodyKey: false, sessionKey: 'k1', headers: {} })).not.toHaveProperty('prompt_cache_key');
    expect(body(req, route(), { bodyKey: true, headers: {} })).not.toHaveProperty('prompt_cache_key');
  });

  it('writes top-level cache_control when the hints carry one', () => {
    const req = request([{ role: 'user', content: 'q' }]);
    expect(body(req, route(), { bodyKey: false, headers: {}, cacheControl: 'ephemeral' })).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(body(req, route(), { bodyKey: false, headers: {}, cacheControl: '1h' })).toMatchObject({ cache_control: { type: 'ephemeral', ttl: '1h' } });
  });

  it('merges route headers, then hint headers, then its own content type', () => {
    const out = encodeRequest(
      request([{ role: 'user', content: 'q' }]),
      route({ headers: { 'HTTP-Referer': 'https://x', 'x-session-id': 'config', 'Content-Type': 'text/plain' } }),
      { bodyKey: false, headers: { 'x-session-id': 'abc' } },
      opts(),
    );
    expect(out.headers).toStrictEqual({ 'HTTP-Referer': 'https://x', 'x-session-id': 'abc', 'content-type': 'application/json' });
  });

  it('leaves the request and hints unchanged', () => {
    const req = request([{ role: 'assistant', content: 'a', thinking: 't', blocks: [{ kind: 'gemini.thought_signature', origin, data: 's', before_call: 0 }] }]);
    const copy = structuredClone(req);
    encodeRequest(req, route(), noHints, opts(true));
    expect(req).toStrictEqual(copy);
  });
});

describe('openai-chat encodeRequest: reasoning', () => {
  const thought: AssistantMessage = { role: 'assistant', content: 'answer', thinking: 'because' };

  it('sends thinking as reasoning_content, reasoning, or not at all (reasoningOut)', () => {
    expect(assistantOut(thought, route({ reasoningOut: 'reasoning_content' }))).toStrictEqual({ role: 'assistant', content: 'answer', reasoning_content: 'because' });
    expect(assistantOut(thought, route({ reasoningOut: 'reasoning' }))).toStrictEqual({ role: 'assistant', content: 'answer', reasoning: 'because' });
    expect(assistantOut(thought, route({ reasoningOut: 'none' }))).toStrictEqual({ role: 'assistant', content: 'answer' });
  });

  it('sends no field for empty thinking when the route does not require one', () => {
    expect(assistantOut({ role: 'assistant', content: 'a', thinking: '' }, route())).toStrictEqual({ role: 'assistant', content: 'a' });
  });

  it('DeepSeek: a tool-call turn always carries reasoning_content, "" when there was no thinking', () => {
    const r = route({ reasoningOnToolTurns: true, reasoningOut: 'reasoning_content' });
    expect(assistantOut({ role: 'assistant', content: null, tool_calls: [call('a')] }, r)).toMatchObject({ content: null, reasoning_content: '' });
    expect(assistantOut({ role: 'assistant', content: null, thinking: 'need a.ts', tool_calls: [call('a')] }, r)).toMatchObject({ reasoning_content: 'need a.ts' });
    // A turn without tool calls follows reasoningOut as usual.
    expect(assistantOut({ role: 'assistant', content: 'done' }, r)).toStrictEqual({ role: 'assistant', content: 'done' });
  });

  it('DeepSeek rule names its field even when reasoningOut says otherwise', () => {
    const r = route({ reasoningOnToolTurns: true, reasoningOut: 'reasoning' });
    const out = assistantOut({ role: 'assistant', content: null, thinking: 't', tool_calls: [call('a')] }, r);
    expect(out).toHaveProperty('reasoning_content', 't');
    expect(out).not.toHaveProperty('reasoning');
  });

  it('sends reasoning_details alone, exactly as the block holds them', () => {
    const data = [{ type: 'reasoning.text', text: 'Look <here> & there', signature: 'EqQB', id: null, format: 'anthropic-claude-v1', index: 0 }];
    const blocks: OpaqueBlock[] = [{ kind: 'openrouter.reasoning_details', origin, data }];
    const msg: AssistantMessage = { role: 'assistant', content: null, thinking: 'Look <here> & there', blocks, tool_calls: [call('a')] };
    for (const r of [route(), route({ reasoningOut: 'reasoning' }), route({ reasoningOnToolTurns: true })]) {
      const out = assistantOut(msg, r);
      expect(out).toStrictEqual({ role: 'assistant', content: null, reasoning_details: data, tool_calls: [{ id: 'a', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }] });
    }
    const text = encodeRequest(request([msg]), route(), noHints, opts()).body;
    expect(text).toContain(`"reasoning_details":${JSON.stringify(data)}`);
  });

  it('puts a Gemini thought signature on the call its before_call names, and nowhere else', () => {
    const blocks: OpaqueBlock[] = [
      { kind: 'gemini.thought_signature', origin, data: 'sig-second', before_call: 1 },
      { kind: 'gemini.thought_signature', origin, data: 'sig-lost', before_call: 5 },
      { kind: 'anthropic.thinking', origin, data: { type: 'thinking', thinking: 'x', signature: 'y' } },
    ];
    const out = assistantOut({ role: 'assistant', content: null, blocks, tool_calls: [call('a'), call('b')] }, route({ reasoningOut: 'none' }));
    expect(out.tool_calls).toStrictEqual([
      { id: 'a', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
      { id: 'b', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.ts"}' }, extra_content: { google: { thought_signature: 'sig-second' } } },
    ]);
    expect(Object.keys(out)).toStrictEqual(['role', 'content', 'tool_calls']);
  });

  it('sends content null beside tool calls and "" for a turn with neither', () => {
    expect(assistantOut({ role: 'assistant', content: '', tool_calls: [call('a')] }, route())).toMatchObject({ content: null });
    expect(assistantOut({ role: 'assistant', content: 'Reading it.', tool_calls: [call('a')] }, route())).toMatchObject({ content: 'Reading it.' });
    expect(assistantOut({ role: 'assistant', content: null, thinking: 'hm' }, route())).toStrictEqual({ role: 'assistant', content: '', reasoning_content: 'hm' });
  });

  it('keeps tool-call arguments as their exact text', () => {
    const weird = { id: 'c', name: 'f', arguments: '{ "a" : 1.50 ,"b":"\\u00e9"}' };
    const out = assistantOut({ role: 'assistant', content: null, tool_calls: [weird] }, route());
    expect((out.tool_calls as { function: { arguments: string } }[])[0]?.function.arguments).toBe(weird.arguments);
  });
});

describe('serialising each message once', () => {
  it('gives the bytes JSON.stringify of the whole body gives, and keeps them per route option', () => {
    const thinking: AssistantMessage = { role: 'assistant', content: 'a', thinking: 'why' };
    const req = request([{ role: 'user', content: 'q' }, thinking], { params: { max_tokens: 9 } });
    const first = encodeRequest(req, route(), noHints, opts()).body;
    expect(first).toBe(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a', reasoning_content: 'why' }], max_tokens: 9 }));
    // The same message objects to a route that sends reasoning another way: serialised for it.
    const other = JSON.parse(encodeRequest(req, route({ reasoningOut: 'reasoning' }), noHints, opts()).body) as { messages: Record<string, unknown>[] };
    expect(other.messages[1]).toEqual({ role: 'assistant', content: 'a', reasoning: 'why' });
    expect(encodeRequest(req, route(), noHints, opts()).body).toBe(first);
    // A body with nothing but the model and messages closes right after them.
    expect(encodeRequest(request([{ role: 'user', content: 'q' }]), route(), noHints, opts()).body).toBe('{"model":"m","messages":[{"role":"user","content":"q"}]}');
  });

  it('gives a step\'s unsigned first call the stand-in on a route to Gemini 3, also after the same messages went to another route through the memos', () => {
    const req = request([{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'a', content: 'A' }, { role: 'tool', tool_call_id: 'b', content: 'B' }]);
    const memos: EncodeOptions = { ...opts(), memo: new WireMemo(1 << 20), lists: new BodyListMemo(1 << 20) };
    const plain = route({ reasoningOut: 'none' });
    const gemini = route({ reasoningOut: 'none', preset: 'gemini-openai', standInSignatures: true });
    const calls = (r: DialectRoute) => ((JSON.parse(encodeRequest(req, r, noHints, memos).body) as { messages: { tool_calls?: { extra_content?: unknown }[] }[] }).messages[1]!.tool_calls!).map((c) => c.extra_content);
    expect(calls(plain)).toEqual([undefined, undefined]);
    expect(calls(gemini)).toEqual([{ google: { thought_signature: 'skip_thought_signature_validator' } }, undefined]);
    expect(calls(plain)).toEqual([undefined, undefined]);
  });
});
