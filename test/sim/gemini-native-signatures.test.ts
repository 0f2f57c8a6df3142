/**
 * Thought signatures on the native Gemini wire: they come back unchanged and in place, or the
 * request is a 400 INVALID_ARGUMENT, as the API answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { generate, user, type Json } from './gemini-client.js';

let sim: Sim;
beforeAll(async () => {
  sim = await createSim();
});
afterAll(async () => {
  await sim.close();
});

const ask = (contents: Json[]) => generate(sim, { contents });
const results = (parts: Json[], last: string): Json => ({
  role: 'user',
  parts: parts.filter((p) => p.functionCall !== undefined).map((p, i, all) => ({ functionResponse: { name: p.functionCall.name, response: { output: i === all.length - 1 ? last : 'r' } } })),
});

/** A turn of two steps (a parallel pair of calls, then one call), the history as the sim gave it. */
async function turn(t: string): Promise<Json[]> {
  const start = [user(`${t} [[call read {"p":1}]] [[call read {"p":2}]]`)];
  const a1 = (await ask(start)).json.candidates[0].content;
  const h1 = [...start, a1, results(a1.parts, '[[call read {"p":3}]]')];
  const a2 = (await ask(h1)).json.candidates[0].content;
  return [...h1, a2, results(a2.parts, '[[say done]]')];
}

const expect400 = async (contents: Json[], match: RegExp) => {
  const r = await ask(contents);
  expect(r.status).toBe(400);
  expect(r.json).toEqual({ error: { code: 400, message: expect.stringMatching(match), status: 'INVALID_ARGUMENT' } });
};

describe('thought signatures', () => {
  it('pass when sent back exactly, and are counted', async () => {
    const history = await turn('t1');
    const r = await ask(history);
    expect(r.status).toBe(200);
    expect(sim.geminiRequests.at(-1)!.signatures.returned).toBe(2);
  });

  it('a changed signature is a 400', async () => {
    const history = await turn('t2');
    const sig: string = history[1]!.parts[0].thoughtSignature;
    history[1]!.parts[0].thoughtSignature = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    await expect400(history, /Corrupted thought signature/);
  });

  it('a signature moved to the other call of the pair is a 400', async () => {
    const history = await turn('t3');
    const parts = history[1]!.parts;
    parts[1].thoughtSignature = parts[0].thoughtSignature;
    delete parts[0].thoughtSignature;
    await expect400(history, /does not belong to this part|missing a thought_signature/);
  });

  it('a signature moved onto a call with other arguments is a 400', async () => {
    const history = await turn('t4');
    history[1]!.parts[0].functionCall.args = { p: 9 };
    await expect400(history, /does not belong to this part/);
  });

  it('a signature on a user part is a 400', async () => {
    const history = await turn('t5');
    history[0]!.parts[0].thoughtSignature = history[1]!.parts[0].thoughtSignature;
    await expect400(history, /model turn/);
  });

  it("a signed call of the current turn sent back without it is Gemini 3's 400", async () => {
    const history = await turn('t6');
    delete history[3]!.parts[0].thoughtSignature;
    await expect400(history, /Function call is missing a thought_signature in functionCall parts.*position 4/s);
  });

  it('earlier turns may drop them; the skip sentinel passes', async () => {
    const first = await turn('t7');
    for (const c of first) for (const p of c.parts) delete p.thoughtSignature;
    const next = [...first, { role: 'model', parts: [{ text: 'ok' }] }, user('again')];
    expect((await ask(next)).status).toBe(200);
    expect(sim.geminiRequests.at(-1)!.signatures.dropped).toBe(2);
    const history = await turn('t8');
    history[3]!.parts[0].thoughtSignature = 'skip_thought_signature_validator';
    expect((await ask(history)).status).toBe(200);
  });

  it('Gemini 3 asks a signature of every step\'s first call in the current turn, whoever made it; 2.5 does not', async () => {
    // A call this simulator never made (another model's, a history brought from elsewhere).
    const foreign = [user('go'), { role: 'model', parts: [{ functionCall: { name: 'read', args: { p: 9 } } }] }, { role: 'user', parts: [{ functionResponse: { name: 'read', response: { output: 'r' } } }] }];
    await expect400(foreign, /Function call is missing a thought_signature.*position 2/s);
    expect((await generate(sim, { contents: foreign }, 'gemini-2.5-flash')).status).toBe(200);
    const standIn = structuredClone(foreign);
    standIn[1]!.parts[0].thoughtSignature = 'skip_thought_signature_validator';
    expect((await ask(standIn)).status).toBe(200);
    // In an earlier turn it may go without.
    expect((await ask([...foreign, { role: 'model', parts: [{ text: 'ok' }] }, user('again')])).status).toBe(200);
  });

  it('key order of the arguments does not matter (a Struct has none)', async () => {
    const start = [user('k [[call edit {"a":1,"b":2}]]')];
    const a1 = (await ask(start)).json.candidates[0].content;
    a1.parts[0].functionCall.args = { b: 2, a: 1 };
    expect((await ask([...start, a1, results(a1.parts, 'x')])).status).toBe(200);
  });

  it('a text signature survives streamed text joined into one part, and the thought summary dropped', async () => {
    const start = [user('s [[think plan it]] [[say a long answer that the stream sends in more than one piece]]')];
    const r = await fetch(`${sim.origin}/v1beta/models/m:streamGenerateContent?alt=sse`, { method: 'POST', body: JSON.stringify({ contents: start, generationConfig: { thinkingConfig: { includeThoughts: true } } }) });
    const chunks = (await r.text()).split('\r\n\r\n').filter((f) => f !== '').map((f) => JSON.parse(f.slice(6)) as Json);
    const parts: Json[] = chunks.flatMap((c) => c.candidates[0].content.parts);
    const answer = parts.filter((p) => p.thought !== true);
    const joined = { text: answer.map((p) => p.text).join(''), thoughtSignature: answer[0]!.thoughtSignature };
    expect(joined.thoughtSignature).toBeDefined();
    const ok = await generate(sim, { contents: [...start, { role: 'model', parts: [joined] }, user('next')] }, 'm');
    expect(ok.status).toBe(200);
    expect(sim.geminiRequests.at(-1)!.signatures.returned).toBe(1);
  });
});
