/**
 * The anthropic-messages wire's client side, over fixtures: requests as Claude Code and the SDK send
 * them parse to the expected neutral request (test/fixtures/dialects/anthropic-messages-inbound);
 * every recorded Anthropic stream of the shared suite, decoded and rendered back to a client, reads
 * back through this dialect's own stream decoder, fed whole, a byte at a time and in random chunks,
 * as the same reply (and the non-stream `message` likewise); a chat upstream's reply reaches an
 * Anthropic client with its reasoning unsigned.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../../src/core/route.js';
import { ProxyError } from '../../../src/core/errors.js';
import { anthropicMessages } from '../../../src/dialects/anthropic-messages/index.js';
import { anthropicMessagesInbound as inbound } from '../../../src/dialects/anthropic-messages/inbound.js';
import { openaiChat } from '../../../src/dialects/openai-chat/index.js';
import type { StreamDelta } from '../../../src/dialects/types.js';
import { chunkings, decodeStream } from '../common.case.js';

const fixtures = (dir: string) => fileURLToPath(new URL(`../../fixtures/dialects/${dir}`, import.meta.url));
const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const noImages = () => {
  throw new Error('no images in these fixtures');
};
const route: DialectRoute = { wire: 'anthropic-messages', preset: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: 'https://api.anthropic.com/v1', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {} };
const meta = (model: string | undefined) => ({ id: 'abc', created: 1760000000, model: model ?? 'claude-sonnet-4-6' });

describe('anthropic-messages inbound: requests', () => {
  for (const name of readdirSync(fixtures('anthropic-messages-inbound')).sort()) {
    it(`parses ${name} to the expected neutral request`, () => {
      const dir = join(fixtures('anthropic-messages-inbound'), name);
      expect(inbound.parse(readJson(join(dir, 'request.json')), noImages)).toStrictEqual(readJson(join(dir, 'expected.json')));
    });
  }

  it.each([
    [{ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'max_tokens'],
    [{ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }, 'messages[0].content[0].tool_use_id'],
    [{ model: 'm', max_tokens: 5, messages: [{ role: 'assistant', content: [{ type: 'image' }] }] }, 'messages[0].content[0].type'],
    [{ model: 'm', max_tokens: 5, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    [{ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 10 } }, 'thinking.budget_tokens'],
  ])('refuses a bad body, naming the field (%#)', (body, param) => {
    const err = (() => {
      try {
        inbound.parse(body, noImages);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).param).toBe(param);
    expect(inbound.errorBody(err as ProxyError)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('reads the credential from x-api-key, else a bearer', () => {
    expect(inbound.apiKey({ 'x-api-key': 'k1', authorization: 'Bearer k2' })).toBe('k1');
    expect(inbound.apiKey({ authorization: 'Bearer k2' })).toBe('k2');
    expect(inbound.apiKey({})).toBeUndefined();
  });
});

/** What the client stream writes for a reply's deltas. */
function render(deltas: StreamDelta[], final: Parameters<ReturnType<typeof inbound.openStream>['end']>[0]): string {
  const stream = inbound.openStream(meta(final.model), { stream: true } as never);
  return deltas.map((d) => stream.delta(d)).join('') + stream.end(final);
}

describe('anthropic-messages inbound: replies round-trip through an Anthropic reader', () => {
  const dir = fixtures('anthropic-messages');
  for (const name of readdirSync(dir).sort()) {
    const stream = join(dir, name, 'stream.sse');
    if (!existsSync(stream) || existsSync(join(dir, name, 'expected-error.json'))) continue;
    const caseRoute = { ...route, ...(readJson(join(dir, name, 'case.json')) as { route: object }).route };
    it(`${name}: the rendered stream reads back as the same reply, in any chunking`, () => {
      const { deltas, reply } = decodeStream(anthropicMessages, caseRoute, [new TextEncoder().encode(readFileSync(stream, 'utf8'))]);
      const bytes = new TextEncoder().encode(render(deltas, reply));
      for (const { name: how, chunks } of chunkings(bytes)) {
        expect(decodeStream(anthropicMessages, caseRoute, chunks).reply, how).toStrictEqual(reply);
      }
    });
    it(`${name}: the rendered message reads back as the same reply`, () => {
      const { reply } = decodeStream(anthropicMessages, caseRoute, [new TextEncoder().encode(readFileSync(stream, 'utf8'))]);
      const body = JSON.parse(JSON.stringify(inbound.renderReply(reply, meta(reply.model), { stream: false } as never))) as unknown;
      expect(anthropicMessages.decodeReply(200, body, caseRoute)).toStrictEqual(reply);
    });
  }

  it('shows a chat upstream\'s reasoning as an unsigned thinking block', () => {
    const chatDir = join(fixtures('openai-chat'), 'thinking');
    const chatRoute = { ...route, wire: 'openai-chat' as const, reasoningOut: 'reasoning_content' as const, ...(readJson(join(chatDir, 'case.json')) as { route: object }).route };
    const source = readdirSync(chatDir).find((f) => f.startsWith('stream.'))!;
    const { deltas, reply } = decodeStream(openaiChat, chatRoute, [new TextEncoder().encode(readFileSync(join(chatDir, source), 'utf8'))]);
    const back = decodeStream(anthropicMessages, route, [new TextEncoder().encode(render(deltas, reply))]).reply;
    expect(back.content).toBe(reply.content);
    expect(back.thinking).toBe(reply.thinking);
    expect(back.tool_calls).toStrictEqual(reply.tool_calls);
    expect(back.blocks?.map((b) => (b.data as { signature: string }).signature)).toStrictEqual(['']);
  });
});
