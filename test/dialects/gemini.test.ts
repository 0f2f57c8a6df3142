/**
 * The gemini dialect: the shared suite over recorded Gemini streams and bodies (outbound), and the
 * inbound suite over Gemini CLI's and the Gen AI SDK's requests, rendered replies read back by the
 * outbound decoders (so the SSE goes both ways through the byte decoder, a byte at a time, CRLF, CR).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../src/core/route.js';
import type { NeutralReply } from '../../src/core/types.js';
import { gemini } from '../../src/dialects/gemini/index.js';
import { geminiInbound } from '../../src/dialects/gemini/inbound.js';
import { SIGNATURE_KIND } from '../../src/dialects/gemini/signatures.js';
import { runDialectSuite } from './common.case.js';
import { runInboundSuite } from './inbound.case.js';

const base = { wire: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {} } as const;

runDialectSuite({
  dialect: gemini,
  fixtures: fileURLToPath(new URL('../fixtures/dialects/gemini', import.meta.url)),
  baseRoute: base,
});

const readerRoute: DialectRoute = { ...base, preset: 'gemini', provider: 'reader', model: 'reader-model' };

/**
 * A Gemini client reads back the text, the thoughts, the calls, the finish, the usage (a cached
 * count Gemini leaves out is 0, thoughts counted apart) and, where a Gemini upstream made them, the
 * thought signatures on their parts; never another wire's blocks.
 */
function seen(reply: NeutralReply): NeutralReply {
  const out: NeutralReply = { content: reply.content === '' ? null : reply.content, finish_reason: reply.finish_reason };
  if (reply.thinking !== undefined) out.thinking = reply.thinking;
  const own = (reply.blocks ?? []).filter((b) => b.kind === SIGNATURE_KIND);
  if (own.length > 0) out.blocks = own.map((b) => ({ ...b, origin: { provider: 'reader', model: 'reader-model' } }));
  if (reply.tool_calls !== undefined) out.tool_calls = reply.tool_calls;
  if (reply.usage !== undefined) out.usage = reply.usage;
  out.model = 'client-model';
  return out;
}

runInboundSuite({
  inbound: geminiInbound,
  fixtures: fileURLToPath(new URL('../fixtures/inbound/gemini', import.meta.url)),
  reader: gemini,
  readerRoute,
  seen,
  normalize: (reply) => reply,
  requestFor: () => ({ model: 'client-model', stream: true, includeUsage: true, system: undefined, messages: [], tools: [], params: {}, idFields: {} }),
  errorFields: (body) => {
    const detail = (body as { error: { details: { reason: string; metadata: { param?: string } }[] } }).error.details[0]!;
    return { code: detail.reason, param: detail.metadata.param ?? null };
  },
});

describe('the gemini client side: what only its path and headers say', () => {
  it('takes the key from x-goog-api-key, else ?key=, else a bearer', () => {
    const target = { route: '', params: {}, query: { key: 'from-query' } };
    expect(geminiInbound.apiKey({ 'x-goog-api-key': 'from-header' }, target)).toBe('from-header');
    expect(geminiInbound.apiKey({}, target)).toBe('from-query');
    expect(geminiInbound.apiKey({ authorization: 'Bearer b' })).toBe('b');
  });

  it('answers errors as google.rpc.Status with the HTTP code and its status name', async () => {
    const { ProxyError } = await import('../../src/core/errors.js');
    const body = geminiInbound.errorBody(new ProxyError('invalid_request', { detail: 'bad' }, { param: 'contents' })) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(typeof body.error.message).toBe('string');
  });
});
