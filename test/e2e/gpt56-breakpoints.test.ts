/**
 * OpenAI's explicit breakpoints (GPT-5.6+) through the proxy, on the simulator's GPT-5.6 mode, for
 * both inbound wires and both upstream wires: the Codex #35300 shape (a ~9k-token stable prefix,
 * only the last message changing) reads the prefix through the proxy and nothing direct; an
 * append-only agent keeps its reads with the markers on; writes are priced; an older model never
 * sees the fields (the strict simulator would answer 400: a route forced on shows it); replay
 * rebuilds the marks, and a log without them replays as before.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { verifyEvents } from '../../src/cli/verify.js';
import { readSessions, replayAll, tag } from './harness.js';
import { expectPrefixReads, functionLoop, respond, RESPONSE_TOOLS } from './responses-client.js';
import { lines, toolSession, TOOLS } from './wires-client.js';
import { metricsText, sessionWith, startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let world: WiresWorld;
beforeAll(async () => {
  world = await startWiresWorld({
    sim: { mode: 'gpt56' },
    models: (origin) => `
[providers.c56]
preset = "openai"
base_url = "${origin}/gpt56/v1"
api_key_env = ""

[providers.r56]
preset = "openai-responses"
base_url = "${origin}/gpt56/v1"
api_key_env = ""

[providers.c54]
preset = "openai"
base_url = "${origin}/openai/v1"
api_key_env = ""

[providers.r54]
preset = "openai-responses"
base_url = "${origin}/openai/v1"
api_key_env = ""

[models.chat56]
provider = "c56"
model = "gpt-5.6-sol"
price = { input = 5, cache_read = 0.5, output = 30 }

[models.resp56]
provider = "r56"
model = "gpt-5.6-sol"
price = { input = 5, cache_read = 0.5, output = 30 }

[models.small56]
provider = "c56"
model = "gpt-5.6-sol"
context = 24000
output_reserve = 2000
max_result_tokens = 4000

[models.chat54]
provider = "c54"
model = "gpt-5.4"

[models.resp54]
provider = "r54"
model = "gpt-5.4"

[models.forced54]
provider = "c54"
model = "gpt-5.4"
prompt_cache_breakpoints = "implicit"
`,
  });
}, 30_000);
afterAll(async () => world?.close());

type Usage = { prompt: number; cached: number; written: number };

/** The Codex #35300 client: the same instructions and tools every time, only the last user message new. */
async function codexShape(via: 'chat' | 'responses', client: OpenAI, model: string, t: string, n: number): Promise<Usage[]> {
  const instructions = `${t} You are Codex.\n${lines(9000, `${t}-dev`)}`;
  const out: Usage[] = [];
  for (let i = 0; i < n; i++) {
    const question = `${t} question ${i}: ${'why '.repeat(i + 1)}[[say answer ${i}]]`;
    const headers = { 'x-session-id': t };
    if (via === 'chat') {
      // Codex sends a retention GPT-5.6 refuses (hermes-agent #91164); the proxy drops it, straight to the simulator it is left out.
      const retention = client === world.client ? { prompt_cache_retention: '24h' as const } : {};
      const r = await client.chat.completions.create({ model, messages: [{ role: 'system', content: instructions }, { role: 'user', content: question }], tools: TOOLS, ...retention }, { headers });
      const d = r.usage!.prompt_tokens_details as { cached_tokens?: number; cache_write_tokens?: number } | undefined;
      out.push({ prompt: r.usage!.prompt_tokens, cached: d?.cached_tokens ?? 0, written: d?.cache_write_tokens ?? 0 });
    } else {
      const retention = client === world.client ? { prompt_cache_retention: '24h' as const } : {};
      const r = await client.responses.create({ model, instructions, input: [{ role: 'user', content: question }], tools: RESPONSE_TOOLS, store: false, prompt_cache_key: t, ...retention }, { headers });
      const d = r.usage!.input_tokens_details as { cached_tokens: number; cache_write_tokens?: number };
      out.push({ prompt: r.usage!.input_tokens, cached: d.cached_tokens, written: d.cache_write_tokens ?? 0 });
    }
  }
  return out;
}

/** Simulator tokens of the stable part: the prompt less the last user message (its text and the framing around it). */
function stableTokens(u: Usage, t: string, i: number): number {
  return u.prompt - Math.ceil(Buffer.byteLength(`<|start|>user\n${t} question ${i}: ${'why '.repeat(i + 1)}[[say answer ${i}]]<|end|>\n`) / 4);
}

const COMBOS = [
  { inbound: 'chat', model: 'chat56', upstream: '/gpt56/v1/chat/completions' },
  { inbound: 'chat', model: 'resp56', upstream: '/gpt56/v1/responses' },
  { inbound: 'responses', model: 'chat56', upstream: '/gpt56/v1/chat/completions' },
  { inbound: 'responses', model: 'resp56', upstream: '/gpt56/v1/responses' },
] as const;

describe('a stable prefix before a changing message (openai/codex #35300)', () => {
  for (const c of COMBOS) {
    it(`reads >= 95% of the stable prefix through the proxy (${c.inbound} in, ${c.upstream} up)`, async () => {
      const t = tag(`codex-${c.inbound}-${c.model}`);
      const from = world.tap.requests.length;
      const usage = await codexShape(c.inbound, world.client, c.model, t, 4);
      for (let i = 1; i < usage.length; i++) {
        const stable = stableTokens(usage[i]!, t, i);
        expect(stable).toBeGreaterThan(9000);
        expect(usage[i]!.cached, JSON.stringify(usage)).toBeGreaterThanOrEqual(0.95 * stable);
        // Only the changing message is written again, not the prefix.
        expect(usage[i]!.written).toBeLessThan(0.05 * stable);
      }
      const sent = wire(world, c.upstream, from);
      expect(sent).toHaveLength(4);
      for (const r of sent) {
        const text = JSON.stringify(r.body);
        expect(text).toContain('"prompt_cache_breakpoint":{"mode":"explicit"}');
        expect(r.body.prompt_cache_options).toEqual({ mode: 'implicit' });
        expect(r.body.prompt_cache_retention).toBeUndefined();
        // The marker is on the system prompt, which on the Responses wire is a developer item, not `instructions`.
        if (c.upstream.endsWith('responses')) {
          expect(r.body.instructions).toBeUndefined();
          expect(r.body.input[0].role).toBe('developer');
          expect(r.body.input[0].content.at(-1).prompt_cache_breakpoint).toEqual({ mode: 'explicit' });
        } else {
          expect(r.body.messages[0].content.at(-1).prompt_cache_breakpoint).toEqual({ mode: 'explicit' });
        }
      }
      // The log names what was placed: the system prompt's end, message 0.
      const events = await sessionWith(world, t);
      const reqs = events.filter((e): e is Extract<LogEvent, { type: 'llm.req' }> => e.type === 'llm.req');
      expect(reqs.map((e) => e.hints?.prompt_cache)).toEqual(reqs.map(() => ({ mode: 'implicit', marks: [0] })));
      // On its own wire the client's retention is dropped before the log, and named there; another wire never gets the client's fields.
      const sameWire = (c.inbound === 'chat') === c.upstream.endsWith('completions');
      expect(reqs.every((e) => e.params.extra?.dropped?.includes('prompt_cache_retention') === true)).toBe(sameWire);
    });
  }

  for (const via of ['chat', 'responses'] as const) {
    it(`reads ~0% sent straight to the simulator (${via})`, async () => {
      const t = tag(`codex-direct-${via}`);
      const direct = new OpenAI({ baseURL: world.sim.url, apiKey: 'test', maxRetries: 0 });
      const usage = await codexShape(via, direct, 'gpt-5.6-sol', t, 3);
      for (let i = 1; i < usage.length; i++) {
        expect(usage[i]!.cached).toBeLessThanOrEqual(0.01 * stableTokens(usage[i]!, t, i));
        // ... and every request writes its whole prompt again, at the write price.
        expect(usage[i]!.written).toBeGreaterThan(0.95 * usage[i]!.prompt);
      }
    });
  }
});

describe('an append-only agent with the markers on', () => {
  it('keeps >= 99% of what the unchanged prefix allows (chat in, chat up), writes priced at 1.25x input', async () => {
    const t = tag('agent-chat');
    const before = await metricsText(world);
    await toolSession(world, 'chat56', t, { rounds: 10, resultTokens: 400, systemTokens: 9000 });
    const events = await sessionWith(world, t);
    expectPrefixReads(events, false);
    const reqs = events.filter((e): e is Extract<LogEvent, { type: 'llm.req' }> => e.type === 'llm.req');
    // From the second request on: the system prompt's end and the input before the newest reply.
    expect(reqs.slice(1).every((e) => (e.hints?.prompt_cache?.marks.length ?? 0) === 2 && e.hints!.prompt_cache!.marks[0] === 0)).toBe(true);

    const usages = events.flatMap((e) => (e.type === 'llm.resp' ? [e.reply.usage!] : []));
    const written = usages.reduce((n, u) => n + (u.cache_write_tokens ?? 0), 0);
    expect(written).toBeGreaterThan(9000);
    const after = await metricsText(world);
    const writeCost = (text: string) => series(text, 'proxy_cost_usd_total', { model: 'chat56', kind: 'cache_write' }) ?? 0;
    const inputCost = (text: string) => series(text, 'proxy_cost_usd_total', { model: 'chat56', kind: 'input' }) ?? 0;
    expect(writeCost(after) - writeCost(before)).toBeCloseTo((written * 6.25) / 1e6, 9);
    // Writes are a part of the prompt tokens, not on top: only what was neither read nor written is plain input.
    const plain = usages.reduce((n, u) => n + u.prompt_tokens! - (u.cached_tokens ?? 0) - (u.cache_write_tokens ?? 0), 0);
    expect(inputCost(after) - inputCost(before)).toBeCloseTo((plain * 5) / 1e6, 9);
    expect(series(after, 'proxy_model_price_usd_per_million', { model: 'chat56', kind: 'cache_write' })).toBe(6.25);
  });

  it('keeps >= 99% of what the unchanged prefix allows (responses in, responses up)', async () => {
    const t = tag('agent-resp');
    const from = world.tap.requests.length;
    await functionLoop(world, 'resp56', t, { rounds: 8 });
    expectPrefixReads(await sessionWith(world, t), false);
    // A tool output that carries a marker goes as parts; its bytes are the same on every later request.
    const sent = wire(world, '/gpt56/v1/responses', from);
    const outputs = new Map<string, string>();
    for (const r of sent) {
      for (const item of r.body.input as { type: string; call_id?: string }[]) {
        if (item.type !== 'function_call_output') continue;
        const { prompt_cache_breakpoint: _, ...rest } = item as Record<string, unknown>;
        const bytes = JSON.stringify(rest, (k, v: unknown) => (k === 'prompt_cache_breakpoint' ? undefined : v));
        const seen = outputs.get(item.call_id!);
        if (seen !== undefined) expect(bytes).toBe(seen);
        outputs.set(item.call_id!, bytes);
      }
    }
    expect(sent.some((r) => (r.body.input as { type: string; output?: unknown }[]).some((i) => i.type === 'function_call_output' && Array.isArray(i.output)))).toBe(true);
  });
});

describe('a session the window trims', () => {
  it('marks the last trim point too, never an assistant message, and replay agrees', async () => {
    const t = tag('trim');
    const from = world.tap.requests.length;
    await toolSession(world, 'small56', t, { rounds: 14, resultTokens: 1500, systemTokens: 2000 });
    const events = await sessionWith(world, t);
    const reqs = events.filter((e): e is Extract<LogEvent, { type: 'llm.req' }> => e.type === 'llm.req');
    expect(reqs.some((e) => e.elided.length > 0)).toBe(true);
    const sent = wire(world, '/gpt56/v1/chat/completions', from);
    expect(sent).toHaveLength(reqs.length);
    let withTrimPoint = 0;
    sent.forEach((r, k) => {
      const msgs = r.body.messages as { role: string; content: unknown }[];
      const marked = msgs.flatMap((m, i) => (Array.isArray(m.content) && JSON.stringify(m.content).includes('prompt_cache_breakpoint') ? [i] : []));
      expect(marked).toEqual(reqs[k]!.hints!.prompt_cache!.marks);
      expect(marked.length).toBeLessThanOrEqual(3);
      for (const i of marked) expect(msgs[i]!.role).not.toBe('assistant');
      const placeholder = msgs.findLastIndex((m) => JSON.stringify(m.content).includes('[elided seq='));
      if (placeholder >= 0 && marked.some((i) => i <= placeholder && i > 0)) withTrimPoint++;
    });
    expect(withTrimPoint).toBeGreaterThan(0);
    for (const r of verifyEvents(events, { file: 'x' })) expect(r.problem).toBeUndefined();
  });
});

describe('older models', () => {
  it('never get the fields, on either wire, and answer as before', async () => {
    const t = tag('old');
    const from = world.tap.requests.length;
    await toolSession(world, 'chat54', `${t}-c`, { rounds: 3, resultTokens: 200, systemTokens: 1500 });
    await respond(world, { model: 'resp54', instructions: `${t} ${lines(1500, t)}`, input: [{ role: 'user', content: `${t} hi [[say ok]]` }], store: false }, false);
    const sent = [...wire(world, '/openai/v1/chat/completions', from), ...wire(world, '/openai/v1/responses', from)];
    expect(sent).toHaveLength(4);
    for (const r of sent) {
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).not.toMatch(/prompt_cache_(breakpoint|options|retention)/);
    }
  });

  it('a route forced on against an older model gets the strict simulator\'s 400', async () => {
    const t = tag('forced');
    const err = await world.client.chat.completions.create({ model: 'forced54', messages: [{ role: 'system', content: lines(2000, t) }, { role: 'user', content: `${t} hi` }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
  });
});

describe('replay', () => {
  it('rebuilds every request with its marks; a changed mark fails; a log without marks replays', async () => {
    const sessions = [...(await readSessions(world)).values()].filter((events) => events.some((e) => e.type === 'llm.req' && e.hints?.prompt_cache !== undefined));
    expect(sessions.length).toBeGreaterThan(3);
    for (const events of sessions) {
      for (const r of verifyEvents(events, { file: 'x' })) expect(r.problem).toBeUndefined();
      // An older log: the same events without the record replay to the same digests.
      const old = events.map((e) => (e.type === 'llm.req' && e.hints !== undefined ? { ...e, hints: { ...e.hints, prompt_cache: undefined } } : e)) as LogEvent[];
      expect(verifyEvents(old, { file: 'x' }).every((r) => r.ok)).toBe(true);
    }
    const events = sessions[0]!;
    const tampered = events.map((e) => (e.type === 'llm.req' && e.hints?.prompt_cache !== undefined ? { ...e, hints: { ...e.hints, prompt_cache: { mode: 'implicit' as const, marks: [...e.hints.prompt_cache.marks, 99] } } } : e));
    expect(verifyEvents(tampered, { file: 'x' }).some((r) => r.problem?.includes('cache breakpoints') === true)).toBe(true);

    const cli = await replayAll(world);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const result = JSON.parse(cli.stdout) as { requests: number; failed: number };
    expect(result.failed).toBe(0);
  }, 30_000);
});

function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}
