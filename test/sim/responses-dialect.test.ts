/**
 * The openai-responses dialect against the simulator's Responses mode: what the dialect sends is
 * what the strict simulator takes (no item ids under store false, encrypted reasoning unchanged,
 * every call answered), and what it reads back is the reply with its reasoning blocks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../src/core/route.js';
import type { NeutralMessage, NeutralReply } from '../../src/core/types.js';
import { openaiResponses } from '../../src/dialects/openai-responses/index.js';
import { createEventDecoder } from '../../src/dialects/stream-decoder.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { fixedClock, text } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const route = (s: Sim, keepReasoning: boolean): DialectRoute => ({
  wire: 'openai-responses', preset: 'openai-responses', provider: 'openai', model: 'gpt-5.6', baseUrl: s.url,
  reasoningOut: 'none', reasoningOnToolTurns: false, headers: {}, keepReasoning,
});
const hints: WireHints = { bodyKey: true, sessionKey: 'f00d', headers: { 'session-id': 'f00d' } };

async function send(s: Sim, r: DialectRoute, messages: NeutralMessage[], effort?: string): Promise<{ status: number; reply: NeutralReply | null; error: string }> {
  const params = effort === undefined ? {} : { reasoning_effort: effort };
  const encoded = openaiResponses.encodeRequest({ messages, model: 'gpt-5.6', params, tools: [] }, r, hints, { stream: true, resolveImage: () => ({ mime: 'image/png', base64: '' }) });
  const res = await fetch(`${r.baseUrl}${encoded.path}`, { method: 'POST', headers: encoded.headers, body: encoded.body });
  if (res.status !== 200) return { status: res.status, reply: null, error: openaiResponses.decodeError(res.status, await res.text()).message };
  const decoder = openaiResponses.createStreamDecoder(r);
  const events = createEventDecoder(decoder.framing);
  for (const ev of events.push(new Uint8Array(await res.arrayBuffer()))) decoder.onEvent(ev);
  for (const ev of events.flush()) decoder.onEvent(ev);
  return { status: 200, reply: decoder.finish(), error: '' };
}

describe('openai-responses dialect against the simulator', () => {
  it('keeps reasoning as blocks, gives them back unchanged before their calls, and the prefix holds', async () => {
    const s = (sim = await createSim({ clock: fixedClock }));
    const r = route(s, true);
    const conversation: NeutralMessage[] = [{ role: 'system', content: text(1500, 'sys') }, { role: 'user', content: '[[think need a.ts]] [[call read {"path":"a.ts"}]]' }];
    const first = await send(s, r, conversation, 'high');
    const reply = first.reply as NeutralReply;
    expect(reply.thinking).toBe('need a.ts');
    expect(reply.blocks).toHaveLength(1);
    expect(reply.blocks?.[0]).toMatchObject({ kind: 'responses.reasoning', origin: { provider: 'openai', model: 'gpt-5.6' }, before_call: 0 });
    expect(reply.finish_reason).toBe('tool_calls');
    const call = reply.tool_calls?.[0];
    if (call === undefined) throw new Error('no call');

    conversation.push({ role: 'assistant', content: reply.content, thinking: reply.thinking, blocks: reply.blocks, tool_calls: reply.tool_calls }, { role: 'tool', tool_call_id: call.id, content: 'x = 1 [[say done]]' });
    const second = await send(s, r, conversation, 'high');
    expect(second.status).toBe(200);
    expect(second.reply?.content).toBe('done');
    // The whole first prompt was read from the cache (same replica by prompt_cache_key).
    expect(second.reply?.usage?.cached_tokens).toBe(Math.floor((reply.usage?.prompt_tokens ?? 0) / 128) * 128);
    expect(second.reply?.usage?.prompt_tokens).toBeGreaterThan(reply.usage?.prompt_tokens ?? 0);
  });

  it('is refused with invalid_encrypted_content when a block was changed on the way', async () => {
    const s = (sim = await createSim({ clock: fixedClock }));
    const r = route(s, true);
    const first = (await send(s, r, [{ role: 'user', content: '[[think t]] [[call f {}]]' }], 'low')).reply as NeutralReply;
    const block = first.blocks?.[0];
    const call = first.tool_calls?.[0];
    if (block === undefined || call === undefined) throw new Error('no block or call');
    const data = block.data as { encrypted_content: string };
    const tampered = { ...block, data: { ...data, encrypted_content: `${data.encrypted_content.slice(0, -4)}AAAA` } };
    const out = await send(s, r, [
      { role: 'user', content: '[[think t]] [[call f {}]]' },
      { role: 'assistant', content: null, blocks: [tampered], tool_calls: first.tool_calls },
      { role: 'tool', tool_call_id: call.id, content: 'r' },
    ]);
    expect(out.status).toBe(400);
    expect(out.error).toMatch(/could not be verified/);
  });

  it('without keep_reasoning asks for no encrypted content and keeps no block, the summary still the thinking', async () => {
    const s = (sim = await createSim({ clock: fixedClock }));
    const out = await send(s, route(s, false), [{ role: 'user', content: '[[think short]] [[say hi]]' }], 'low');
    expect(out.reply).toMatchObject({ content: 'hi', thinking: 'short', finish_reason: 'stop' });
    expect(out.reply).not.toHaveProperty('blocks');
  });
});
