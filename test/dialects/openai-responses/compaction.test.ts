/**
 * A Responses `compaction_trigger` answered by the proxy (docs/decisions/0033): the trigger is the
 * proxy's compaction prompt with no tool to call, the reply is one compaction item holding the
 * model's summary, and that item in a later request is the summary as a user message. An item the
 * proxy did not make, a trigger that is not last, and a reply with no text are refused.
 */
import { describe, expect, it } from 'vitest';
import { COMPACTION_PROMPT } from '../../../src/core/compaction-prompt.js';
import { ProxyError } from '../../../src/core/errors.js';
import type { NeutralReply } from '../../../src/core/types.js';
import { COMPACT_PATH, COMPACTED_HEADER, compactionContent } from '../../../src/dialects/openai-responses/compaction.js';
import { openaiResponsesInbound } from '../../../src/dialects/openai-responses/inbound.js';
import type { ImageSink, ReplyMeta } from '../../../src/dialects/types.js';

const images: ImageSink = () => {
  throw new Error('no images here');
};
const meta: ReplyMeta = { id: 'x', created: 1, model: 'm', logged: { session: 's1', seq: 7 } };
const history = [
  { type: 'message', role: 'developer', content: 'You are an agent.' },
  { type: 'message', role: 'user', content: 'Fix the bug in a.ts' },
  { type: 'function_call', call_id: 'c1', name: 'exec', arguments: '{"cmd":"cat a.ts"}' },
  { type: 'function_call_output', call_id: 'c1', output: 'const a = 1;' },
];
const tools = [{ type: 'function', name: 'exec', parameters: { type: 'object' } }];
const parse = (input: unknown[], extra: Record<string, unknown> = {}) => openaiResponsesInbound.parse({ model: 'm', stream: true, input, tools, tool_choice: 'auto', ...extra }, images);
const reply = (content: string | null): NeutralReply => ({ content, finish_reason: 'stop', usage: { prompt_tokens: 900, completion_tokens: 40, cached_tokens: 850 } });

/** The SSE text as its events' data. */
function events(text: string): Record<string, unknown>[] {
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

describe('a compaction_trigger', () => {
  it('is the proxy\'s compaction prompt, last, with the tools offered and none to be called', () => {
    const req = parse([...history, { type: 'compaction_trigger' }]);
    expect(req.compaction).toStrictEqual({});
    expect(req.messages.at(-1)).toStrictEqual({ role: 'user', content: COMPACTION_PROMPT });
    expect(req.messages.at(-2)).toStrictEqual({ role: 'tool', tool_call_id: 'c1', content: 'const a = 1;' });
    expect(req.tools.map((t) => t.function.name)).toStrictEqual(['exec']);
    expect(req.params.tool_choice).toBe('none');
    // A request without one is not a compaction, and keeps its tool choice.
    const plain = parse(history);
    expect(plain.compaction).toBeUndefined();
    expect(plain.params.tool_choice).toBe('auto');
  });

  it('anywhere but last is a 400 naming it', () => {
    const err = (() => {
      try {
        parse([...history.slice(0, 2), { type: 'compaction_trigger' }, ...history.slice(2)]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).status).toBe(400);
    expect((err as ProxyError).param).toBe('input[2]');
  });

  it('is answered in a stream by one compaction item holding the summary, and nothing of it before', () => {
    const req = parse([...history, { type: 'compaction_trigger' }]);
    const stream = openaiResponsesInbound.openStream(meta, req);
    const early = events(stream.delta({ type: 'content', text: 'The user wants ' }) + stream.delta({ type: 'content', text: 'a.ts fixed.' }));
    expect(early.map((e) => e.type)).toStrictEqual(['response.created', 'response.in_progress']);
    const tail = events(stream.end(reply('The user wants a.ts fixed.')));
    expect(tail.map((e) => e.type)).toStrictEqual(['response.output_item.added', 'response.output_item.done', 'response.completed']);
    const item = tail[1]!.item as Record<string, unknown>;
    expect(item).toStrictEqual({ id: 'cmp_s1_7', type: 'compaction', encrypted_content: compactionContent('The user wants a.ts fixed.') });
    const done = tail[2]!.response as { output: unknown[]; usage: { input_tokens: number; input_tokens_details: { cached_tokens: number } } };
    expect(done.output).toStrictEqual([item]);
    expect([done.usage.input_tokens, done.usage.input_tokens_details.cached_tokens]).toStrictEqual([900, 850]);
  });

  it('is answered whole, without a stream, as the same one item', () => {
    const req = parse([...history, { type: 'compaction_trigger' }], { stream: false });
    const body = openaiResponsesInbound.renderReply(reply('Summary.'), meta, req) as { status: string; output: Record<string, unknown>[] };
    expect(body.status).toBe('completed');
    expect(body.output).toStrictEqual([{ id: 'cmp_s1_7', type: 'compaction', encrypted_content: compactionContent('Summary.') }]);
  });

  it('fails, saying why, when the model gave no text to install (a tool call instead)', () => {
    const req = parse([...history, { type: 'compaction_trigger' }]);
    const stream = openaiResponsesInbound.openStream(meta, req);
    const tail = events(stream.end({ content: null, tool_calls: [{ id: 'c2', name: 'exec', arguments: '{}' }], finish_reason: 'tool_calls' }));
    expect(tail.map((e) => e.type)).toStrictEqual(['response.created', 'response.in_progress', 'error', 'response.failed']);
    expect(String(tail[2]!.message)).toContain('no summary');
    const whole = openaiResponsesInbound.renderReply(reply('  '), meta, { ...req, stream: false }) as { status: string; output: unknown[] };
    expect([whole.status, whole.output]).toStrictEqual(['failed', []]);
  });
});

describe('a compaction item in a later request', () => {
  it('made by the proxy, is its summary as a user message where the item stands', () => {
    const summary = 'The user wants a.ts fixed; a.ts holds `const a = 1;`. Next: edit it. é ✓';
    const req = parse([
      { type: 'message', role: 'developer', content: 'You are an agent.' },
      { type: 'message', role: 'user', content: 'Fix the bug in a.ts' },
      { type: 'compaction', id: 'cmp_s1_7', encrypted_content: compactionContent(summary) },
      { type: 'message', role: 'user', content: 'go on' },
    ]);
    expect(req.compaction).toBeUndefined();
    expect(req.messages).toStrictEqual([
      { role: 'user', content: 'Fix the bug in a.ts' },
      { role: 'user', content: `${COMPACTED_HEADER}\n\n${summary}` },
      { role: 'user', content: 'go on' },
    ]);
  });

  it('made by another server is a 400 naming its content: only that server can read it', () => {
    let err: unknown;
    try {
      parse([...history, { type: 'compaction', encrypted_content: 'gAAAAABo-openai-encrypted' }]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).param).toBe('input[4].encrypted_content');
    expect((err as ProxyError).message).toContain('did not make');
  });
});

describe('POST /v1/responses/compact (the SDK\'s responses.compact)', () => {
  const target = { route: COMPACT_PATH, params: {}, query: {} };
  const compact = (body: Record<string, unknown>) => openaiResponsesInbound.parse({ model: 'm', ...body }, images, target);

  it('is the same ask, answered whole, whatever the body says of streams', () => {
    const req = compact({ input: history, stream: true });
    expect(req.stream).toBe(false);
    expect(req.messages.at(-1)).toStrictEqual({ role: 'user', content: COMPACTION_PROMPT });
    expect(req.params.tool_choice).toBe('none');
    expect(req.compaction).toStrictEqual({ kept: [{ type: 'message', role: 'user', content: 'Fix the bug in a.ts' }] });
    // A string input is one user message.
    expect(compact({ input: 'hello' }).compaction).toStrictEqual({ kept: [{ type: 'message', role: 'user', content: 'hello' }] });
  });

  it('answers every user message of the request, then the compaction item, as the API lists them', () => {
    const req = compact({ input: [...history, { type: 'message', role: 'user', id: 'msg_u2', content: [{ type: 'input_text', text: 'and b.ts' }] }] });
    const body = openaiResponsesInbound.renderReply(reply('Summary.'), meta, req) as Record<string, unknown>;
    expect(body).toStrictEqual({
      id: 'resp_s1_7', object: 'response.compaction', created_at: 1,
      output: [
        { type: 'message', role: 'user', content: 'Fix the bug in a.ts' },
        { id: 'msg_u2', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and b.ts' }] },
        { id: 'cmp_s1_7', type: 'compaction', encrypted_content: compactionContent('Summary.') },
      ],
      usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 850 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 940 },
    });
    // With no summary: the messages alone, and why.
    const none = openaiResponsesInbound.renderReply(reply(null), meta, req) as { output: unknown[]; error: { message: string } };
    expect(none.output).toHaveLength(2);
    expect(none.error.message).toContain('no summary');
  });
});
