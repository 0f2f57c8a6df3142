import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../src/core/route.js';
import type { NeutralMessage, NeutralReply } from '../../src/core/types.js';
import { ollamaChat } from '../../src/dialects/ollama-chat/index.js';
import { createEventDecoder } from '../../src/dialects/stream-decoder.js';
import { LOAD_NS, PROMPT_EVAL_NS_PER_TOKEN } from '../../src/sim/ollama/kv-slot.js';
import type { Sim } from '../../src/sim/server.js';
import { simPerTest, text } from './client.js';

const start = simPerTest();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** POST /api/chat; a stream's NDJSON lines parsed, or the JSON body. */
async function chat(s: Sim, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number; type: string; lines: Json[]; json: Json }> {
  const res = await fetch(`${s.origin}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const raw = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const lines = type.includes('ndjson') ? raw.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json) : [];
  return { status: res.status, type, lines, json: lines.length === 0 ? JSON.parse(raw) : null };
}

const system = { role: 'system', content: text(3000, 'sys') };
const ask = (content: string) => ({ role: 'user', content });
const done = (lines: Json[]): Json => lines.at(-1);

describe('ollama mode: the KV slot and prompt_eval_duration', () => {
  it('a request extending the previous one evaluates only what is new; a changed early byte evaluates it all', async () => {
    const s = await start();
    const first = [system, ask('[[say noted]]')];
    const a = done((await chat(s, { model: 'qwen3', messages: first, options: { num_ctx: 32768 } })).lines);
    expect(a.done).toBe(true);
    expect(a.prompt_eval_count).toBeGreaterThan(3000);
    expect(a.prompt_eval_duration).toBe((a.prompt_eval_count - 0) * PROMPT_EVAL_NS_PER_TOKEN);
    expect(a.load_duration).toBe(LOAD_NS);

    const second = [...first, { role: 'assistant', content: 'noted' }, ask('and then?')];
    const b = done((await chat(s, { model: 'qwen3', messages: second, options: { num_ctx: 32768 } })).lines);
    expect(b.prompt_eval_count).toBeGreaterThan(a.prompt_eval_count);
    expect(b.load_duration).toBeLessThan(LOAD_NS);
    // Only the appended messages (and at least one token) were evaluated: well under a second.
    expect(b.prompt_eval_duration).toBeLessThanOrEqual((b.prompt_eval_count - a.prompt_eval_count + 2) * PROMPT_EVAL_NS_PER_TOKEN);
    expect(b.prompt_eval_duration).toBeLessThan(1e9 / 20);

    const edited = [{ role: 'system', content: `X${system.content.slice(1)}` }, ...second.slice(1)];
    const c = done((await chat(s, { model: 'qwen3', messages: edited, options: { num_ctx: 32768 } })).lines);
    expect(c.prompt_eval_count).toBe(b.prompt_eval_count);
    // Only the role header before the changed byte was still in the slot.
    expect(c.prompt_eval_duration).toBeGreaterThanOrEqual((c.prompt_eval_count - 8) * PROMPT_EVAL_NS_PER_TOKEN);
    expect(c.prompt_eval_duration).toBeGreaterThan(1e9);
  });

  it('evaluates at least the last token of an identical prompt, as llama.cpp does', async () => {
    const s = await start();
    const body = { model: 'qwen3', messages: [system, ask('again')], stream: false };
    await chat(s, body);
    expect((await chat(s, body)).json.prompt_eval_duration).toBe(PROMPT_EVAL_NS_PER_TOKEN);
  });

  it('empties the slot when the model, or its num_ctx, changes, or its keep-alive runs out', async () => {
    const s = await start();
    const messages = [system, ask('hi')];
    const cold = async (body: Record<string, unknown>): Promise<boolean> => (await chat(s, { stream: false, messages, ...body })).json.load_duration === LOAD_NS;
    expect(await cold({ model: 'a', keep_alive: '10m' })).toBe(true);
    expect(await cold({ model: 'a', keep_alive: '10m' })).toBe(false);
    expect(await cold({ model: 'b' })).toBe(true);
    expect(await cold({ model: 'b', options: { num_ctx: 8192 } })).toBe(true);
    expect(await cold({ model: 'b', options: { num_ctx: 8192 }, keep_alive: '1m' })).toBe(false);
    s.advance(61_000);
    expect(await cold({ model: 'b', options: { num_ctx: 8192 }, keep_alive: 0 })).toBe(true);
    expect(await cold({ model: 'b', options: { num_ctx: 8192 }, keep_alive: -1 })).toBe(true);
    s.advance(86_400_000);
    expect(await cold({ model: 'b', options: { num_ctx: 8192 } })).toBe(false);
  });

  it('delays by the evaluation time only when asked', async () => {
    const s = await start();
    const messages = [{ role: 'user', content: text(2000, 'cold') }];
    const t0 = performance.now();
    await chat(s, { model: 'm', messages, stream: false }, { 'x-sim-delay-scale': '0.1' });
    // 2000+ tokens x 0.5 ms x 0.1 = 100 ms and more.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(95);
  });
});

describe('ollama mode: the wire', () => {
  it('streams NDJSON: thinking, content, the calls with object arguments and no id, then done', async () => {
    const s = await start();
    const r = await chat(s, { model: 'qwen3', messages: [ask('[[think plan it]] [[say ok]] [[call read {"path":"a.ts"}]] [[call read {"path":"b.ts"}]]')] });
    expect(r.status).toBe(200);
    expect(r.type).toContain('application/x-ndjson');
    expect(r.lines.filter((l) => !l.done).map((l) => l.message.thinking ?? '').join('')).toBe('plan it');
    const calls = r.lines.find((l) => l.message.tool_calls !== undefined).message.tool_calls;
    expect(calls).toStrictEqual([{ function: { index: 0, name: 'read', arguments: { path: 'a.ts' } } }, { function: { index: 1, name: 'read', arguments: { path: 'b.ts' } } }]);
    expect(done(r.lines)).toMatchObject({ done: true, done_reason: 'stop', message: { role: 'assistant', content: '' } });
  });

  it('leaves the thinking out when think is false, and answers whole with stream false', async () => {
    const s = await start();
    const r = await chat(s, { model: 'qwen3', think: false, stream: false, messages: [ask('[[think hidden]] [[say shown]]')] });
    expect(r.json.message).toStrictEqual({ role: 'assistant', content: 'shown' });
    expect(r.json).toMatchObject({ done: true, eval_count: 2 });
  });

  it('refuses what Ollama refuses: arguments as text, content as parts, a bad keep_alive', async () => {
    const s = await start();
    const args = await chat(s, { model: 'm', messages: [{ role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }] }] });
    expect(args.status).toBe(400);
    expect(args.json.error).toMatch(/cannot unmarshal string into Go struct field .*arguments/);
    expect((await chat(s, { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] })).json.error).toMatch(/cannot unmarshal array/);
    expect((await chat(s, { model: 'm', keep_alive: 'soon', messages: [ask('x')] })).json.error).toBe('time: invalid duration "soon"');
  });

  it('answers a prompt over num_ctx with the nested error under truncate false, and cuts old messages otherwise', async () => {
    const s = await start();
    const messages = [system, ask(text(400, 'old')), { role: 'assistant', content: 'ok' }, ask('[[say fits]]')];
    const refused = await chat(s, { model: 'm', truncate: false, options: { num_ctx: 3200 }, messages, stream: false });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.json.error).error).toMatchObject({ type: 'exceed_context_size_error', n_ctx: 3200 });
    expect(ollamaChat.decodeError(400, JSON.stringify(refused.json))).toMatchObject({ contextOverflow: true, type: 'exceed_context_size_error' });
    const cut = await chat(s, { model: 'm', options: { num_ctx: 3200 }, messages, stream: false });
    expect(cut.status).toBe(200);
    expect(cut.json.prompt_eval_count).toBeLessThanOrEqual(3200);
    expect(cut.json.message.content).toBe('fits');
  });

  it('plays the error directives in Ollama\'s shapes', async () => {
    const s = await start();
    const limited = await chat(s, { model: 'm', messages: [ask('[[error 429]]')] });
    expect(limited.status).toBe(429);
    expect(limited.json).toStrictEqual({ error: 'Simulated error 429 (asked for by [[error 429]]).' });
    expect(ollamaChat.decodeError(400, JSON.stringify((await chat(s, { model: 'm', messages: [ask('[[overflow]]')] })).json)).contextOverflow).toBe(true);
    const broken = await chat(s, { model: 'm', messages: [ask('[[say one two three four five six seven]] [[stream-error]]')] });
    expect(broken.status).toBe(200);
    expect(broken.lines.at(-1)).toStrictEqual({ error: expect.stringContaining('unexpected EOF') });
    expect(broken.lines.some((l) => l.done === true)).toBe(false);
    expect((await chat(s, { model: 'm', stream: false, messages: [ask('[[stream-error]]')] })).status).toBe(500);
  });
});

describe('ollama mode through the ollama-chat dialect (prompt_eval_ms is the cache check)', () => {
  const route = (s: Sim): DialectRoute => ({
    wire: 'ollama-chat', preset: 'ollama', provider: 'ollama', model: 'qwen3', baseUrl: s.origin,
    reasoningOut: 'reasoning', reasoningOnToolTurns: false, headers: {}, numCtx: 65536,
  });

  async function send(s: Sim, messages: NeutralMessage[]): Promise<NeutralReply> {
    const r = route(s);
    const encoded = ollamaChat.encodeRequest({ messages, model: 'qwen3', params: {}, tools: [] }, r, { bodyKey: false, headers: {} }, { stream: true, resolveImage: () => ({ mime: 'image/png', base64: '' }) });
    const res = await fetch(`${s.origin}${encoded.path}`, { method: 'POST', headers: encoded.headers, body: encoded.body });
    const decoder = ollamaChat.createStreamDecoder(r);
    const events = createEventDecoder(decoder.framing);
    for (const ev of events.push(new Uint8Array(await res.arrayBuffer()))) decoder.onEvent(ev);
    for (const ev of events.flush()) decoder.onEvent(ev);
    return decoder.finish();
  }

  it('reports a sub-second prompt_eval_ms when the prefix held, and a long one when it broke', async () => {
    const s = await start();
    const conversation: NeutralMessage[] = [{ role: 'system', content: text(6000, 'sys') }, { role: 'user', content: '[[call read {"path":"a.ts"}]]' }];
    const first = await send(s, conversation);
    expect(first.tool_calls?.[0]).toMatchObject({ name: 'read', arguments: '{"path":"a.ts"}' });
    expect(first.usage?.prompt_eval_ms).toBeGreaterThan(2000);
    const call = first.tool_calls?.[0];
    if (call === undefined) throw new Error('no call');
    conversation.push({ role: 'assistant', content: first.content, tool_calls: first.tool_calls }, { role: 'tool', tool_call_id: call.id, content: 'x = 1' });
    const warm = await send(s, conversation);
    expect(warm.usage?.prompt_eval_ms).toBeLessThan(1000);
    expect(warm.usage?.prompt_tokens).toBeGreaterThan(first.usage?.prompt_tokens ?? 0);
    expect(warm.usage).not.toHaveProperty('cached_tokens');

    const [, ...rest] = conversation;
    const broken = await send(s, [{ role: 'system', content: `[elided seq=1] ${text(6000, 'sys')}` }, ...rest]);
    expect(broken.usage?.prompt_eval_ms).toBeGreaterThan(2000);
  });
});
