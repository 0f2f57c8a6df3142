import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_SIGNATURE } from '../../src/sim/gemini.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { post, postStream, user } from './client.js';

let sim: Sim;
let base: string;
beforeAll(async () => {
  sim = await createSim();
  base = sim.urlFor('gemini');
});
afterAll(async () => {
  await sim.close();
});

type Msg = Record<string, unknown>;
interface Call {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: { google: { thought_signature: string } };
}
const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }];
const model = 'gemini-3-flash-preview';

async function ask(messages: Msg[], extra: Msg = {}) {
  const r = await post(sim, { model, tools, messages, ...extra }, { base });
  expect(r.status).toBe(200);
  return r.json.choices[0].message as Msg & { tool_calls?: Call[] };
}

const signatureOf = (call: Call | undefined) => call?.extra_content?.google.thought_signature;
const results = (calls: Call[], text: string): Msg[] => calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: i === calls.length - 1 ? text : 'r' }));

/** One turn of two steps: a parallel pair of calls, then one call; the history as the sim gave it. */
async function turn(t: string) {
  const start: Msg[] = [user(`${t} [[call read {"p":1}]] [[call read {"p":2}]]`)];
  const a1 = await ask(start);
  const h1 = [...start, { role: 'assistant', content: null, tool_calls: a1.tool_calls }, ...results(a1.tool_calls!, '[[call read {"p":3}]]')];
  const a2 = await ask(h1);
  const h2 = [...h1, { role: 'assistant', content: null, tool_calls: a2.tool_calls }, ...results(a2.tool_calls!, '[[say done]]')];
  return { a1, a2, h2 };
}

async function refused(messages: Msg[], text: RegExp, code: string): Promise<void> {
  const r = await post(sim, { model, tools, messages }, { base });
  expect(r.status).toBe(400);
  // Google's OpenAI endpoint answers with a list holding one error.
  expect(Array.isArray(r.json)).toBe(true);
  expect(r.json[0].error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(text) });
  expect(sim.requests.at(-1)).toMatchObject({ status: 400, error: code });
}

/** The history with message `i`'s calls replaced. */
function withCalls(h: Msg[], i: number, f: (calls: Call[]) => Call[]): Msg[] {
  return h.map((m, k) => (k === i ? { ...m, tool_calls: f(m.tool_calls as Call[]) } : m));
}
const unsigned = (c: Call): Call => ({ id: c.id, type: c.type, function: c.function });

describe('gemini replies', () => {
  it('sign the first call of each reply only, deterministically, and show no thinking unless asked', async () => {
    const { a1, a2 } = await turn('sign');
    expect(a1.tool_calls).toHaveLength(2);
    expect(signatureOf(a1.tool_calls![0])).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(a1.tool_calls![1]!.extra_content).toBeUndefined();
    expect(signatureOf(a2.tool_calls![0])).not.toBe(signatureOf(a1.tool_calls![0]));
    expect(a1.reasoning_content).toBeUndefined();
    const again = await ask([user('sign [[call read {"p":1}]] [[call read {"p":2}]]')]);
    expect(again.tool_calls).toEqual(a1.tool_calls);
    // Text replies have no calls, so nothing to sign.
    const plain = await ask([user('[[say hi]]')]);
    expect(plain.content).toBe('hi');
    expect(JSON.stringify(plain)).not.toContain('thought_signature');
  });

  it('show thought text when the request asks for it (google.thinking_config.include_thoughts, top level or extra_body)', async () => {
    const asked = { google: { thinking_config: { include_thoughts: true } } };
    const a = await ask([user('[[think plan the read]] [[call read {}]]')], asked);
    expect(a.reasoning_content).toBe('plan the read');
    const b = await ask([user('[[call read {}]]')], { extra_body: asked });
    expect(typeof b.reasoning_content).toBe('string');
    const c = await ask([user('[[think hidden]] [[call read {}]]')]);
    expect(c.reasoning_content).toBeUndefined();
    expect(sim.requests.at(-1)!.reasoningTokens).toBe(0);
  });

  it('a stream puts the signature on the first fragment of the first call', async () => {
    const body = { model, tools, messages: [user('stream [[call read {"p":1}]] [[call read {"p":2}]]')] };
    const whole = (await post(sim, body, { base })).json.choices[0].message;
    const s = await postStream(sim, body, { base });
    const fragments = s.events.filter((e) => e !== '[DONE]').flatMap((e) => e.choices[0]?.delta?.tool_calls ?? []);
    const first = fragments.find((f: { index: number }) => f.index === 0);
    expect(first.extra_content).toEqual(whole.tool_calls[0].extra_content);
    expect(fragments.filter((f: { extra_content?: unknown }) => f.extra_content !== undefined)).toHaveLength(1);
  });
});

describe('gemini thought signatures in the history', () => {
  it('back unchanged on every step: accepted, counted as returned', async () => {
    const { h2 } = await turn('back');
    const r = await post(sim, { model, tools, messages: h2 }, { base });
    expect(r.status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 2, dropped: 0, withText: 0 });
  });

  it('missing on a step of the current turn: 400 "Function call is missing a thought_signature"', async () => {
    const { h2 } = await turn('missing');
    await refused(withCalls(h2, 1, (calls) => calls.map(unsigned)), /Function call is missing a thought_signature in functionCall parts.*default_api:read.*position 1/, 'missing_thought_signature');
    await refused(withCalls(h2, 4, (calls) => calls.map(unsigned)), /missing a thought_signature/, 'missing_thought_signature');
  });

  it('missing in an earlier turn: accepted (only the current turn is validated), counted as dropped', async () => {
    const { h2 } = await turn('earlier');
    const later = [...withCalls(h2, 1, (calls) => calls.map(unsigned)), { role: 'assistant', content: 'done' }, user('next [[say ok]]')];
    expect((await post(sim, { model, tools, messages: later }, { base })).status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 1, dropped: 1, withText: 0 });
  });

  it('changed, moved to another call or message, or left on changed calls: 400 "Corrupted thought signature"', async () => {
    const { h2, a2 } = await turn('corrupt');
    const sig = signatureOf(a2.tool_calls![0])!;
    const resign = (c: Call, s: string): Call => ({ ...c, extra_content: { google: { thought_signature: s } } });
    const changed = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    await refused(withCalls(h2, 4, (calls) => [resign(calls[0]!, changed)]), /Corrupted thought signature/, 'corrupted_thought_signature');
    await refused(withCalls(h2, 1, (calls) => [resign(calls[0]!, sig), calls[1]!]), /Corrupted/, 'corrupted_thought_signature');
    await refused(withCalls(h2, 1, (calls) => [unsigned(calls[0]!), resign(calls[1]!, signatureOf(calls[0])!)]), /Corrupted.*position 1/, 'corrupted_thought_signature');
    await refused(withCalls(h2, 4, (calls) => [{ ...calls[0]!, function: { name: 'read', arguments: '{"p":4}' } }]), /Corrupted/, 'corrupted_thought_signature');
  });

  it('the SDKs\' skip_thought_signature_validator stands in for a missing one', async () => {
    const { h2 } = await turn('skip');
    const skipped = withCalls(h2, 4, (calls) => [{ ...unsigned(calls[0]!), extra_content: { google: { thought_signature: SKIP_SIGNATURE } } }]);
    expect((await post(sim, { model, tools, messages: skipped }, { base })).status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toMatchObject({ returned: 1, dropped: 1 });
  });

  it('calls the simulator did not make need one too in the current turn (the stand-in passes), none in an earlier turn', async () => {
    const call = { id: 'call_elsewhere', type: 'function', function: { name: 'read', arguments: '{}' } };
    const foreign = [user('x'), { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_elsewhere', content: '[[say fine]]' }];
    expect((await post(sim, { model, tools, messages: foreign }, { base })).status).toBe(400);
    const standIn = [foreign[0], { role: 'assistant', content: null, tool_calls: [{ ...call, extra_content: { google: { thought_signature: SKIP_SIGNATURE } } }] }, foreign[2]];
    expect((await post(sim, { model, tools, messages: standIn }, { base })).status).toBe(200);
    expect(sim.requests.at(-1)!.opaque).toEqual({ returned: 0, dropped: 0, withText: 0 });
    expect((await post(sim, { model, tools, messages: [...foreign, { role: 'assistant', content: 'ok' }, user('again')] }, { base })).status).toBe(200);
  });

  it('a streamed reply\'s signature, sent back: accepted', async () => {
    const start = [user('streamed back [[call read {"p":7}]]')];
    const s = await postStream(sim, { model, tools, messages: start }, { base });
    const first = s.events.filter((e) => e !== '[DONE]').flatMap((e) => e.choices[0]?.delta?.tool_calls ?? [])[0];
    const call = { id: first.id, type: 'function', function: { name: 'read', arguments: '{"p":7}' }, extra_content: first.extra_content };
    const r = await post(sim, { model, tools, messages: [...start, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: first.id, content: 'ok' }] }, { base });
    expect(r.status).toBe(200);
    expect(sim.stats().opaque.returned).toBeGreaterThan(0);
  });
});
