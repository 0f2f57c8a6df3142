/**
 * The official Google Gen AI SDK (`@google/genai`) against the proxy, the simulator's native Gemini
 * mode upstream (strict about thought signatures: a changed, moved or missing one is its 400):
 * generate, stream, a function call answered and sent back with its signature, thoughts shown,
 * token counts (asked of the upstream, which speaks the client's wire).
 */
import { GoogleGenAI, type Content } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayAll } from './harness.js';
import { startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
let ai: GoogleGenAI;
beforeAll(async () => {
  w = await startWiresWorld({
    models: (tap) => `
[providers.gm]
preset = "gemini"
base_url = "${tap}/v1beta"
api_key_env = ""

[models.gm-main]
provider = "gm"
model = "gemini-3.1-pro-preview"

[models.gm-chat]
provider = "oa"
model = "sim-model"
`,
  });
  ai = new GoogleGenAI({ apiKey: 'gm-sdk-test', httpOptions: { baseUrl: w.proxy.url } });
}, 30_000);
afterAll(async () => {
  await w?.close();
});

const weather = { name: 'get_weather', description: 'The weather in a city.', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('the Gen AI SDK through the proxy', () => {
  it('generates', async () => {
    const res = await ai.models.generateContent({ model: 'gm-main', contents: 'Say [[say Bonjour.]]', config: { systemInstruction: 'Be brief.' } });
    expect(res.text).toBe('Bonjour.');
    expect(res.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
  });

  it('streams, through the native wire and through a chat wire', async () => {
    for (const model of ['gm-main', 'gm-chat']) {
      let text = '';
      let last: unknown;
      for await (const chunk of await ai.models.generateContentStream({ model, contents: 'Stream [[say one two three four five six.]]' })) {
        text += chunk.text ?? '';
        last = chunk;
      }
      expect(text, model).toBe('one two three four five six.');
      expect((last as { candidates: { finishReason: string }[] }).candidates[0]!.finishReason, model).toBe('STOP');
    }
  });

  it('calls a function with thoughts shown, and takes its result back with the signature on the call', async () => {
    const from = w.tap.requests.length;
    const config = { tools: [{ functionDeclarations: [weather] }], thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' as never } };
    const history: Content[] = [{ role: 'user', parts: [{ text: 'Weather? [[call get_weather {"city":"Paris"}]]' }] }];
    const first = await ai.models.generateContent({ model: 'gm-main', contents: history, config });
    const calls = first.functionCalls ?? [];
    expect(calls.map((c) => [c.name, c.args])).toStrictEqual([['get_weather', { city: 'Paris' }]]);
    const parts = first.candidates![0]!.content!.parts!;
    expect(parts.some((p) => p.thought === true && (p.text ?? '') !== '')).toBe(true);
    const signed = parts.find((p) => p.functionCall !== undefined)!;
    expect(typeof signed.thoughtSignature).toBe('string');
    history.push(first.candidates![0]!.content!, { role: 'user', parts: [{ functionResponse: { id: calls[0]!.id!, name: 'get_weather', response: { output: 'Sunny. [[say It is sunny in Paris.]]' } } }] });
    const second = await ai.models.generateContent({ model: 'gm-main', contents: history, config });
    expect(second.text).toBe('It is sunny in Paris.');
    const sent = wire(w, '/v1beta/models/gemini-3.1-pro-preview', from);
    expect(sent.map((r) => r.status)).toStrictEqual([200, 200]);
    // The upstream got its own signature back on the call that carried it.
    expect(JSON.stringify(sent[1]!.body)).toContain(JSON.stringify(signed.thoughtSignature));
  });

  it('counts tokens', async () => {
    const res = await ai.models.countTokens({ model: 'gm-main', contents: 'How many tokens is this?' });
    expect(res.totalTokens).toBeGreaterThan(0);
  });

  it('answers an unknown model in Google\'s error shape', async () => {
    await expect(ai.models.generateContent({ model: 'no-such-route', contents: 'hi' })).rejects.toThrow(/INVALID_ARGUMENT|NOT_FOUND|400|404/);
  });

  it('replays every request it logged', async () => {
    const result = await replayAll(w);
    expect(result.code, result.stderr).toBe(0);
  });
});
