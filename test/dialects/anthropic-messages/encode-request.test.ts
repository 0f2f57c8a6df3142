import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { NeutralMessage, NeutralRequest, OpaqueBlock, RequestParams, ToolSpec } from '../../../src/core/types.js';
import { encodeRequest } from '../../../src/dialects/anthropic-messages/encode-request.js';
import { anthropicMessages } from '../../../src/dialects/anthropic-messages/index.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';

const route = (over: Partial<DialectRoute> = {}): DialectRoute => ({
  wire: 'anthropic-messages',
  preset: 'anthropic',
  provider: 'anthropic',
  model: 'claude-sonnet-4-6',
  baseUrl: 'https://api.anthropic.com/v1',
  reasoningOut: 'none',
  reasoningOnToolTurns: false,
  headers: {},
  ...over,
});
const noHints: WireHints = { bodyKey: false, headers: {} };
const opts = (stream = false): EncodeOptions => ({
  stream,
  resolveImage: (sha) => {
    if (sha !== 'abc123') throw new Error(`no image ${sha}`);
    return { mime: 'image/png', base64: 'iVBORw0KGgo=' };
  },
});
const request = (messages: NeutralMessage[], over: Partial<NeutralRequest> = {}): NeutralRequest => ({
  messages,
  model: 'claude-sonnet-4-6',
  params: { max_tokens: 8192 },
  tools: [],
  ...over,
});
type Json = Record<string, unknown>;
const body = (req: NeutralRequest, r = route(), hints = noHints): Json => JSON.parse(String(encodeRequest(req, r, hints, opts()).body)) as Json;
const turns = (req: NeutralRequest, r = route(), hints = noHints) => body(req, r, hints).messages as { role: string; content: Json[] }[];

const origin = { provider: 'anthropic', model: 'claude-sonnet-4-6' };
const thinking = (text: string, before: number): OpaqueBlock => ({
  kind: 'anthropic.thinking', origin, data: { type: 'thinking', thinking: text, signature: `sig-${text}` }, before_call: before,
});
const call = (id: string, args = `{"path":"${id}.ts"}`) => ({ id, name: 'read_file', arguments: args });
const tool: ToolSpec = { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };

describe('anthropic-messages encodeRequest: body', () => {
  it('writes the whole body in a fixed key order (golden bytes)', () => {
    const req = request(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', sha256: 'abc123', mime: 'image/png', tokens: 85 }] },
        { role: 'assistant', content: null, thinking: 'hmm', tool_calls: [call('a')] },
        { role: 'tool', tool_call_id: 'a', content: 'x = 1' },
      ],
      { tools: [tool], params: { top_p: 0.9, stop: 'END', temperature: 0.2, max_tokens: 100, seed: 7, tool_choice: 'auto' } },
    );
    const out = encodeRequest(req, route(), noHints, opts(true));
    expect(out.path).toBe('/messages');
    expect(String(out.body)).toBe(
      '{"model":"claude-sonnet-4-6","max_tokens":100,"system":[{"type":"text","text":"Be brief."}],' +
        '"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],' +
        '"tool_choice":{"type":"auto"},' +
        '"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},' +
        '{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"read_file","input":{"path":"a.ts"}}]},' +
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x = 1"}]}],' +
        '"stop_sequences":["END"],"temperature":0.2,"top_p":0.9,"stream":true}',
    );
    expect(out.cacheBreakpoints).toBeUndefined();
  });

  it('sends anthropic-version, config headers (anthropic-beta) and the key as x-api-key', () => {
    const out = encodeRequest(request([{ role: 'user', content: 'hi' }]), route({ headers: { 'anthropic-beta': 'context-1m-2025-08-07', 'Content-Type': 'text/plain' } }), noHints, opts());
    expect(out.headers).toStrictEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-1m-2025-08-07', 'content-type': 'application/json' });
    const own = encodeRequest(request([{ role: 'user', content: 'hi' }]), route({ headers: { 'Anthropic-Version': '2024-01-01' } }), noHints, opts());
    expect(own.headers['anthropic-version']).toBeUndefined();
    expect(own.headers['Anthropic-Version']).toBe('2024-01-01');
    expect(anthropicMessages.authHeaders('sk-ant-test')).toStrictEqual({ 'x-api-key': 'sk-ant-test' });
    expect(JSON.stringify(out)).not.toContain('sk-ant');
  });

  it('always sends max_tokens (4096 when the request has none)', () => {
    expect(body(request([{ role: 'user', content: 'hi' }], { params: {} })).max_tokens).toBe(4096);
  });

  it('maps tool_choice and parallel_tool_calls, and sends no choice without tools', () => {
    const choice = (params: RequestParams, tools = [tool]) => body(request([{ role: 'user', content: 'q' }], { tools, params: { max_tokens: 100, ...params } })).tool_choice;
    expect(choice({ tool_choice: 'none' })).toStrictEqual({ type: 'none' });
    expect(choice({ tool_choice: 'required' })).toStrictEqual({ type: 'any' });
    expect(choice({ tool_choice: { type: 'function', function: { name: 'read_file' } } })).toStrictEqual({ type: 'tool', name: 'read_file' });
    expect(choice({ parallel_tool_calls: false })).toStrictEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice({ tool_choice: 'required', parallel_tool_calls: false })).toStrictEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(choice({})).toBeUndefined();
    expect(choice({ tool_choice: 'auto' }, [])).toBeUndefined();
  });
});

describe('anthropic-messages encodeRequest: conversation', () => {
  it('merges consecutive tool results and a following user message into one user turn', () => {
    const out = turns(request([
      { role: 'user', content: 'read both' },
      { role: 'assistant', content: 'Sure.', tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
      { role: 'user', content: 'and now?' },
    ]));
    expect(out.map((t) => t.role)).toStrictEqual(['user', 'assistant', 'user']);
    expect(out[1]?.content.map((b) => b.type)).toStrictEqual(['text', 'tool_use', 'tool_use']);
    expect(out[2]?.content).toStrictEqual([
      { type: 'tool_result', tool_use_id: 'a', content: 'A' },
      { type: 'tool_result', tool_use_id: 'b', content: 'B' },
      { type: 'text', text: 'and now?' },
    ]);
  });

  it('keeps roles alternating: merges consecutive same-role messages, leaves empty ones out', () => {
    const out = turns(request([
      { role: 'user', content: 'one' },
      { role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'three' },
    ]));
    expect(out).toStrictEqual([{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }, { type: 'text', text: 'three' }] }]);
  });

  it('puts later system messages in the conversation as a system reminder, leaving `system` as it was', () => {
    const b = body(request([
      { role: 'system', content: 'S1' },
      { role: 'system', content: 'S2' },
      { role: 'user', content: 'q' },
      { role: 'system', content: 'New rule.' },
    ]));
    expect(b.system).toStrictEqual([{ type: 'text', text: 'S1' }, { type: 'text', text: 'S2' }]);
    expect(b.messages).toStrictEqual([{ role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'text', text: '<system-reminder>\nNew rule.\n</system-reminder>' }] }]);
  });

  it('places each opaque block by before_call, unchanged, and never sends thinking text', () => {
    const redacted: OpaqueBlock = { kind: 'anthropic.redacted_thinking', origin, data: { type: 'redacted_thinking', data: 'EmwK' }, before_call: 1 };
    const foreign: OpaqueBlock = { kind: 'openrouter.reasoning_details', origin, data: [{ type: 'reasoning.text', text: 'x' }] };
    const out = turns(request([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'Reading.', thinking: 'T0\n\nT1', blocks: [thinking('T0', 0), thinking('T1', 1), redacted, foreign, thinking('late', 5)], tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
    ]));
    expect(out[1]?.content).toStrictEqual([
      { type: 'thinking', thinking: 'T0', signature: 'sig-T0' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'a', name: 'read_file', input: { path: 'a.ts' } },
      { type: 'thinking', thinking: 'T1', signature: 'sig-T1' },
      { type: 'redacted_thinking', data: 'EmwK' },
      { type: 'tool_use', id: 'b', name: 'read_file', input: { path: 'b.ts' } },
      { type: 'thinking', thinking: 'late', signature: 'sig-late' },
    ]);
    // Without blocks, the thinking text alone goes nowhere.
    const plain = turns(request([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'A.', thinking: 'secret reasoning' }, { role: 'user', content: 'r' }]));
    expect(JSON.stringify(plain)).not.toContain('secret reasoning');
  });

  it('parses arguments into input; unparsable or non-object arguments go as {}', () => {
    const out = turns(request([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [call('a', '{"b": [1, 2], "a": 1}'), call('b', 'not json'), call('c', '[1]'), call('d', '')] },
      { role: 'tool', tool_call_id: 'a', content: '' },
    ]));
    expect(out[1]?.content.map((b) => b.input)).toStrictEqual([{ b: [1, 2], a: 1 }, {}, {}, {}]);
  });
});

describe('anthropic-messages encodeRequest: thinking', () => {
  const thinkingOf = (params: RequestParams, r = route()) => {
    const b = body(request([{ role: 'user', content: 'q' }], { params }), r);
    return { thinking: b.thinking, effort: (b.output_config as Json | undefined)?.effort, temperature: b.temperature, top_p: b.top_p };
  };

  it('maps the client effort to a budget, capped below max_tokens; none or unknown asks for nothing', () => {
    expect(thinkingOf({ max_tokens: 32000, reasoning_effort: 'low' }).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(thinkingOf({ max_tokens: 32000, reasoning_effort: 'medium' }).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(thinkingOf({ max_tokens: 32000, reasoning_effort: 'high' }).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 24576 });
    expect(thinkingOf({ max_tokens: 8192, reasoning_effort: 'high' }).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 8191 });
    expect(thinkingOf({ max_tokens: 1000, reasoning_effort: 'high' }).thinking).toBeUndefined();
    expect(thinkingOf({ max_tokens: 8192, reasoning_effort: 'none' }).thinking).toBeUndefined();
    expect(thinkingOf({ max_tokens: 8192 }).thinking).toBeUndefined();
  });

  it("follows the route's setting: enabled (medium by default), adaptive with the effort, disabled", () => {
    expect(thinkingOf({ max_tokens: 16000 }, route({ thinking: 'enabled' })).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(thinkingOf({ max_tokens: 16000, reasoning_effort: 'low' }, route({ thinking: 'enabled' })).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(thinkingOf({ max_tokens: 16000, reasoning_effort: 'high' }, route({ thinking: 'adaptive' }))).toMatchObject({ thinking: { type: 'adaptive' }, effort: 'high' });
    expect(thinkingOf({ max_tokens: 16000 }, route({ thinking: 'adaptive' }))).toMatchObject({ thinking: { type: 'adaptive' }, effort: undefined });
    expect(thinkingOf({ max_tokens: 16000, reasoning_effort: 'high' }, route({ thinking: 'disabled' })).thinking).toBeUndefined();
  });

  it('sends no temperature or top_p with thinking on, and falls back to auto for a forced tool choice', () => {
    expect(thinkingOf({ max_tokens: 16000, temperature: 0.3, top_p: 0.5, reasoning_effort: 'low' })).toMatchObject({ temperature: undefined, top_p: undefined });
    expect(thinkingOf({ max_tokens: 16000, temperature: 0.3, top_p: 0.5 })).toMatchObject({ temperature: 0.3, top_p: 0.5 });
    const b = body(request([{ role: 'user', content: 'q' }], { tools: [tool], params: { max_tokens: 16000, tool_choice: 'required', reasoning_effort: 'low' } }));
    expect(b.tool_choice).toStrictEqual({ type: 'auto' });
  });
});

describe('anthropic-messages encodeRequest: thinking inside a tool loop', () => {
  const enabled = route({ thinking: 'enabled' });
  const redacted: OpaqueBlock = { kind: 'anthropic.redacted_thinking', origin, data: { type: 'redacted_thinking', data: 'xyz' } };
  /** A tool loop whose last reply carries `blocks` (none: it went back without its signed block). */
  const loop = (blocks?: OpaqueBlock[], after: NeutralMessage[] = []): NeutralMessage[] => [
    { role: 'user', content: 'fix it' },
    { role: 'assistant', content: null, tool_calls: [call('a')], blocks: [thinking('first', 0)] },
    { role: 'tool', tool_call_id: 'a', content: 'a' },
    { role: 'assistant', content: 'Now b.', tool_calls: [call('b')], ...(blocks === undefined ? {} : { blocks }) },
    { role: 'tool', tool_call_id: 'b', content: 'b' },
    ...after,
  ];
  const params: RequestParams = { max_tokens: 16000, temperature: 0.3, top_p: 0.5, tool_choice: 'required', reasoning_effort: 'high' };
  const sent = (messages: NeutralMessage[], r = enabled) => {
    const b = body(request(messages, { tools: [tool], params }), r);
    return { thinking: b.thinking, output_config: b.output_config, temperature: b.temperature, top_p: b.top_p, tool_choice: b.tool_choice };
  };
  const off = { thinking: undefined, output_config: undefined, temperature: 0.3, top_p: 0.5, tool_choice: { type: 'any' } };

  it('asks for no thinking when the last reply of the loop went without its block, and then sends what thinking forbids', () => {
    expect(sent(loop())).toStrictEqual(off);
    // A result followed by the user's text joins the results' turn: still inside the loop.
    expect(sent(loop(undefined, [{ role: 'user', content: 'and hurry' }]))).toStrictEqual(off);
    // Adaptive too, and its effort goes with it.
    expect(sent(loop(), route({ thinking: 'adaptive' }))).toStrictEqual(off);
    // A block that does not come first does not count: the turn must start with one.
    expect(sent(loop([thinking('late', 1)]))).toStrictEqual(off);
  });

  it('keeps thinking when the last reply starts with its block, or the loop has ended', () => {
    const on = { thinking: { type: 'enabled', budget_tokens: 15999 }, output_config: undefined, temperature: undefined, top_p: undefined, tool_choice: { type: 'auto' } };
    expect(sent(loop([thinking('second', 0)]))).toStrictEqual(on);
    expect(sent(loop([redacted]))).toStrictEqual(on);
    expect(sent(loop([thinking('second', 0)]), route({ thinking: 'adaptive' }))).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    const ended = [...loop(), { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'thanks, now c' }] as NeutralMessage[];
    expect(sent(ended)).toStrictEqual(on);
    expect(sent([{ role: 'user', content: 'q' }])).toStrictEqual(on);
  });

  it('leaves the conversation as it was: only the parameters change', () => {
    const withThinking = body(request(loop([thinking('second', 0)]), { tools: [tool], params }), enabled);
    const without = body(request(loop(), { tools: [tool], params }), enabled);
    const turnsOf = (b: Json) => (b.messages as { content: Json[] }[]).map((t) => t.content.filter((x) => x.type !== 'thinking'));
    expect(turnsOf(without)).toStrictEqual(turnsOf(withThinking));
    expect((without.messages as { content: Json[] }[])[1]?.content[0]).toStrictEqual({ type: 'thinking', thinking: 'first', signature: 'sig-first' });
  });
});

describe('anthropic-messages encodeRequest: cache_control', () => {
  const convo: NeutralMessage[] = [
    { role: 'system', content: 'System prompt.' },
    { role: 'user', content: 'q1' },
    { role: 'assistant', content: null, blocks: [thinking('T', 0)], tool_calls: [call('a')] },
    { role: 'tool', tool_call_id: 'a', content: 'A' },
  ];
  const markedPaths = (b: Json): string[] => {
    const out: string[] = [];
    const visit = (value: unknown, path: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => visit(v, `${path}[${i}]`));
      else if (typeof value === 'object' && value !== null) {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'cache_control') out.push(path);
          else visit(v, path === '' ? k : `${path}.${k}`);
        }
      }
    };
    visit(b, '');
    return out;
  };

  it('top-level: one cache_control on the request, five minutes or one hour, no block markers', () => {
    const five = body(request(convo, { tools: [tool] }), route(), { bodyKey: false, headers: {}, cacheControl: 'ephemeral', cacheControlAt: 'top-level' });
    expect(five.cache_control).toStrictEqual({ type: 'ephemeral' });
    expect(markedPaths(five)).toStrictEqual(['']);
    const hour = body(request(convo), route(), { bodyKey: false, headers: {}, cacheControl: '1h', cacheControlAt: 'top-level' });
    expect(hour.cache_control).toStrictEqual({ type: 'ephemeral', ttl: '1h' });
  });

  it('breakpoints: the end of the stable history, of the system prompt, of the tools and of the opening', () => {
    const out = encodeRequest(request(convo, { tools: [tool] }), route(), { bodyKey: false, headers: {}, cacheControl: '1h', cacheControlAt: 'breakpoints' }, opts());
    const b = JSON.parse(String(out.body)) as Json;
    expect(b.cache_control).toBeUndefined();
    expect(markedPaths(b).sort()).toStrictEqual(['messages[0].content[0]', 'messages[2].content[0]', 'system[0]', 'tools[0]']);
    expect((b.messages as { content: Json[] }[])[2]?.content[0]).toStrictEqual({ type: 'tool_result', tool_use_id: 'a', content: 'A', cache_control: { type: 'ephemeral', ttl: '1h' } });
    expect(out.cacheBreakpoints).toBe(4);
  });

  it('breakpoints: never on a thinking block, never more than four, none without cache_control', () => {
    const many = request([...convo, { role: 'assistant', content: 'done' }], { tools: [tool, { ...tool, function: { ...tool.function, name: 'write_file' } }] });
    const b = body(many, route(), { bodyKey: false, headers: {}, cacheControl: 'ephemeral', cacheControlAt: 'breakpoints' });
    const paths = markedPaths(b);
    expect(paths.length).toBeLessThanOrEqual(4);
    expect(paths.sort()).toStrictEqual(['messages[0].content[0]', 'messages[2].content[0]', 'system[0]', 'tools[1]']);
    expect(markedPaths(body(many))).toStrictEqual([]);
  });

  it('breakpoints: the cache hints leave the neutral request untouched', () => {
    const req = request(convo, { tools: [tool] });
    const before = JSON.stringify(req);
    encodeRequest(req, route(), { bodyKey: false, headers: {}, cacheControl: 'ephemeral', cacheControlAt: 'breakpoints' }, opts());
    expect(JSON.stringify(req)).toBe(before);
    // A second encode of the same request marks the same blocks again (no state carried over).
    const again = encodeRequest(req, route(), { bodyKey: false, headers: {}, cacheControl: 'ephemeral', cacheControlAt: 'breakpoints' }, opts());
    expect(again.cacheBreakpoints).toBe(4);
  });
});

describe('anthropic-messages encodeRequest: stale signed blocks dropped by the API (dropStaleThinking)', () => {
  const params: RequestParams = { max_tokens: 16000, reasoning_effort: 'high' };
  const encoded = (r: DialectRoute, p: RequestParams = params) => encodeRequest(request([{ role: 'user', content: 'q' }], { params: p }), r, noHints, opts());

  it('asks the API to drop blocks whose prefix changed, on every request that thinks, with the beta it needs', () => {
    const out = encoded(route({ dropStaleThinking: true, thinking: 'enabled' }));
    const b = JSON.parse(String(out.body)) as Json;
    expect(b.thinking).toStrictEqual({ type: 'enabled', budget_tokens: 15999, block_binding: { prefix_mismatch_behavior: 'drop_block' } });
    expect(out.headers['anthropic-beta']).toBe('thinking-binding-controls-2026-08-01');
    const adaptive = JSON.parse(String(encoded(route({ dropStaleThinking: true, thinking: 'adaptive' })).body)) as Json;
    expect(adaptive.thinking).toStrictEqual({ type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } });
  });

  it('adds nothing to a request that does not think, nor on a route that leaves stale blocks out', () => {
    const none = encoded(route({ dropStaleThinking: true }), { max_tokens: 16000 });
    expect((JSON.parse(String(none.body)) as Json).thinking).toBeUndefined();
    expect(none.headers['anthropic-beta']).toBeUndefined();
    const strip = encoded(route({ thinking: 'enabled' }));
    expect((JSON.parse(String(strip.body)) as Json).thinking).toStrictEqual({ type: 'enabled', budget_tokens: 15999 });
    expect(strip.headers['anthropic-beta']).toBeUndefined();
  });

  it('joins a beta the config set', () => {
    const out = encoded(route({ dropStaleThinking: true, thinking: 'enabled', headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }));
    expect(out.headers['anthropic-beta']).toBe('context-1m-2025-08-07,thinking-binding-controls-2026-08-01');
  });
});
