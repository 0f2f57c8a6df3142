import { describe, expect, it } from 'vitest';
import { planMarks, sentMode } from '../../src/cache-hints/openai-breakpoints.js';
import { takesExplicitBreakpoints } from '../../src/core/openai-family.js';
import { hintsFor } from '../../src/cache-hints/session-hints.js';
import { resolveRoute, withSimulator } from '../../src/config/routes.js';
import type { DialectRoute, WireHints } from '../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../src/core/types.js';
import { encodeRequest as encodeChat } from '../../src/dialects/openai-chat/encode-request.js';
import { encodeRequest as encodeResponses } from '../../src/dialects/openai-responses/encode-request.js';
import type { EncodeOptions } from '../../src/dialects/types.js';
import { loadToml } from '../config/helpers.js';

const big = (tag: string) => `${tag} `.repeat(1200);
const request = (messages: NeutralMessage[]): NeutralRequest => ({ messages, model: 'gpt-5.6-sol', params: {}, tools: [] });
const call = (id: string) => ({ role: 'assistant' as const, content: null, tool_calls: [{ id, name: 'read', arguments: '{}' }] });
const result = (id: string, text = big(id)) => ({ role: 'tool' as const, tool_call_id: id, content: text });

/** An agent's requests, each the one before plus a reply and its result. */
function agent(n: number): NeutralRequest[] {
  const msgs: NeutralMessage[] = [{ role: 'system', content: big('sys') }, { role: 'user', content: 'fix it' }];
  const out = [request([...msgs])];
  for (let i = 0; i < n; i++) {
    msgs.push(call(`c${i}`), result(`c${i}`));
    out.push(request([...msgs]));
  }
  return out;
}

describe('takesExplicitBreakpoints', () => {
  it('is gpt-5.6 and later, gpt-6 and later, with prefixes and suffixes', () => {
    for (const m of ['gpt-5.6', 'gpt-5.6-sol', 'gpt-5.10-mini', 'gpt-6', 'gpt-6-astra', 'openai/gpt-6.1-luna', 'GPT-7']) expect(takesExplicitBreakpoints(m), m).toBe(true);
    for (const m of ['gpt-5.5', 'gpt-5.4-mini', 'gpt-5', 'gpt-4o', 'gpt-60x', 'o3', 'sim-model', 'gpt-5.6x']) expect(takesExplicitBreakpoints(m), m).toBe(false);
  });
});

describe('planMarks', () => {
  it('marks the system prompt end and the last input before the newest reply, never an assistant message', () => {
    const reqs = agent(4);
    expect(planMarks(reqs[0]!).marks).toEqual([0]);
    for (const req of reqs.slice(1)) {
      const { marks } = planMarks(req);
      expect(marks).toEqual([0, req.messages.length - 3]);
      for (const i of marks) expect(req.messages[i]!.role).not.toBe('assistant');
    }
  });

  it('marks the last input at or before the latest elision placeholder, at most three in all', () => {
    const msgs: NeutralMessage[] = [
      { role: 'system', content: big('sys') }, { role: 'user', content: big('task') },
      { role: 'assistant', content: '[elided seq=3-9]' }, { role: 'user', content: big('next') },
      call('a'), result('a', '[elided seq=12]'), call('b'), result('b'), call('c'), result('c'), call('d'), result('d'),
    ];
    expect(planMarks(request(msgs)).marks).toEqual([0, 5, 9]);
  });

  it('leaves out a prefix too short to cache, and a system prompt nothing follows', () => {
    expect(planMarks(request([{ role: 'system', content: 'short' }, { role: 'user', content: 'hi' }])).marks).toEqual([]);
    expect(planMarks(request([{ role: 'system', content: big('sys') }])).marks).toEqual([]);
  });

  it('explicit mode only with a marker', () => {
    const none = planMarks(request([{ role: 'user', content: 'hi' }]));
    expect(sentMode('explicit', none)).toBe('implicit');
    expect(sentMode('explicit', planMarks(agent(1)[1]!))).toBe('explicit');
  });
});

const chatRoute: DialectRoute = { wire: 'openai-chat', preset: 'openai', provider: 'openai', model: 'gpt-5.6-sol', baseUrl: 'https://api.openai.com/v1', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {} };
const responsesRoute: DialectRoute = { ...chatRoute, wire: 'openai-responses', preset: 'openai-responses' };
const hints: WireHints = { bodyKey: false, headers: {}, promptCache: 'implicit' };
const opts: EncodeOptions = { stream: false, resolveImage: () => ({ mime: 'image/png', base64: 'AA==' }) };

/** Each message's (or item's) bytes, with the breakpoints taken out. */
function unmarked(items: unknown[]): string[] {
  return items.map((m) => JSON.stringify(m, (k, v: unknown) => (k === 'prompt_cache_breakpoint' ? undefined : v)));
}

describe('the encoders', () => {
  it('chat: a message keeps its bytes from one request to the next, markers aside; markers only where planned', () => {
    const reqs = agent(5);
    let before: string[] = [];
    for (const req of reqs) {
      const body = JSON.parse(String(encodeChat(req, chatRoute, hints, opts).body)) as { messages: unknown[]; prompt_cache_options: unknown };
      expect(body.prompt_cache_options).toEqual({ mode: 'implicit' });
      const now = unmarked(body.messages);
      expect(now.slice(0, before.length)).toEqual(before);
      before = now;
      const marked = body.messages.flatMap((m, i) => (JSON.stringify(m).includes('prompt_cache_breakpoint') ? [i] : []));
      expect(marked).toEqual(planMarks(req).marks);
    }
    // Without the hint, the bytes are what they always were.
    const plain = String(encodeChat(reqs[2]!, chatRoute, { bodyKey: false, headers: {} }, opts).body);
    expect(plain).not.toMatch(/prompt_cache|"type":"text"/);
  });

  it('responses: the system prompt is a developer item, tool outputs that may carry a marker are parts, bytes stable', () => {
    const reqs = agent(4);
    let before: string[] = [];
    for (const req of reqs) {
      const encoded = encodeResponses(req, responsesRoute, hints, opts);
      const body = JSON.parse(String(encoded.body)) as { instructions?: string; input: { role?: string; type: string; output?: unknown }[] };
      expect(body.instructions).toBeUndefined();
      expect(body.input[0]!.role).toBe('developer');
      const now = unmarked(body.input);
      expect(now.slice(0, before.length)).toEqual(before);
      before = now;
      expect(encoded.promptCache).toEqual({ mode: 'implicit', marks: planMarks(req).marks });
    }
    const last = JSON.parse(String(encodeResponses(reqs[4]!, responsesRoute, hints, opts).body)) as { input: { type: string; output?: unknown }[] };
    expect(last.input.filter((i) => i.type === 'function_call_output').every((i) => Array.isArray(i.output))).toBe(true);
  });

});

describe('the route setting', () => {
  const config = withSimulator(loadToml([
    '[providers.openai]', 'preset = "openai"',
    '[providers.resp]', 'preset = "openai-responses"',
    '[providers.plan]', 'preset = "openai-responses"', 'codex_headers = true',
    '[providers.chatgpt]', 'preset = "openai-responses"', 'base_url = "https://chatgpt.com/backend-api/codex"',
    '[providers.openrouter]', 'preset = "openrouter"',
    '[models.new]', 'provider = "openai"', 'model = "gpt-5.6-sol"',
    '[models.newr]', 'provider = "resp"', 'model = "gpt-6-astra"',
    '[models.old]', 'provider = "openai"', 'model = "gpt-5.4"',
    '[models.plan]', 'provider = "plan"', 'model = "gpt-5.6-sol"',
    '[models.chatgpt]', 'provider = "chatgpt"', 'model = "gpt-5.6-sol"',
    '[models.or]', 'provider = "openrouter"', 'model = "openai/gpt-5.6-sol"',
    '[models.or-on]', 'provider = "openrouter"', 'model = "openai/gpt-5.6-sol"', 'prompt_cache_breakpoints = "explicit"',
    '[models.new-off]', 'provider = "openai"', 'model = "gpt-5.6-sol"', 'prompt_cache_breakpoints = "off"',
  ].join('\n')), 'http://127.0.0.1:1/v1');

  it('is on by default for the family on the upstreams known to take it, off elsewhere, and can be forced', () => {
    const mode = (name: string) => resolveRoute(config, name).promptCache;
    expect(['new', 'newr', 'old', 'plan', 'chatgpt', 'or', 'or-on', 'new-off'].map(mode)).toEqual(['implicit', 'implicit', 'off', 'off', 'off', 'off', 'explicit', 'off']);
    expect(mode('openai/gpt-6')).toBe('implicit');
    // The built-in simulator's default mode refuses the fields, as OpenAI before GPT-5.6 does.
    expect(mode('sim/gpt-5.6')).toBe('off');
    expect(hintsFor(resolveRoute(config, 'new'), 's').promptCache).toBe('implicit');
    expect(hintsFor(resolveRoute(config, 'old'), 's').promptCache).toBeUndefined();
  });

  it('drops a client\'s prompt_cache_retention for GPT-5.6+ before the log, as a refused field', () => {
    expect(resolveRoute(config, 'new').refuses).toContain('prompt_cache_retention');
    expect(resolveRoute(config, 'newr').refuses).toContain('prompt_cache_retention');
    expect(resolveRoute(config, 'old').refuses).not.toContain('prompt_cache_retention');
  });

  it('prices GPT-5.6+ writes at 1.25x input unless the config names a write price', () => {
    expect(resolveRoute(config, 'new').price?.cache_write).toBeCloseTo(1.25 * resolveRoute(config, 'new').price!.input, 9);
    const own = withSimulator(loadToml(['[providers.openai]', 'preset = "openai"', '[models.m]', 'provider = "openai"', 'model = "gpt-5.6-sol"', 'price = { input = 2, output = 8, cache_write = 3 }'].join('\n')), 'http://127.0.0.1:1/v1');
    expect(resolveRoute(own, 'm').price?.cache_write).toBe(3);
  });

  it('refuses a forced setting on a wire that cannot carry it', () => {
    expect(() => loadToml(['[providers.an]', 'preset = "anthropic"', '[models.c]', 'provider = "an"', 'model = "claude"', 'prompt_cache_breakpoints = "implicit"'].join('\n'))).toThrow(/prompt_cache_breakpoints/);
  });
});
