/**
 * Gemini end to end (official client -> proxy -> tap -> simulator's gemini mode, which answers 400
 * when a call of its own in the current turn comes back without its thought signature, or with
 * one that changed or moved): signatures go back on the first call of the reply they came with;
 * a conversation that moves to OpenRouter and back sends neither upstream the other's opaque
 * reasoning, and each gets its own back where it was; a window that elides refuses nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { fileContent, runAgent } from '../../bench/agent.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { readSessions, replayAll, tag } from './harness.js';
import { assistantsOf, exchanges, sseData, startReasoningWorld, type Exchange, type ReasoningWorld } from './reasoning-world.js';

let w: ReasoningWorld;
beforeAll(async () => {
  w = await startReasoningWorld(`
[models.gem]
provider = "gm"
model = "gemini-3-flash-preview"

[models.orm]
provider = "or"
model = "meta/muse-spark-1.3"

[models.gem-small]
provider = "gm"
model = "gemini-3-flash-preview"
context = 9000
output_reserve = 1000
max_result_tokens = 2000
`);
});
afterAll(async () => {
  await w?.close();
});

/** What one upstream reply streamed: the signature on each call (index -> signature), and its reasoning_details. */
function streamedReply(ex: Exchange): { signatures: Map<number, unknown>; details: unknown[] } {
  const signatures = new Map<number, unknown>();
  const details: unknown[] = [];
  for (const payload of sseData(ex.response)) {
    const delta = (payload.choices as { delta?: Record<string, unknown> }[] | undefined)?.[0]?.delta;
    for (const frag of (delta?.tool_calls as { index: number; extra_content?: { google?: { thought_signature?: unknown } } }[] | undefined) ?? []) {
      const signature = frag.extra_content?.google?.thought_signature;
      if (signature !== undefined) signatures.set(frag.index, signature);
    }
    details.push(...((delta?.reasoning_details as unknown[] | undefined) ?? []));
  }
  return { signatures, details };
}

const responses = (events: LogEvent[]) => events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');

async function sessionWithSystem(text: string): Promise<LogEvent[]> {
  for (const events of (await readSessions(w)).values()) {
    if (events.some((e) => e.type === 'client.msg' && e.msg.role === 'system' && e.msg.content === text)) return events;
  }
  throw new Error(`no session with system prompt ${text}`);
}

describe('gemini-openai preset', () => {
  it('a multi-round tool session: every reply\'s signature goes back on its first call, and nothing is refused', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    const system = tag('gm-agent');
    await runAgent(w.client, 'gem', { requests: 12, stream: true, seed: 41, system, parallelEvery: 2 });
    const wire = exchanges(w, 'gemini', from);
    expect(wire).toHaveLength(12);
    expect(wire.every((x) => x.status === 200)).toBe(true);
    const sims = w.sim.requests.slice(simFrom);
    expect(sims.every((r) => r.mode === 'gemini' && r.status === 200)).toBe(true);

    const made = wire.map(streamedReply);
    let signed = 0;
    let parallel = 0;
    wire.forEach((x, k) => {
      const ours = assistantsOf(x);
      expect(ours).toHaveLength(k);
      for (const [i, m] of ours.entries()) {
        const calls = m.tool_calls ?? [];
        if (calls.length === 0) {
          expect(made[i]!.signatures.size).toBe(0);
          continue;
        }
        expect(calls[0]!.extra_content).toEqual({ google: { thought_signature: made[i]!.signatures.get(0) } });
        expect(typeof made[i]!.signatures.get(0)).toBe('string');
        for (const other of calls.slice(1)) expect(other.extra_content).toBeUndefined();
        if (calls.length > 1) parallel++;
        signed++;
      }
      // Gemini's endpoint is sent no reasoning text and no field it does not know.
      expect(JSON.stringify(x.body)).not.toMatch(/reasoning_content|"reasoning"|reasoning_details|prompt_cache_key/);
    });
    expect(parallel).toBeGreaterThan(0);
    expect(sims.reduce((n, r) => n + r.opaque.returned, 0)).toBe(signed);
    expect(sims.reduce((n, r) => n + r.opaque.dropped, 0)).toBe(0);

    // Logged as one block per reply, on the call it rode on.
    const blocks = responses(await sessionWithSystem(system)).map((e) => e.reply.blocks ?? []);
    expect(blocks.filter((b) => b.length > 0).every((b) => b.length === 1 && b[0]!.kind === 'gemini.thought_signature' && b[0]!.before_call === 0)).toBe(true);
  });

  it('gemini -> openrouter -> gemini -> openrouter: neither upstream gets the other\'s opaque reasoning; each gets its own back where it was', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    const t = tag('gm-switch');
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: `sys ${t}` },
      { role: 'user', content: `${t} [[call f {"n":0}]]` },
    ];
    const models = ['gem', 'gem', 'orm', 'orm', 'gem', 'gem', 'orm', 'gem'];
    for (const [i, model] of models.entries()) {
      const r = await w.client.chat.completions.create({ model, tools, messages });
      const call = r.choices[0]!.message.tool_calls![0]!;
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      messages.push({ role: 'tool', tool_call_id: call.id, content: `result ${i} [[call f {"n":${i + 1}}]]` });
    }
    const wire = w.tap.requests.slice(from);
    const modeOf = (model: string) => (model === 'gem' ? 'gemini' : 'openrouter');
    expect(wire.map((x) => x.path.split('/')[1])).toEqual(models.map(modeOf));
    expect(wire.every((x) => x.status === 200)).toBe(true);
    expect(w.sim.requests.slice(simFrom).every((r) => r.status === 200)).toBe(true);

    const made = wire.map(streamedReply);
    wire.forEach((x, k) => {
      const mode = modeOf(models[k]!);
      const body = JSON.stringify(x.body);
      // No gemini signature reaches OpenRouter; no reasoning_details reach Gemini.
      if (mode === 'openrouter') expect(body).not.toContain('thought_signature');
      else expect(body).not.toContain('reasoning_details');
      for (const [i, m] of assistantsOf(x).entries()) {
        const origin = modeOf(models[i]!);
        const first = m.tool_calls![0]!;
        if (origin === 'gemini' && mode === 'gemini') {
          expect(first.extra_content).toEqual({ google: { thought_signature: made[i]!.signatures.get(0) } });
        } else if (mode === 'gemini') {
          // A call OpenRouter's model made, in Gemini 3's current turn: Google's stand-in (decision 0031).
          expect(first.extra_content).toEqual({ google: { thought_signature: 'skip_thought_signature_validator' } });
        } else {
          expect(first.extra_content).toBeUndefined();
        }
        if (origin === 'openrouter' && mode === 'openrouter') {
          expect(m.reasoning_details).toEqual(mergedDetails(made[i]!.details));
          expect(m.reasoning_content).toBeUndefined();
        } else {
          expect(m.reasoning_details).toBeUndefined();
        }
        // OpenRouter's replies went to Gemini as nothing but their calls (the preset sends no text back);
        // to OpenRouter, the other model's replies carry no reasoning (it had none).
        if (mode === 'gemini') expect(m.reasoning_content).toBeUndefined();
      }
    });
    // Back where they were: the last request to each carries every one of its own replies' reasoning.
    const lastGemini = assistantsOf(wire[7]!);
    const signature = (m: (typeof lastGemini)[number]): unknown => (m.tool_calls![0]!.extra_content as { google?: { thought_signature?: unknown } } | undefined)?.google?.thought_signature;
    expect(lastGemini.filter((m) => signature(m) !== undefined && signature(m) !== 'skip_thought_signature_validator')).toHaveLength(4);
    expect(lastGemini.filter((m) => signature(m) === 'skip_thought_signature_validator')).toHaveLength(3);
    const lastOpenRouter = assistantsOf(wire[6]!);
    expect(lastOpenRouter.filter((m) => m.reasoning_details !== undefined)).toHaveLength(2);
  });

  it('a window that elides at a new turn: nothing refused; the replies made before it keep their signatures', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    const t = tag('gm-trim-turns');
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'system', content: `sys ${t}` }, { role: 'user', content: `${t} [[call read_file {"n":0}]]` }];
    const step = async (next: string, resultBytes: number) => {
      const r = await w.client.chat.completions.create({ model: 'gem-small', tools, messages });
      const call = r.choices[0]!.message.tool_calls![0]!;
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      messages.push({ role: 'tool', tool_call_id: call.id, content: `${fileContent(42, messages.length, 0, resultBytes)}${next}` });
    };
    // Turn 1: four steps with results of about 1,000 estimated tokens each, under high water (6,400).
    for (let i = 1; i <= 4; i++) await step(i < 4 ? `[[call read_file {"n":${i}}]]` : '[[say read]]', 3000);
    messages.push({ role: 'assistant', content: (await w.client.chat.completions.create({ model: 'gem-small', tools, messages })).choices[0]!.message.content });
    // Turn 2 opens with a message that takes the window over high water: its first request elides.
    messages.push({ role: 'user', content: `${fileContent(43, 0, 0, 9000)} [[call read_file {"n":9}]]` });
    for (let i = 10; i <= 12; i++) await step(`[[call read_file {"n":${i}}]]`, 100);

    const wire = exchanges(w, 'gemini', from);
    expect(wire).toHaveLength(8);
    expect(w.sim.requests.slice(simFrom).map((r) => r.status)).toEqual(Array(8).fill(200));
    const events = await sessionWithSystem(`sys ${t}`);
    const elided = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').map((e) => e.elided.length);
    expect(elided.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(elided[5]).toBeGreaterThan(0);
    expect(elided.slice(6)).toEqual([0, 0]);
    // In the last request: turn 1's three oldest batches elided whole, one placeholder for the
    // three; its survivor, made before the elision, still signed (Gemini's signatures are not
    // bound to the prefix); turn 2's signed.
    const last = assistantsOf(wire.at(-1)!);
    expect(last).toHaveLength(5);
    expect(String(last[0]!.content)).toMatch(/^\[elided seq=\d+-\d+\]$/);
    expect(last[0]!.tool_calls).toBeUndefined();
    expect(last[1]!.tool_calls![0]!.extra_content).toBeDefined();
    expect(last[2]!.content).toBe('read');
    expect(last.slice(3).map((m) => m.tool_calls![0]!.extra_content !== undefined)).toEqual([true, true]);
    expect(w.sim.requests.slice(simFrom).map((r) => r.opaque.dropped)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  // Gemini's signatures are not bound to their prefix (the dialect marks them `unbound`), and
  // Gemini 3 refuses a call of the current turn without its signature: they must survive an
  // elision inside a long turn, where prefix-bound blocks (Anthropic's) are dropped.
  it('a long turn whose window elides: nothing refused, the signatures kept', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    // One turn of 16 steps: every call is in the current turn, which Gemini validates.
    await runAgent(w.client, 'gem-small', { requests: 16, seed: 44, system: tag('gm-trim'), resultBytes: 3000, roundsPerTurn: 100 });
    expect(exchanges(w, 'gemini', from)).toHaveLength(16);
    expect(w.sim.requests.slice(simFrom).filter((r) => r.status !== 200).map((r) => r.error)).toEqual([]);
  });
});

/** The stream's reasoning_details fragments merged by index, as OpenRouter documents. */
function mergedDetails(fragments: unknown[]): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (const raw of fragments as Record<string, unknown>[]) {
    const item = items.find((d) => d.index === raw.index);
    if (item === undefined) {
      items.push({ ...raw });
      continue;
    }
    for (const [k, v] of Object.entries(raw)) {
      if ((k === 'text' || k === 'data' || k === 'summary') && typeof v === 'string') item[k] = `${String(item[k] ?? '')}${v}`;
      else if (v !== null) item[k] = v;
    }
  }
  return items;
}

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
