/**
 * A tool loop that moves to Gemini 3 in the middle of a turn (a route switched, a fallback, a
 * client's /model): the calls another model made have no thought signature, and Gemini 3 answers
 * 400 for a step of the current turn whose first call comes back without one (the simulator's
 * Gemini API does, whoever made the call). The proxy gives such calls Google's stand-in
 * (docs/decisions/0031-a-stand-in-for-signatures-gemini-never-made.md), never to a model before
 * Gemini 3, and never in place of a signature Gemini gave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayAll } from './harness.js';
import { startWiresWorld, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: (tap) => `
[providers.gn]
preset = "gemini"
base_url = "${tap}/v1beta"
api_key_env = ""

[models.gem3]
provider = "gn"
model = "gemini-3.1-pro-preview"

[models.gem25]
provider = "gn"
model = "gemini-2.5-flash"

[models.chat]
provider = "oa"
model = "sim-model"
`,
  });
});
afterAll(async () => {
  await w?.close();
});

interface Msg { role: string; content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }
const TOOLS = [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { p: { type: 'string' } } } } }];

async function ask(model: string, messages: Msg[]): Promise<{ status: number; reply: Msg; text: string }> {
  const r = await fetch(`${w.proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages, tools: TOOLS }),
  });
  const text = await r.text();
  return { status: r.status, reply: r.ok ? (JSON.parse(text) as { choices: { message: Msg }[] }).choices[0]!.message : { role: 'assistant', content: null }, text };
}

const result = (call: Msg, text: string): Msg => ({ role: 'tool', tool_call_id: call.tool_calls![0]!.id, content: text });

type Part = { functionCall?: { name: string }; thoughtSignature?: string };
/** The first call's signature of each model content of the last Gemini request upstream. */
function firstCallSignatures(): (string | undefined)[] {
  const body = w.tap.requests.filter((x) => x.path.startsWith('/v1beta/models/')).at(-1)!.body as { contents: { role: string; parts: Part[] }[] };
  return body.contents.filter((c) => c.role === 'model').map((c) => c.parts.find((p) => p.functionCall !== undefined)?.thoughtSignature);
}

describe('a tool loop that moves to Gemini in the middle of a turn', () => {
  it('gives the calls another model made the stand-in on Gemini 3, keeps Gemini\'s own, and the bytes stay as sent', async () => {
    const opening: Msg[] = [{ role: 'user', content: 'go one [[call read {"p":"a"}]]' }];
    const a = await ask('chat', opening);
    expect(a.status).toBe(200);
    const m2 = [...opening, a.reply, result(a.reply, 'A [[call read {"p":"b"}]]')];
    const b = await ask('gem3', m2);
    expect(b.status, b.text).toBe(200);
    expect(firstCallSignatures()).toEqual(['skip_thought_signature_validator']);
    const firstBody = JSON.stringify(w.tap.requests.at(-1)!.body.contents);

    const m3 = [...m2, b.reply, result(b.reply, 'B [[say done]]')];
    const c = await ask('gem3', m3);
    expect(c.status, c.text).toBe(200);
    expect(c.reply.content).toBe('done');
    // The other model's call keeps its stand-in; Gemini's own call goes back with what Gemini gave.
    const sigs = firstCallSignatures();
    expect(sigs[0]).toBe('skip_thought_signature_validator');
    expect(sigs[1]).toMatch(/^[A-Za-z0-9+/=]{40,}$/);
    // The earlier request's contents are the start of this one's, byte for byte (Gemini's implicit cache reads them).
    expect(JSON.stringify(w.tap.requests.at(-1)!.body.contents).startsWith(firstBody.slice(0, -1))).toBe(true);
  });

  it('sends no stand-in to a model before Gemini 3, which asks for none', async () => {
    const opening: Msg[] = [{ role: 'user', content: 'go two [[call read {"p":"c"}]]' }];
    const a = await ask('chat', opening);
    const b = await ask('gem25', [...opening, a.reply, result(a.reply, 'C [[say done]]')]);
    expect(b.status, b.text).toBe(200);
    expect(firstCallSignatures()).toEqual([undefined]);
  });

  it('replays every request it logged', async () => {
    const r = await replayAll(w);
    expect(r.code, r.stderr + r.stdout.slice(0, 1000)).toBe(0);
  }, 60_000);
});
