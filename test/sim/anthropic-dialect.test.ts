/**
 * The anthropic-messages dialect against the simulator's Anthropic wire, over HTTP: what the dialect
 * encodes, the simulator accepts (headers, alternation, tool pairs, signed blocks sent back where
 * they stood), and what the simulator answers, the dialect decodes, streamed or not. The two sides
 * share no code, so each checks the other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../src/core/route.js';
import type { NeutralMessage, NeutralReply, NeutralRequest, ToolSpec } from '../../src/core/types.js';
import { anthropicMessages } from '../../src/dialects/anthropic-messages/index.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { decodeStream } from '../dialects/common.case.js';
import { fixedClock, text } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const tools: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
const topLevel: WireHints = { bodyKey: false, headers: {}, cacheControl: 'ephemeral', cacheControlAt: 'top-level' };
const breakpoints: WireHints = { bodyKey: false, headers: {}, cacheControl: '1h', cacheControlAt: 'breakpoints' };

async function setup(): Promise<{ s: Sim; route: DialectRoute }> {
  sim = await createSim({ clock: fixedClock, apiKey: 'sk-ant-sim' });
  const route: DialectRoute = {
    wire: 'anthropic-messages', preset: 'anthropic', provider: 'claude', model: 'claude-sim', baseUrl: `${sim.origin}/anthropic/v1`,
    reasoningOut: 'none', reasoningOnToolTurns: false, headers: {}, thinking: 'enabled',
  };
  return { s: sim, route };
}

/** One request through the dialect; the reply decoded as the proxy would (stream or not). */
async function send(route: DialectRoute, messages: NeutralMessage[], hints: WireHints, stream: boolean): Promise<{ status: number; reply?: NeutralReply; error?: string }> {
  const req: NeutralRequest = { messages, model: route.model, params: { max_tokens: 4096 }, tools };
  const encoded = anthropicMessages.encodeRequest(req, route, hints, { stream, resolveImage: () => ({ mime: 'image/png', base64: '' }) });
  const res = await fetch(`${route.baseUrl}${encoded.path}`, { method: 'POST', headers: { ...encoded.headers, ...anthropicMessages.authHeaders('sk-ant-sim') }, body: encoded.body });
  const body = await res.text();
  if (res.status !== 200) return { status: res.status, error: anthropicMessages.decodeError(res.status, body).message };
  const reply = stream ? decodeStream(anthropicMessages, route, [new TextEncoder().encode(body)]).reply : anthropicMessages.decodeReply(200, JSON.parse(body), route);
  return { status: 200, reply };
}

const asMessage = (reply: NeutralReply): NeutralMessage => {
  const msg: NeutralMessage = { role: 'assistant', content: reply.content };
  if (reply.thinking !== undefined) msg.thinking = reply.thinking;
  if (reply.blocks !== undefined) msg.blocks = reply.blocks;
  if (reply.tool_calls !== undefined) msg.tool_calls = reply.tool_calls;
  return msg;
};

/** A tool loop of three requests: a thinking call, its result, then an answer, each sending the last back. */
async function toolLoop(route: DialectRoute, hints: WireHints, stream: boolean) {
  const history: NeutralMessage[] = [
    { role: 'system', content: text(1500, 'sys') },
    { role: 'user', content: '[[think Read a.ts first.]] [[call read_file {"path":"a.ts"}]] [[call read_file {"path":"b.ts"}]]' },
  ];
  const first = await send(route, history, hints, stream);
  expect(first.status, first.error).toBe(200);
  const reply1 = first.reply!;
  history.push(asMessage(reply1));
  // The directives of the next reply ride on the last result (the simulator reads the whole last turn).
  const calls = reply1.tool_calls ?? [];
  calls.forEach((call, i) => history.push({ role: 'tool', tool_call_id: call.id, content: `contents of ${call.arguments}${i === calls.length - 1 ? ' [[think Now answer.]] [[say Both read.]]' : ''}` }));
  const second = await send(route, history, hints, stream);
  expect(second.status, second.error).toBe(200);
  history.push(asMessage(second.reply!), { role: 'user', content: 'thanks' });
  const third = await send(route, history, hints, stream);
  expect(third.status, third.error).toBe(200);
  return { history, replies: [reply1, second.reply!, third.reply!] };
}

describe('anthropic-messages dialect against the simulator', () => {
  for (const stream of [false, true]) {
    it(`runs a thinking tool loop with its signed blocks sent back (${stream ? 'stream' : 'whole'})`, async () => {
      const { s, route } = await setup();
      const { replies } = await toolLoop(route, topLevel, stream);
      const [r1, r2] = replies;
      expect(r1?.blocks).toMatchObject([{ kind: 'anthropic.thinking', origin: { provider: 'claude', model: 'claude-sim' }, before_call: 0 }]);
      expect(r1?.tool_calls?.map((c) => c.arguments)).toStrictEqual(['{"path":"a.ts"}', '{"path":"b.ts"}']);
      expect(r1?.finish_reason).toBe('tool_calls');
      expect(r2?.content).toBe('Both read.');
      expect(s.anthropicRequests.map((r) => r.thinkingBlocksBack)).toStrictEqual([0, 1, 2]);
      expect(s.anthropicRequests.map((r) => r.status)).toStrictEqual([200, 200, 200]);
    });
  }

  it('top-level cache_control: each request reads its predecessor up to its last block', async () => {
    const { s, route } = await setup();
    const { replies } = await toolLoop(route, topLevel, true);
    const records = s.anthropicRequests;
    expect(replies[0]?.usage).toMatchObject({ cached_tokens: 0, cache_write_1h_tokens: 0 });
    for (let i = 1; i < records.length; i++) {
      const before = records[i - 1]!;
      expect(records[i]!.cachedTokens).toBe(before.cachedTokens + before.cacheWriteTokens);
      expect(replies[i]?.usage?.cached_tokens).toBe(records[i]!.cachedTokens);
      expect(replies[i]?.usage?.prompt_tokens).toBe(records[i]!.promptTokens);
    }
    expect(records.map((r) => r.cacheMarkers)).toStrictEqual([1, 1, 1]);
  });

  it('explicit breakpoints (1h): tools, system and history marked, and the opening once a reply follows it; reads grow and writes are one-hour', async () => {
    const { s, route } = await setup();
    const { replies } = await toolLoop(route, breakpoints, false);
    const records = s.anthropicRequests;
    expect(records.map((r) => r.cacheMarkers)).toStrictEqual([3, 4, 4]);
    expect(records[1]!.cachedTokens).toBeGreaterThan(1500);
    expect(records[2]!.cachedTokens).toBeGreaterThan(records[1]!.cachedTokens);
    for (const r of replies) expect(r.usage?.cache_write_1h_tokens).toBe(r.usage?.cache_write_tokens);
  });

  it('a changed earlier message makes the sent-back block invalid; without its blocks the reply is accepted', async () => {
    const { route } = await setup();
    const { history } = await toolLoop(route, topLevel, false);
    const edited = history.map((m, i) => (i === 3 && m.role === 'tool' ? { ...m, content: '[elided seq=3]' } : m));
    const stale = await send(route, edited, topLevel, false);
    expect(stale.status).toBe(400);
    expect(stale.error).toMatch(/Invalid `signature` in `thinking` block/);
    // What the window does: replies made before the change go back without their blocks.
    const cleaned = edited.map((m, i) => (i > 3 && m.role === 'assistant' ? { ...m, blocks: [] } : m));
    expect((await send(route, cleaned, topLevel, false)).status).toBe(200);
  });
});
