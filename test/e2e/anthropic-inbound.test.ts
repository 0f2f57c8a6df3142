/**
 * Inbound Anthropic Messages with the official `@anthropic-ai/sdk` client: stream and not, a tool
 * loop, to the Anthropic simulator (signed thinking goes back from the log byte for byte, the
 * client's `anthropic-beta`/`anthropic-version` reach that wire only, at most one marker of the
 * proxy's own in place of the client's) and to a chat upstream (DeepSeek mode); Claude Code's
 * attribution line, with a nonce that changes every request, does not break the prefix; errors and
 * token counts in Anthropic's shapes; and every request replays.
 */
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_VOLATILE_LINES } from '../../src/config/build.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { replayAll, tag } from './harness.js';
import { anthropicThinking, sessionWith, startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
let client: Anthropic;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.claude]
provider = "an"
model = "claude-sim"

[models.chat]
provider = "ds"
model = "deepseek-v4"
`,
  });
  client = new Anthropic({ baseURL: w.proxy.url, apiKey: 'sk-ant-test', maxRetries: 0 });
});
afterAll(async () => {
  await w?.close();
});

const TOOLS: Anthropic.Tool[] = [
  { name: 'read_file', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
];
const BETA = 'interleaved-thinking-2025-05-14,context-management-2025-06-27';
const billing = (nonce: string) => `x-anthropic-billing-header: cc_version=2.1.328.abc; cc_entrypoint=sdk-cli; cch=${nonce};`;

/** A three-request tool loop; `stream` picks how each request is made. Returns the replies. */
async function toolLoop(model: string, marker: string, stream: boolean, thinking: boolean): Promise<Anthropic.Message[]> {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `${marker} read two files [[think look first]] [[call read_file {"path":"a.ts"}]] [[call read_file {"path":"b.ts"}]]` }];
  const replies: Anthropic.Message[] = [];
  const results = ['[[call read_file {"path":"c.ts"}]]', '[[say all read]]'];
  for (let round = 0; round < 3; round++) {
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model, max_tokens: 4096, tools: TOOLS, messages,
      system: [{ type: 'text', text: billing(`n${round}${marker}`) }, { type: 'text', text: `You are a careful agent. ${'Stable words. '.repeat(400)}`, cache_control: { type: 'ephemeral' } }],
      metadata: { user_id: JSON.stringify({ device_id: 'd', session_id: `sess-${marker}` }) },
      ...(thinking ? { thinking: { type: 'enabled', budget_tokens: 2048 } } : {}),
    };
    const options = { headers: { 'anthropic-beta': BETA } };
    const reply = stream ? await client.messages.stream(params, options).finalMessage() : await client.messages.create(params, options);
    replies.push(reply);
    messages.push({ role: 'assistant', content: reply.content });
    const calls = reply.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    if (calls.length === 0) break;
    messages.push({ role: 'user', content: calls.map((c, i) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: i === calls.length - 1 ? results[round]! : `contents of ${String((c.input as { path: string }).path)}` })) });
  }
  return replies;
}

describe('inbound Anthropic Messages, official SDK', () => {
  for (const stream of [false, true]) {
    it(`runs a tool loop with signed thinking to the Anthropic wire (${stream ? 'stream' : 'non-stream'})`, async () => {
      const from = w.tap.requests.length;
      const marker = tag('an-loop');
      const replies = await toolLoop('claude', marker, stream, true);
      expect(replies.map((r) => r.stop_reason)).toStrictEqual(['tool_use', 'tool_use', 'end_turn']);
      expect(replies[0]!.content.map((b) => b.type)).toStrictEqual(['thinking', 'tool_use', 'tool_use']);
      expect(replies[2]!.content.at(-1)).toMatchObject({ type: 'text', text: 'all read' });
      const first = replies[0]!.content[0] as Anthropic.ThinkingBlock;
      expect(first.signature.length).toBeGreaterThan(0);

      const sent = wire(w, '/anthropic/v1/messages', from);
      expect(sent.map((r) => r.status)).toStrictEqual([200, 200, 200]);
      // The signed block goes back from the log exactly as the upstream gave it.
      // The proxy streams from the upstream whatever the client asked.
      const upstreamFirst = anthropicThinking(sent[0]!.response)[0];
      expect(sent[1]!.body.messages[1].content[0]).toStrictEqual(upstreamFirst);
      expect(upstreamFirst).toMatchObject({ signature: first.signature });
      for (const r of sent) {
        expect(r.headers['anthropic-beta']).toBe(BETA);
        expect(r.headers['x-api-key']).toBe('sk-ant-test');
        // Billing line out, so the prefix holds; the proxy's own marker in place of the client's.
        expect(JSON.stringify(r.body.system)).not.toContain('x-anthropic-billing-header');
        expect(JSON.stringify(r.body)).not.toContain('"cache_control":{"type":"ephemeral"},"text"');
      }
      const records = w.sim.anthropicRequests.filter((r) => r.path.endsWith('/messages')).slice(-3);
      expect(records.every((r) => r.cacheMarkers <= 4)).toBe(true);
      for (let i = 1; i < records.length; i++) expect(records[i]!.cachedTokens).toBeGreaterThanOrEqual(Math.floor(records[i - 1]!.promptTokens * 0.99) - 128);

      const events = await sessionWith(w, marker);
      const start = events.find((e): e is EventOf<'session.start'> => e.type === 'session.start')!;
      expect(start.ids).toContain(`sess-${marker}`);
      expect(start.recipe.volatile_lines).toStrictEqual([...DEFAULT_VOLATILE_LINES]);
      expect(events.filter((e) => e.type === 'llm.req')).toHaveLength(3);
    });
  }

  it('runs the same loop to a chat upstream; Anthropic headers stay on their own wire', async () => {
    const from = w.tap.requests.length;
    const marker = tag('ds-loop');
    const replies = await toolLoop('chat', marker, true, true);
    expect(replies.map((r) => r.stop_reason)).toStrictEqual(['tool_use', 'tool_use', 'end_turn']);
    // DeepSeek's reasoning is shown, unsigned: it is not Anthropic's.
    expect(replies[0]!.content[0]).toMatchObject({ type: 'thinking', thinking: 'look first', signature: '' });
    const sent = wire(w, '/deepseek/v1/chat/completions', from);
    expect(sent.map((r) => r.status)).toStrictEqual([200, 200, 200]);
    for (const r of sent) {
      expect(r.headers['anthropic-beta']).toBeUndefined();
      expect(r.headers['anthropic-version']).toBeUndefined();
      expect(r.body.messages[0].content).not.toContain('x-anthropic-billing-header');
    }
    // The reasoning goes back from the log in DeepSeek's field, which the mode requires on tool turns.
    expect(sent[1]!.body.messages[2].reasoning_content).toBe('look first');
  });

  it('answers a bad request in Anthropic\'s error shape, naming the field', async () => {
    const res = await fetch(`${w.proxy.url}/v1/messages?beta=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('messages[0].content[0].tool_use_id');
    await expect(client.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('says an upstream error of another wire in Anthropic\'s shape, with its status', async () => {
    const err = await client.messages.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: `${tag('err')} [[error 429]]` }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('counts tokens: asked of an Anthropic upstream, estimated for another wire', async () => {
    const body = { messages: [{ role: 'user' as const, content: 'count me, please' }], system: 'be brief' };
    const up = await client.messages.countTokens({ model: 'claude', ...body }).withResponse();
    expect(up.data.input_tokens).toBeGreaterThan(0);
    expect(up.response.headers.get('x-token-count')).toBe('upstream');
    const est = await client.messages.countTokens({ model: 'chat', ...body }).withResponse();
    expect(est.data.input_tokens).toBe(Math.ceil('be brief'.length / 3) + Math.ceil('count me, please'.length / 3));
    expect(est.response.headers.get('x-token-count')).toBe('estimate');
  });

  it('replays every request it logged', async () => {
    const result = await replayAll(w);
    expect(result.code, result.stderr).toBe(0);
  });
});
