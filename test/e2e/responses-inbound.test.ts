/**
 * Clients that speak the Responses API (`POST /v1/responses`) through the proxy, with the official
 * `openai` client's `responses.create`, to every upstream wire through the same neutral request,
 * log and window: a Responses upstream (encrypted reasoning asked for, given to the client as the
 * upstream made it, and given back upstream from the log, byte for byte, whatever the client
 * echoes), a chat upstream (DeepSeek mode) and Anthropic's. Then previous_response_id, and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { LogEvent } from '../../src/core/events.js';
import { readSessions, replayAll, tag } from './harness.js';
import { calls, expectPrefixReads, functionLoop, respond } from './responses-client.js';
import { responsesReasoning, sessionWith, sseData, startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    sim: { replicas: 4, routing: 'random', seed: 11 },
    models: `
[models.gpt]
provider = "rs"
model = "gpt-sim"
keep_reasoning = true

[models.gpt-plain]
provider = "rs"
model = "gpt-sim"

[models.gpt-other]
provider = "rs"
model = "gpt-sim-other"
keep_reasoning = true

[models.ds]
provider = "ds"
model = "deepseek-v4"

[models.claude]
provider = "an"
model = "claude-sim"
`,
  });
});
afterAll(async () => {
  await w?.close();
});

interface Encrypted {
  encrypted_content?: string | null;
}

describe('one response', () => {
  it('non-stream: a response object with its output text, items and every usage count', async () => {
    const t = tag('ri-one');
    const r = await respond(w, { model: 'gpt', input: `${t} [[say Hello from the proxy.]]` }, false);
    expect(r.text).toBe('Hello from the proxy.');
    expect(r.id).toMatch(/^resp_.+_\d+$/);
    expect(r.output.map((i) => i.type)).toStrictEqual(['reasoning', 'message']);
    // Not asked for: no encrypted content reaches the client.
    expect((r.output[0] as Encrypted).encrypted_content).toBeUndefined();
    expect(r.usage).toMatchObject({ input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: expect.any(Number) } });
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  });

  it('stream: the API event order, text deltas, reasoning summary events, completed with usage', async () => {
    const t = tag('ri-stream');
    const r = await respond(w, { model: 'gpt', input: `${t} [[say A streamed answer that is split into pieces.]]` }, true);
    expect(r.text).toBe('A streamed answer that is split into pieces.');
    const types = [...new Set(r.events)];
    expect(types).toStrictEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done',
      'response.output_item.done', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done',
      'response.content_part.done', 'response.completed',
    ]);
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
  });

  it('function call arguments stream as deltas, then done', async () => {
    const t = tag('ri-args');
    const r = await respond(w, { model: 'ds', input: `${t} [[call grep {"pattern":"a long pattern to split"}]]`, tools: [{ type: 'function', name: 'grep', parameters: { type: 'object' }, strict: false }] }, true);
    expect(r.events).toContain('response.function_call_arguments.delta');
    expect(r.events).toContain('response.function_call_arguments.done');
    expect(calls(r.output).map((c) => [c.name, c.arguments])).toStrictEqual([['grep', '{"pattern":"a long pattern to split"}']]);
  });
});

describe('a function-call loop to each upstream wire', () => {
  it('Responses upstream: encrypted reasoning reaches the client as made, goes back from the log whatever the client echoes', async () => {
    const t = tag('ri-rs');
    const from = w.tap.requests.length;
    // The client mangles every encrypted item it echoes: the simulator would refuse it (400).
    const echo = (item: OpenAI.Responses.ResponseOutputItem): OpenAI.Responses.ResponseInputItem =>
      (item.type === 'reasoning' ? { ...item, encrypted_content: 'tampered' } : item) as OpenAI.Responses.ResponseInputItem;
    const replies = await functionLoop(w, 'gpt', t, { rounds: 6, echo });
    const up = wire(w, '/v1/responses', from);
    expect(up.map((r) => r.status)).toStrictEqual([200, 200, 200, 200, 200, 200]);
    const made = up.map((r) => responsesReasoning(r.response)[0] as Encrypted);
    replies.forEach((r, k) => {
      const item = r.output.find((i) => i.type === 'reasoning') as Encrypted;
      expect(item.encrypted_content).toBe(made[k]!.encrypted_content);
      expect(item.encrypted_content).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    });
    up.forEach((req, k) => {
      const back = (req.body.input as { type: string; encrypted_content?: string }[]).filter((i) => i.type === 'reasoning');
      expect(back.map((i) => i.encrypted_content)).toStrictEqual(made.slice(0, k).map((m) => m.encrypted_content));
    });
    expect(replies.at(-1)!.text).toBe('done');
    expectPrefixReads(await sessionWith(w, `${t}-sys`), true);
  });

  it('chat upstream (DeepSeek mode): the same loop, reasoning shown as summaries, no encrypted content', async () => {
    const t = tag('ri-ds');
    const from = w.tap.requests.length;
    const replies = await functionLoop(w, 'ds', t, { rounds: 6 });
    expect(wire(w, '/deepseek/v1/chat/completions', from).map((r) => r.status)).toStrictEqual([200, 200, 200, 200, 200, 200]);
    for (const r of replies) for (const item of r.output) if (item.type === 'reasoning') expect((item as Encrypted).encrypted_content).toBeUndefined();
    expect(replies.at(-1)!.text).toBe('done');
    expectPrefixReads(await sessionWith(w, `${t}-sys`), true);
  });

  it('Anthropic upstream: the same loop, every request reads its predecessor whole', async () => {
    const t = tag('ri-an');
    const from = w.tap.requests.length;
    const replies = await functionLoop(w, 'claude', t, { rounds: 6 });
    expect(wire(w, '/anthropic/v1/messages', from).map((r) => r.status)).toStrictEqual([200, 200, 200, 200, 200, 200]);
    expect(replies.at(-1)!.text).toBe('done');
    expectPrefixReads(await sessionWith(w, `${t}-sys`), false);
  });
});

describe('encrypted reasoning goes back only to its origin', () => {
  it('another model of the conversation gets none of it; moved back, the first gets it again', async () => {
    const t = tag('ri-origin');
    const tools = [{ type: 'function' as const, name: 'read_file', parameters: { type: 'object' }, strict: false }];
    const base = { instructions: `${t} agent`, tools, store: false, prompt_cache_key: t, include: ['reasoning.encrypted_content' as const] };
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: `${t} [[call read_file {"p":1}]]` }];
    const from = w.tap.requests.length;
    const first = await respond(w, { ...base, model: 'gpt', input: [...input] }, true);
    const made = (first.output.find((i) => i.type === 'reasoning') as Encrypted).encrypted_content;
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: calls(first.output)[0]!.call_id, output: '[[call read_file {"p":2}]]' });
    const second = await respond(w, { ...base, model: 'gpt-other', input: [...input] }, false);
    input.push(...(second.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: calls(second.output)[0]!.call_id, output: '[[say back]]' });
    await respond(w, { ...base, model: 'gpt', input: [...input] }, false);
    const up = wire(w, '/v1/responses', from);
    expect(up.map((r) => r.status)).toStrictEqual([200, 200, 200]);
    const reasoningSent = (k: number) => (up[k]!.body.input as { type: string; encrypted_content?: string }[]).filter((i) => i.type === 'reasoning').map((i) => i.encrypted_content);
    expect(reasoningSent(1)).toStrictEqual([]);
    // Back on the first model: its own item comes back, the other model's does not.
    expect(reasoningSent(2)).toStrictEqual([made]);
  });
});

describe('previous_response_id', () => {
  it('continues the session that made the response, from its log; an older one forks it', async () => {
    const t = tag('ri-prev');
    const tools = [{ type: 'function' as const, name: 'read_file', parameters: { type: 'object' }, strict: false }];
    const first = await respond(w, { model: 'gpt-plain', instructions: `${t} agent`, input: `${t} [[call read_file {"p":1}]]`, tools }, false);
    const call = calls(first.output)[0]!;
    const from = w.tap.requests.length;
    const second = await respond(w, { model: 'gpt-plain', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '[[say read it]]' }], tools }, true);
    expect(second.text).toBe('read it');
    // Upstream, the whole conversation: the proxy's log stood in for OpenAI's storage.
    const sent = wire(w, '/v1/responses', from)[0]!.body.input as { type: string; call_id?: string }[];
    expect(sent.map((i) => i.type)).toStrictEqual(['message', 'function_call', 'function_call_output']);
    const events = await sessionWith(w, `${t} agent`);
    expect(events.filter((e) => e.type === 'llm.req')).toHaveLength(2);
    expect(second.id.startsWith(first.id.slice(0, first.id.lastIndexOf('_')))).toBe(true);

    // Branching from the first response again: a fork of that session, not a third turn in it.
    const third = await respond(w, { model: 'gpt-plain', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '[[say other]]' }], tools }, false);
    expect(third.text).toBe('other');
    const holding = [...(await readSessions(w)).entries()].filter(([, ev]) => JSON.stringify(ev).includes(`${t} agent`));
    expect(holding).toHaveLength(2);
    const parentOf = (ev: LogEvent[]) => (ev[0]?.type === 'session.start' ? ev[0].parent?.session : undefined);
    const fork = holding.find(([, ev]) => parentOf(ev) !== undefined)!;
    const origin = holding.find(([, ev]) => parentOf(ev) === undefined)!;
    expect(origin[1].filter((e) => e.type === 'llm.req')).toHaveLength(2);
    expect(parentOf(fork[1])).toBe(origin[0]);
  });

  it('a client retry of the last request is answered from the log under the same response id', async () => {
    const t = tag('ri-retry');
    const body = { model: 'gpt', input: `${t} [[say once]]`, prompt_cache_key: t, include: ['reasoning.encrypted_content' as const] };
    const a = await respond(w, body, false);
    const from = w.tap.requests.length;
    const b = await respond(w, body, true, { 'x-stainless-retry-count': '1' });
    expect(w.tap.requests.length).toBe(from);
    expect([b.id, b.text]).toStrictEqual([a.id, 'once']);
    expect(b.output).toStrictEqual(a.output);
  });

  it('an id the proxy did not issue, or whose reply is not logged, is a 400 naming the field', async () => {
    for (const id of ['resp_abc', 'resp_20990101T000000Z-00000000_7']) {
      const err = await w.client.responses.create({ model: 'gpt', input: 'hi', previous_response_id: id }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('previous_response_not_found');
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    }
  });
});

describe('errors in the Responses shapes', () => {
  it('a bad body is a 400 naming the field, before any upstream call', async () => {
    const from = w.tap.requests.length;
    const err = await w.client.responses.create({ model: 'gpt', input: [{ type: 'function_call_output', output: 'x' } as never] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[0].call_id');
    expect(w.tap.requests.length).toBe(from);
  });

  it('an upstream error before the stream keeps its status; one mid-stream is an error event, then response.failed', async () => {
    const t = tag('ri-err');
    const status = await w.client.responses.create({ model: 'gpt', input: `${t} [[error 503]]` }).catch((e: { status?: number }) => e.status);
    expect(status).toBe(503);
    const res = await fetch(`${w.proxy.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt', stream: true, input: `${t} [[say some words first]] [[stream-error]]` }),
    });
    const events = sseData(await res.text());
    const tail = events.slice(-2);
    expect(tail.map((e) => e.type)).toStrictEqual(['error', 'response.failed']);
    expect((tail[1]!.response as { status: string; error: { code: string } })).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });
    expect(events[0]!.type).toBe('response.created');
  });
});

describe('the log', () => {
  it('replays every request of every session', async () => {
    const r = await replayAll(w);
    expect(r.code, r.stderr).toBe(0);
  });
});
