import { afterEach, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';
import { fixedClock, text } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(opts: SimOptions = {}): Promise<Sim> {
  sim = await createSim({ clock: fixedClock, ...opts });
  return sim;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export async function respond(s: Sim, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number; json: Json; events: { event: string; data: Json }[] }> {
  const res = await fetch(`${s.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const raw = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('event-stream')) return { status: res.status, json: JSON.parse(raw), events: [] };
  const events = raw.split('\n\n').filter((f) => f !== '').map((frame) => {
    const [eventLine, dataLine] = frame.split('\n');
    return { event: (eventLine ?? '').slice('event: '.length), data: JSON.parse((dataLine ?? '').slice('data: '.length)) as Json };
  });
  return { status: res.status, json: null, events };
}

const user = (t: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: t }] });
const instructions = text(1500, 'sys');
const cachedOf = (json: Json): number => json.usage.input_tokens_details.cached_tokens;

describe('responses mode: prefix cache and session routing', () => {
  it('reports usage in Responses fields; an extension reads the whole previous prompt, an early change none', async () => {
    const s = await start();
    const a = await respond(s, { model: 'gpt-5.6', store: false, instructions, input: [user(`${text(700, 'u')} [[say noted]]`)] });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'noted' }] }] });
    const t1 = a.json.usage.input_tokens as number;
    expect(a.json.usage).toStrictEqual({ input_tokens: t1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: t1 + 2 });

    const next = [user(`${text(700, 'u')} [[say noted]]`), { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'noted' }] }, user('and?')];
    const b = await respond(s, { model: 'gpt-5.6', store: false, instructions, input: next });
    expect(cachedOf(b.json)).toBe(Math.floor(t1 / 128) * 128);
    const c = await respond(s, { model: 'gpt-5.6', store: false, instructions: `X${instructions.slice(1)}`, input: next });
    expect(cachedOf(c.json)).toBe(0);
  });

  it('keeps a session on one replica by prompt_cache_key or Codex\'s session-id header; without one, random routing misses', async () => {
    const s = await start({ replicas: 8, routing: 'random', seed: 3 });
    const body = { model: 'm', store: false, instructions, input: [user('same')] };
    const keyed = [];
    for (let i = 0; i < 4; i++) keyed.push(cachedOf((await respond(s, { ...body, prompt_cache_key: 'sess-1' })).json));
    expect(keyed.slice(1).every((c) => c > 1024)).toBe(true);
    const byHeader = [];
    for (let i = 0; i < 3; i++) byHeader.push(cachedOf((await respond(s, body, { 'session-id': 'sess-2' })).json));
    expect(byHeader.slice(1).every((c) => c > 1024)).toBe(true);
    s.reset();
    const keyless = [];
    for (let i = 0; i < 6; i++) keyless.push(cachedOf((await respond(s, body)).json));
    expect(keyless.filter((c) => c === 0).length).toBeGreaterThan(1);
  });
});

describe('responses mode: reasoning items', () => {
  const ask = { model: 'gpt-5.6', store: false, include: ['reasoning.encrypted_content'], reasoning: { effort: 'high', summary: 'auto', context: 'all_turns' } };

  async function toolRound(s: Sim) {
    const r = await respond(s, { ...ask, instructions, input: [user('[[think read it first]] [[call read {"p":1}]]')] });
    expect(r.status).toBe(200);
    return r.json.output as Json[];
  }

  it('calls no function under tool_choice "none": the directive is answered with text', async () => {
    const s = await start();
    const tools = [{ type: 'function', name: 'read', parameters: { type: 'object' } }];
    const none = await respond(s, { ...ask, instructions, tools, tool_choice: 'none', input: [user('[[call read {"p":1}]]')] });
    expect(none.status).toBe(200);
    expect((none.json.output as Json[]).map((o) => o.type)).toStrictEqual(['reasoning', 'message']);
    const auto = await respond(s, { ...ask, instructions, tools, input: [user('[[call read {"p":1}]]')] });
    expect((auto.json.output as Json[]).map((o) => o.type)).toStrictEqual(['reasoning', 'function_call']);
  });

  it('returns a reasoning item with its summary and encrypted content, before the call', async () => {
    const s = await start();
    const output = await toolRound(s);
    expect(output.map((o) => o.type)).toStrictEqual(['reasoning', 'function_call']);
    expect(output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'read it first' }] });
    expect(output[0].encrypted_content).toMatch(/^[A-Za-z0-9_-]{60,}$/);
    const plain = await respond(s, { model: 'm', store: false, reasoning: { effort: 'low' }, input: [user('hi')] });
    expect(plain.json.output[0]).toMatchObject({ type: 'reasoning', summary: [] });
    expect(plain.json.output[0]).not.toHaveProperty('encrypted_content');
    expect(plain.json.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('takes the item back unchanged, refuses it changed (400) or with its id under store false (404)', async () => {
    const s = await start();
    const [reasoning, call] = await toolRound(s);
    const { id: _id, ...item } = reasoning;
    const input = (r: Json) => [user('[[think read it first]] [[call read {"p":1}]]'), r, call, { type: 'function_call_output', call_id: call.call_id, output: 'data' }];
    const { id: _fc, status: _st, ...fc } = call;
    const ok = await respond(s, { ...ask, instructions, input: [user('[[think read it first]] [[call read {"p":1}]]'), item, fc, { type: 'function_call_output', call_id: call.call_id, output: 'data' }] });
    expect(ok.status).toBe(200);

    const enc = item.encrypted_content as string;
    const changed = await respond(s, { ...ask, instructions, input: input({ ...item, encrypted_content: `${enc.slice(0, 40)}${enc[40] === 'A' ? 'B' : 'A'}${enc.slice(41)}` }).map((x) => ({ ...x, id: undefined })) });
    expect(changed.status).toBe(400);
    expect(changed.json.error).toMatchObject({ code: 'invalid_encrypted_content', param: 'input[1].encrypted_content' });

    const withId = await respond(s, { ...ask, instructions, input: input(reasoning) });
    expect(withId.status).toBe(404);
    expect(withId.json.error.message).toMatch(/Items are not persisted when `store` is set to false/);
  });

  it('all_turns keeps the earlier turn\'s reasoning in the prompt; current_turn drops it, and the cache misses from there', async () => {
    for (const [context, full] of [['all_turns', true], ['current_turn', false]] as const) {
      const s = await start();
      const reasoning = { effort: 'high', summary: 'auto', context };
      const first = await respond(s, { ...ask, reasoning, instructions, input: [user(`${text(600, 'q')} [[think about it]] [[say done]]`)] });
      const { id: _r, ...item } = first.json.output[0];
      const turn1 = [user(`${text(600, 'q')} [[think about it]] [[say done]]`), item, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] }];
      // The last request of turn 1 (its reasoning is the current turn's), then turn 2's first.
      const last = await respond(s, { ...ask, reasoning, instructions, input: [...turn1, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: text(300, 'r') }] });
      const lastTokens = last.json.usage.input_tokens as number;
      const turn2 = await respond(s, { ...ask, reasoning, instructions, input: [...turn1, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: text(300, 'r') }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }, user('next')] });
      if (full) expect(cachedOf(turn2.json)).toBe(Math.floor(lastTokens / 128) * 128);
      else expect(cachedOf(turn2.json)).toBeLessThan(lastTokens - 128);
      await s.close();
      sim = undefined;
    }
  });

  it('streams the API\'s events: the encrypted content complete only in output_item.done', async () => {
    const s = await start();
    const r = await respond(s, { ...ask, stream: true, input: [user('[[think weigh it]] [[say hello there, this is long enough]]')] });
    const types = r.events.map((e) => e.event);
    expect(types.slice(0, 3)).toStrictEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.at(-1)).toBe('response.completed');
    expect(r.events.every((e, i) => e.data.type === e.event && e.data.sequence_number === i)).toBe(true);
    const added = r.events.find((e) => e.event === 'response.output_item.added')?.data.item;
    const doneItem = r.events.find((e) => e.event === 'response.output_item.done')?.data.item;
    expect(doneItem.encrypted_content.startsWith(added.encrypted_content)).toBe(true);
    expect(doneItem.encrypted_content.length).toBeGreaterThan(added.encrypted_content.length);
    const text1 = r.events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(text1).toBe('hello there, this is long enough');
    expect(r.events.at(-1)?.data.response.output).toHaveLength(2);
  });
});

describe('responses mode: rules and directives', () => {
  it('refuses an output without its call and a call without its output, as the API words them', async () => {
    const s = await start();
    const orphan = await respond(s, { model: 'm', store: false, input: [user('x'), { type: 'function_call_output', call_id: 'c9', output: 'r' }] });
    expect(orphan.status).toBe(400);
    expect(orphan.json.error.message).toBe('No tool call found for function call output with call_id c9.');
    const open = await respond(s, { model: 'm', store: false, input: [user('x'), { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, user('y')] });
    expect(open.json.error.message).toBe('No tool output found for function call c1.');
  });

  it('plays [[error]], [[overflow]], [[stream-error]] and max_output_tokens', async () => {
    const s = await start();
    expect((await respond(s, { model: 'm', input: [user('[[error 429]]')] })).status).toBe(429);
    const overflow = await respond(s, { model: 'm', input: [user('[[overflow]]')] });
    expect(overflow.json.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    const broken = await respond(s, { model: 'm', stream: true, input: [user('[[say one two three four five six seven eight]] [[stream-error]]')] });
    expect(broken.events.at(-1)).toMatchObject({ event: 'error', data: { type: 'error', code: 'stream_error' } });
    expect(broken.events.some((e) => e.event === 'response.completed')).toBe(false);
    const cut = await respond(s, { model: 'm', max_output_tokens: 3, input: [user('[[len 10]]')] });
    expect(cut.json).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('checks the API key when the simulator has one', async () => {
    const s = await start({ apiKey: 'sk-sim' });
    expect((await respond(s, { model: 'm', input: 'hi' })).status).toBe(401);
    expect((await respond(s, { model: 'm', input: 'hi' }, { authorization: 'Bearer sk-sim' })).status).toBe(200);
  });
});
