/**
 * The Vercel AI SDK (`ai` 6 with `@ai-sdk/openai` and `@ai-sdk/anthropic`) as an agent built on it
 * runs: `generateText` and `streamText` with a tool, several steps, against the proxy. Its
 * `openai(model)` speaks the Responses API with `store` true by default, so from its second step on
 * it names its earlier replies' reasoning and text by `item_reference` instead of sending them:
 * the proxy answers those from its log (docs/inbound.md). `@ai-sdk/anthropic` and `@ai-sdk/google`
 * speak the Messages and Gemini endpoints. Each run must end as the directives say,
 * in one session that grew by appends, with each reply's reasoning given back upstream and each
 * request reading what the unchanged prefix allows from the simulator's cache.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool, type LanguageModel, type StepResult } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { readSessions, tag, until } from './harness.js';
import { expectPrefixReads } from './responses-client.js';
import { lines } from './wires-client.js';
import { breaksFinalThinkingRule, sessionWith, sseData, startWiresWorld, wire, type WiresWorld } from './wires-world.js';

/** Steps of each run: tool calls until the last, which says it is done. */
const STEPS = 6;

// The SDK warns on stdout of what it cannot know of a model the proxy names (its output limit).
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    sim: { replicas: 4, routing: 'random', seed: 23, requireReasoning: true },
    // Named as OpenAI's reasoning models are, so the SDK treats them as such (developer prompt, reasoning items).
    models: (tap) => `
[models."gpt-5-sim"]
provider = "rs"
model = "gpt-sim"
keep_reasoning = true

[models."gpt-5-ds"]
provider = "ds"
model = "deepseek-v4"

[models."gpt-5-claude"]
provider = "an"
model = "claude-sim"

[models.claude]
provider = "an"
model = "claude-sim"

[providers.gm]
preset = "gemini"
base_url = "${tap}/v1beta"
api_key_env = ""

[models.gemini-sim]
provider = "gm"
model = "gemini-3.1-pro-preview"
`,
  });
});
afterAll(async () => {
  await w?.close();
});

type Steps = StepResult<{ read_file: ReturnType<typeof readFile> }>[];

/** A read_file tool whose result carries the next step's directives, so the simulator calls it again. */
function readFile(t: string) {
  return tool({
    description: 'Read a file.',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => {
      const n = Number(path.split('/').at(-1)) + 1;
      const next = n >= STEPS - 1 ? '[[say all read]]' : `[[think step ${n} of ${t}]] [[say reading ${n}]] [[call read_file {"path":"${t}/${n}"}]]`;
      return `${path}\n${lines(150, `${t}-${n}`)}${next}`;
    },
  });
}

async function run(model: LanguageModel, t: string, stream: boolean, providerOptions?: Record<string, Record<string, never> | Record<string, unknown>>): Promise<Steps> {
  const args = {
    model,
    system: `${t} You are a careful agent.\n${lines(1200, `${t}-sys`)}`,
    prompt: `${t} find the loader [[think first of ${t}]] [[say looking]] [[call read_file {"path":"${t}/0"}]]`,
    tools: { read_file: readFile(t) },
    stopWhen: stepCountIs(STEPS + 2),
    maxRetries: 0,
    ...(providerOptions === undefined ? {} : { providerOptions: providerOptions as never }),
  };
  if (!stream) return (await generateText(args)).steps;
  let failed: unknown;
  const result = streamText({ ...args, onError: ({ error }) => { failed = error; } });
  await result.consumeStream();
  if (failed !== undefined) throw failed;
  return await result.steps;
}

/** The run ended as told, in one session of appends, and read its predecessor's prefix each step. */
function expectOneSession(steps: Steps, events: readonly LogEvent[], blocks: boolean): void {
  expect(steps.map((s) => s.finishReason)).toStrictEqual([...Array<string>(STEPS - 1).fill('tool-calls'), 'stop']);
  expect(steps.at(-1)!.text).toBe('all read');
  expect(events.filter((e) => e.type === 'llm.resp')).toHaveLength(STEPS);
  expect(events.filter((e) => e.type === 'client.rewrite' || e.type === 'llm.error')).toStrictEqual([]);
  expectPrefixReads(events, blocks);
}

/** The simulator's requests for this run: answered, and every reply of ours came back with its reasoning. */
function expectReasoningBack(t: string): void {
  const mine = w.sim.requests.filter((r) => r.sessionKey !== null && r.status !== 0).slice(-STEPS);
  expect(mine.map((r) => r.status)).toStrictEqual(Array<number>(STEPS).fill(200));
  const counts = mine.reduce((a, r) => ({ expected: a.expected + r.reasoning.expected, missing: a.missing + r.reasoning.missing + r.reasoning.wrongField }), { expected: 0, missing: 0 });
  // Request k holds the k earlier replies, each of which thought.
  expect(counts, t).toStrictEqual({ expected: (STEPS * (STEPS - 1)) / 2, missing: 0 });
}

describe('@ai-sdk/openai, the Responses API (store: true, its default)', () => {
  const openai = () => createOpenAI({ baseURL: `${w.proxy.url}/v1`, apiKey: 'sk-test' });

  for (const stream of [false, true]) {
    it(`a Responses upstream, ${stream ? 'streamText' : 'generateText'}: item references read from the log, encrypted reasoning given back`, async () => {
      const t = tag(`ai-rs-${stream ? 's' : 'g'}`);
      const from = w.tap.requests.length;
      const steps = await run(openai()('gpt-5-sim'), t, stream);
      // What the SDK sent from its second step on: references, not the items.
      const sent = steps.slice(1).map((s) => JSON.stringify(s.request.body));
      expect(sent.every((b) => b.includes('"item_reference"'))).toBe(true);
      const events = await sessionWith(w, t);
      expectOneSession(steps, events, true);
      // Each request after the first gave back every earlier reply's encrypted reasoning, as the upstream made it.
      const made = events.flatMap((e) => (e.type === 'llm.resp' ? (e.reply.blocks ?? []).map((b) => (b.data as { encrypted_content: string }).encrypted_content) : []));
      expect(made).toHaveLength(STEPS);
      const upstream = wire(w, '/v1/responses', from).map((r) => r.body as { input: { type?: string; encrypted_content?: string }[] });
      expect(upstream).toHaveLength(STEPS);
      upstream.forEach((body, k) => {
        const back = body.input.filter((i) => i.type === 'reasoning').map((i) => i.encrypted_content);
        expect(back).toStrictEqual(made.slice(0, k));
      });
    });
  }

  it('a chat upstream (DeepSeek): the referenced replies go back with their reasoning_content', async () => {
    const t = tag('ai-ds');
    const steps = await run(openai()('gpt-5-ds'), t, true);
    expect(JSON.stringify(steps[1]!.request.body)).toContain('"item_reference"');
    expectOneSession(steps, await sessionWith(w, t), true);
    expectReasoningBack(t);
  });

  it('an Anthropic upstream: signed thinking goes back on every step of the tool loop', async () => {
    const t = tag('ai-an');
    const from = w.tap.requests.length;
    const steps = await run(openai()('gpt-5-claude'), t, false, { openai: { reasoningEffort: 'low' } });
    expect(JSON.stringify(steps[1]!.request.body)).toContain('"item_reference"');
    expectOneSession(steps, await sessionWith(w, t), false);
    const sent = wire(w, '/anthropic/v1/messages', from);
    expect(sent).toHaveLength(STEPS);
    expect(sent.filter(breaksFinalThinkingRule)).toStrictEqual([]);
    expectReasoningBack(t);
  });

  it('store: false sends the items themselves, and the session is the same shape', async () => {
    const t = tag('ai-nostore');
    const steps = await run(openai()('gpt-5-sim'), t, true, { openai: { store: false } });
    expect(steps.slice(1).some((s) => JSON.stringify(s.request.body).includes('"item_reference"'))).toBe(false);
    expectOneSession(steps, await sessionWith(w, t), true);
  });
});

describe('@ai-sdk/openai, Chat Completions (openai.chat)', () => {
  it('a reasoning model\'s developer prompt, streamed, to a chat upstream: one session, reasoning_content back', async () => {
    const t = tag('ai-chat');
    const openai = createOpenAI({ baseURL: `${w.proxy.url}/v1`, apiKey: 'sk-test' });
    const steps = await run(openai.chat('gpt-5-ds'), t, true);
    // Named like a reasoning model, the SDK sends its system prompt as a developer message.
    expect(JSON.stringify(steps[0]!.request.body)).toContain('"role":"developer"');
    expectOneSession(steps, await sessionWith(w, t), true);
    expectReasoningBack(t);
  });
});

describe('item references the log does not hold', () => {
  const post = (input: unknown[]) => fetch(`${w.proxy.url}/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'gpt-5-sim', input }),
  });

  it('an id the proxy did not issue, a session it does not have, a reply with no such item: the API\'s 404, naming the item', async () => {
    const t = tag('ai-ref');
    // A real reply to name: text only, no calls.
    const first = await post([{ role: 'user', content: `${t} [[say hi]]` }]);
    expect(first.status).toBe(200);
    const reply = await first.json() as { id: string; output: { id: string; type: string }[] };
    const msg = reply.output.find((i) => i.type === 'message')!.id;
    const user = { role: 'user', content: `${t} [[say hi]]` };
    const cases = [
      'msg_not-ours',
      msg.replace(/_(\d+)_(\d+)$/, (_m, seq: string, i: string) => `_${Number(seq) + 100}_${i}`),
      msg.replace(/^msg_[^_]+/, 'msg_20200101T000000Z-00000000'),
      msg.replace(/^msg_/, 'fc_'),
    ];
    for (const id of cases) {
      const r = await post([user, { type: 'item_reference', id }, { role: 'user', content: 'again [[say ok]]' }]);
      expect(r.status, id).toBe(404);
      expect(await r.json()).toStrictEqual({ error: { message: `Item with id '${id}' not found.`, type: 'invalid_request_error', param: 'input[1]', code: 'item_not_found' } });
    }
    // The one the proxy issued is read from the log: the conversation goes on in the same session.
    const ok = await post([user, { type: 'item_reference', id: msg }, { role: 'user', content: `${t} again [[say ok]]` }]);
    expect(ok.status).toBe(200);
    const events = await sessionWith(w, t);
    expect(events.filter((e) => e.type === 'llm.resp')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'client.rewrite')).toStrictEqual([]);
  });
});

describe('a reply the client stopped', () => {
  /**
   * A chat UI's stop button: a streamed Responses request cut after its first text, the partial
   * reply kept. Its response id and message item id, and the partial reply as the log holds it.
   */
  async function stopped(t: string, user: Record<string, unknown>): Promise<{ responseId: string; itemId: string; partial: string }> {
    const stop = new AbortController();
    const res = await fetch(`${w.proxy.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-5-sim', input: [user], stream: true }), signal: stop.signal,
    });
    let gotText = false;
    let itemId: string | undefined;
    let responseId: string | undefined;
    const reader = res.body!.getReader();
    for (let got = ''; ;) {
      const { value } = await reader.read();
      got += new TextDecoder().decode(value);
      for (const ev of sseData(got.slice(0, got.lastIndexOf('\n\n') + 2))) {
        if (ev.type === 'response.created') responseId = (ev.response as { id: string }).id;
        if (ev.type === 'response.output_item.added' && (ev.item as { type: string }).type === 'message') itemId = (ev.item as { id: string }).id;
        if (ev.type === 'response.output_text.delta') gotText = true;
      }
      if (gotText) break;
    }
    stop.abort();
    expect(itemId).toMatch(/^msg_/);
    expect(responseId).toMatch(/^resp_/);
    const events = await until(async () => {
      const found = [...(await readSessions(w)).values()].find((e) => JSON.stringify(e).includes(t));
      return found?.some((e) => e.type === 'llm.resp' && e.aborted === true) === true ? found : undefined;
    }, 5000);
    const partial = events.find((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp')!.reply.content!;
    expect(partial.startsWith('word0')).toBe(true);
    return { responseId: responseId!, itemId: itemId!, partial };
  }
  const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

  it('its items name what the client received: a reference to its text goes on in the same session', async () => {
    const t = tag('ai-stop');
    const user = { role: 'user', content: `${t} [[slow 40]] [[say ${words}]]` };
    const { itemId, partial } = await stopped(t, user);

    // The next message names the stopped reply's text, as a store-true client keeps it.
    const next = await fetch(`${w.proxy.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-5-sim', input: [user, { type: 'item_reference', id: itemId }, { role: 'user', content: `${t} go on [[say ok]]` }] }),
    });
    expect(next.status, await next.clone().text()).toBe(200);
    // One session holds the tag (sessionWith throws on two): the same one, gone on.
    const after = await sessionWith(w, t);
    // The stopped reply, as the client holds it, then the new message: appended, not a rewrite.
    const msgs = after.filter((e): e is EventOf<'client.msg'> => e.type === 'client.msg').map((e) => e.msg);
    expect(msgs.at(-2)).toMatchObject({ role: 'assistant', content: partial });
    expect(after.filter((e) => e.type === 'client.rewrite')).toStrictEqual([]);
  });

  it('previous_response_id naming it goes on from what the client received, in the same session', async () => {
    const t = tag('ai-stop-prev');
    const { responseId, partial } = await stopped(t, { role: 'user', content: `${t} [[slow 40]] [[say ${words}]]` });
    const next = await fetch(`${w.proxy.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-5-sim', previous_response_id: responseId, input: [{ role: 'user', content: `${t} go on [[say ok]]` }] }),
    });
    expect(next.status, await next.clone().text()).toBe(200);
    expect(((await next.json()) as { previous_response_id: string }).previous_response_id).toBe(responseId);
    const after = await sessionWith(w, t);
    const msgs = after.filter((e): e is EventOf<'client.msg'> => e.type === 'client.msg').map((e) => e.msg);
    expect(msgs.slice(-2)).toMatchObject([{ role: 'assistant', content: partial }, { role: 'user', content: `${t} go on [[say ok]]` }]);
    expect(after.filter((e) => e.type === 'client.rewrite')).toStrictEqual([]);
  });
});

describe('@ai-sdk/anthropic, the Messages API', () => {
  it('thinking on, a tool loop: one session, signed thinking back on every step, the prefix read', async () => {
    const t = tag('ai-msg');
    const from = w.tap.requests.length;
    const anthropic = createAnthropic({ baseURL: `${w.proxy.url}/v1`, apiKey: 'sk-ant-test' });
    const steps = await run(anthropic('claude'), t, true, { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } });
    expectOneSession(steps, await sessionWith(w, t), false);
    const sent = wire(w, '/anthropic/v1/messages', from);
    expect(sent).toHaveLength(STEPS);
    expect(sent.filter(breaksFinalThinkingRule)).toStrictEqual([]);
    expectReasoningBack(t);
  });
});

describe('@ai-sdk/google, the Gemini API', () => {
  it('thoughts shown, a tool loop to a Gemini upstream: one session, each call\'s thought signature back where the upstream put it', async () => {
    const t = tag('ai-gm');
    const from = w.tap.requests.length;
    const google = createGoogleGenerativeAI({ baseURL: `${w.proxy.url}/v1beta`, apiKey: 'gm-test' });
    const steps = await run(google('gemini-sim'), t, true, { google: { thinkingConfig: { includeThoughts: true } } });
    const events = await sessionWith(w, t);
    expect(steps.map((s) => s.finishReason)).toStrictEqual([...Array<string>(STEPS - 1).fill('tool-calls'), 'stop']);
    expect(steps.at(-1)!.text).toBe('all read');
    expect(events.filter((e) => e.type === 'llm.resp')).toHaveLength(STEPS);
    expect(events.filter((e) => e.type === 'client.rewrite' || e.type === 'llm.error')).toStrictEqual([]);
    // The simulator refuses a call sent back without its signature, or with another: every step answered.
    const sent = wire(w, '/v1beta/', from);
    expect(sent.map((r) => r.status)).toStrictEqual(Array<number>(STEPS).fill(200));
    const signed = sent.slice(1).map((r) => JSON.stringify(r.body).match(/"thoughtSignature"/g)?.length ?? 0);
    expect(signed).toStrictEqual(Array.from({ length: STEPS - 1 }, (_, k) => k + 1));
    // Gemini's implicit cache has no key to route by (the simulator's replicas are picked at
    // random here), so the prefix is read on the wire: each request is the one before it, whole,
    // then the reply and the tool's result.
    type Body = { systemInstruction: unknown; tools: unknown; contents: unknown[] };
    const bodies = sent.map((r) => r.body as Body);
    bodies.slice(1).forEach((b, k) => {
      const before = bodies[k]!;
      expect([b.systemInstruction, b.tools]).toStrictEqual([before.systemInstruction, before.tools]);
      expect(b.contents.slice(0, before.contents.length)).toStrictEqual(before.contents);
      expect(b.contents).toHaveLength(before.contents.length + 2);
    });
  });
});
