import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../src/core/route.js';
import type { NeutralReply } from '../../src/core/types.js';
import { openaiResponses } from '../../src/dialects/openai-responses/index.js';
import { openaiResponsesInbound } from '../../src/dialects/openai-responses/inbound.js';
import { decodeStream } from './common.case.js';
import { runInboundSuite } from './inbound.case.js';

const readerRoute: DialectRoute = {
  wire: 'openai-responses', preset: 'openai-responses', provider: 'reader', model: 'reader-model', baseUrl: 'https://proxy.invalid/v1',
  reasoningOut: 'none', reasoningOnToolTurns: false, headers: {}, keepReasoning: true,
};

/**
 * A Responses client reads back a reply's text, thinking (the reasoning items' summaries), calls,
 * finish, usage (every count: the wire types them required), the model it asked for, and, when it
 * asked for them, the encrypted reasoning items where they stood: as blocks of the reader's origin.
 */
function seen(reply: NeutralReply, opaque: boolean): NeutralReply {
  const out: NeutralReply = { content: reply.content === '' ? null : reply.content, finish_reason: reply.finish_reason };
  if (reply.thinking !== undefined) out.thinking = reply.thinking;
  if (reply.blocks !== undefined && opaque) {
    out.blocks = reply.blocks.map((b) => ({ ...b, origin: { provider: 'reader', model: 'reader-model' } }));
  }
  if (reply.tool_calls !== undefined) out.tool_calls = reply.tool_calls;
  if (reply.usage !== undefined) out.usage = reply.usage;
  out.model = 'client-model';
  return out;
}

/** Item ids are the proxy's own; the rest of each block is what the upstream gave. */
function normalize(reply: NeutralReply): NeutralReply {
  if (reply.blocks === undefined) return reply;
  return { ...reply, blocks: reply.blocks.map((b) => ({ ...b, data: { ...(b.data as object), id: 'rs_upstream' } })) };
}

runInboundSuite({
  inbound: openaiResponsesInbound,
  fixtures: fileURLToPath(new URL('../fixtures/inbound/openai-responses', import.meta.url)),
  reader: openaiResponses,
  readerRoute,
  seen,
  normalize,
  requestFor: (opaque) => ({ model: 'client-model', stream: true, includeUsage: true, system: undefined, messages: [], tools: [], params: {}, idFields: {}, opaqueReasoning: opaque }),
});

/**
 * A Responses upstream's recorded streams (the outbound suite's fixtures), decoded, rendered for a
 * Responses client as the deltas come, and read back: the client holds what the upstream said,
 * its encrypted reasoning items included, byte for byte.
 */
describe('a Responses upstream relayed to a Responses client', () => {
  const dir = fileURLToPath(new URL('../fixtures/dialects/openai-responses', import.meta.url));
  const cases = readdirSync(dir).filter((name) => existsSync(join(dir, name, 'stream.sse')) && !existsSync(join(dir, name, 'expected-error.json')));
  it('has recorded streams to relay', () => expect(cases.length).toBeGreaterThan(3));
  for (const name of cases) {
    it(`${name}: read back as the upstream gave it`, () => {
      const up = decodeStream(openaiResponses, { ...readerRoute, provider: 'up', model: 'up-model' }, [readFileSync(join(dir, name, 'stream.sse'))]);
      const stream = openaiResponsesInbound.openStream({ id: 'x', created: 1, model: 'client-model' }, { model: 'client-model', stream: true, includeUsage: true, system: undefined, messages: [], tools: [], params: {}, idFields: {}, opaqueReasoning: true });
      let text = '';
      for (const d of up.deltas) if (d.type !== 'error') text += stream.delta(d);
      text += stream.end(up.reply);
      const back = decodeStream(openaiResponses, readerRoute, [new TextEncoder().encode(text)]).reply;
      const upstreamItems = (up.reply.blocks ?? []).map((b) => (b.data as { encrypted_content: string }).encrypted_content);
      expect((back.blocks ?? []).map((b) => (b.data as { encrypted_content: string }).encrypted_content)).toStrictEqual(upstreamItems);
      expect(back.blocks?.map((b) => b.before_call)).toStrictEqual(up.reply.blocks?.map((b) => b.before_call));
      expect({ ...back, blocks: undefined, model: undefined, usage: undefined }).toStrictEqual({ ...up.reply, blocks: undefined, model: undefined, usage: undefined });
      expect(back.usage?.prompt_tokens).toBe(up.reply.usage?.prompt_tokens ?? 0);
    });
  }
});
