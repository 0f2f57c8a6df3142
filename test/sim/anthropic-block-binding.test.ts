import { describe, expect, it } from 'vitest';
import { messages, messagesStream, userText, VERSION } from './anthropic-client.js';
import type { Sim } from '../../src/sim/server.js';
import { simPerTest, text } from './client.js';

const start = simPerTest();

type Json = Record<string, unknown>;
const BETA = 'thinking-binding-controls-2026-08-01';
const WITH_BETA = { ...VERSION, 'anthropic-beta': BETA };
const DROP = { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } };
// A long system prompt and the request's own breakpoint: each request writes its prompt up to its
// last block, and the next one reads the longest unchanged part of it.
const base = { model: 'claude-sim', max_tokens: 4096, thinking: { type: 'adaptive' }, cache_control: { type: 'ephemeral' }, system: [{ type: 'text', text: text(1500, 'sys') }] };
const u1 = userText('[[think First thought.]] [[say One.]]');
const u2 = userText('[[think Second thought.]] [[say Two.]]');
const u3 = userText('[[say Three.]]');
const bound = (where: string) => `${where}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`;
const dropped = (...paths: string[]) => paths.map((path) => ({ type: 'thinking_dropped', path, reason: 'prefix_binding_mismatch' }));
const withoutThinking = (content: Json[]) => content.filter((b) => b.type !== 'thinking');

/** Two signed turns, from an empty cache: the replies and the usage of each request. */
async function conversation(s: Sim) {
  s.reset();
  const r1 = await messages(s, { ...base, messages: [u1] });
  const r2 = await messages(s, { ...base, messages: [u1, { role: 'assistant', content: r1.json.content }, u2] });
  expect([r1.status, r2.status]).toStrictEqual([200, 200]);
  const a1 = r1.json.content as Json[];
  const a2 = r2.json.content as Json[];
  expect([a1[0]?.type, a2[0]?.type]).toStrictEqual(['thinking', 'thinking']);
  // The third request's messages: the history, edited where asked, then a new question.
  const history = (over: { first?: Json; second?: Json; a1?: Json[]; a2?: Json[] } = {}) => [
    over.first ?? u1, { role: 'assistant', content: over.a1 ?? a1 }, over.second ?? u2, { role: 'assistant', content: over.a2 ?? a2 }, u3,
  ];
  return { a1, a2, history, usage1: r1.json.usage, usage2: r2.json.usage };
}

describe('sim anthropic block_binding: the default', () => {
  it('refuses a signed block after a changed message with the documented 400', async () => {
    const s = await start();
    const { history } = await conversation(s);
    const first = await messages(s, { ...base, messages: history({ first: userText('[[think First thought.]] [[say Uno.]]') }) });
    expect(first.status).toBe(400);
    expect(first.json.error).toStrictEqual({ type: 'invalid_request_error', message: bound('messages.1.content.0') });
    const second = await messages(s, { ...base, messages: history({ second: userText('[[think Second thought.]] [[say Dos.]]') }) });
    expect(second.json.error.message).toBe(bound('messages.3.content.0'));
    // "error" asked for explicitly is the default.
    const asked = await messages(s, { ...base, thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'error' } }, messages: history({ second: u1 }) }, WITH_BETA);
    expect(asked.json.error.message).toBe(bound('messages.3.content.0'));
    expect(s.anthropicRequests.map((r) => r.thinkingDropped)).toStrictEqual([0, 0, 0, 0, 0]);
  });
});

describe('sim anthropic block_binding: drop_block', () => {
  const edited = userText('[[think Second thought.]] [[say Dos.]]');

  it('drops the failing block and every later one, and lists them', async () => {
    const s = await start();
    const { history } = await conversation(s);
    const r = await messages(s, { ...base, thinking: DROP, messages: history({ first: userText('[[think First thought.]] [[say Uno.]]') }) }, WITH_BETA);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.input_transformations).toStrictEqual(dropped('messages.1.content.0', 'messages.3.content.0'));
    expect(s.anthropicRequests.at(-1)).toMatchObject({ thinkingBlocksBack: 2, thinkingDropped: 2 });
    const later = await messages(s, { ...base, thinking: DROP, messages: history({ second: edited }) }, WITH_BETA);
    expect(later.json.input_transformations).toStrictEqual(dropped('messages.3.content.0'));
    expect(s.anthropicRequests.at(-1)?.thinkingDropped).toBe(1);
  });

  it('reads the cache as the same request without the dropped blocks does, streamed or not', async () => {
    const s = await start();
    const { a2, history, usage1 } = await conversation(s);
    const body = { ...base, thinking: DROP, messages: history({ second: edited }) };
    const r = await messages(s, body, WITH_BETA);
    const dropping = r.json.usage;
    const prompt = s.anthropicRequests.at(-1)?.promptTokens;
    // Read: the system prompt and the first question, written by the first request; the edited
    // question and what follows it are new.
    expect(dropping.cache_read_input_tokens).toBeGreaterThan(1500);
    expect(dropping.cache_read_input_tokens).toBe(usage1.cache_creation_input_tokens);

    const { history: again } = await conversation(s);
    const removed = await messages(s, { ...base, messages: again({ second: edited, a2: withoutThinking(a2) }) });
    expect(removed.status).toBe(200);
    expect(removed.json.input_transformations).toBeUndefined();
    expect(removed.json.usage).toStrictEqual(dropping);
    expect(s.anthropicRequests.at(-1)?.promptTokens).toBe(prompt);

    await conversation(s);
    const streamed = await messagesStream(s, body, WITH_BETA);
    expect(streamed.status).toBe(200);
    const start_ = streamed.events[0];
    expect(streamed.names[0]).toBe('message_start');
    expect(start_.message.input_transformations).toStrictEqual(dropped('messages.3.content.0'));
    expect(start_.message.usage.cache_read_input_tokens).toBe(dropping.cache_read_input_tokens);
    expect(start_.message.usage.input_tokens).toBe(dropping.input_tokens);
    expect(streamed.events.at(-2).input_transformations).toBeUndefined();
  });

  it('keeps a block made after the change: the reply is signed over the prompt without the dropped blocks', async () => {
    const s = await start();
    const { a1, a2, history } = await conversation(s);
    const changed = userText('[[think First thought.]] [[say Uno.]]');
    const next = userText('[[think Third thought.]] [[say Four.]]');
    const r = await messages(s, { ...base, thinking: DROP, messages: [...history({ first: changed }).slice(0, 4), next] }, WITH_BETA);
    expect(r.json.content[0].type).toBe('thinking');
    const after = [...history({ first: changed }).slice(0, 4), next, { role: 'assistant', content: r.json.content }, u3];
    const kept = await messages(s, { ...base, thinking: DROP, messages: after }, WITH_BETA);
    expect(kept.json.input_transformations).toStrictEqual(dropped('messages.1.content.0', 'messages.3.content.0'));
    // The stale blocks are still in the history: without block_binding the first is the 400.
    expect((await messages(s, { ...base, messages: after })).json.error.message).toBe(bound('messages.1.content.0'));
    // The client leaving them out itself is what the API did: the new block is valid.
    const cleaned = after.map((m, i) => (i === 1 ? { ...m, content: withoutThinking(a1) } : i === 3 ? { ...m, content: withoutThinking(a2) } : m));
    const clean = await messages(s, { ...base, messages: cleaned });
    expect(clean.status, JSON.stringify(clean.json)).toBe(200);
    expect(s.anthropicRequests.at(-1)).toMatchObject({ thinkingBlocksBack: 1, thinkingDropped: 0 });
  });

  it('checks the tool loop rule on the request as sent: a dropped first block still counts', async () => {
    const s = await start();
    const q = userText('[[think Read it.]] [[call read_file {"path":"a.ts"}]]');
    const r1 = await messages(s, { ...base, messages: [q] });
    const content = r1.json.content as Json[];
    const loop = (first: Json, reply: Json[]) => [first, { role: 'assistant', content: reply }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: content[1]?.id, content: 'x' }] }];
    const changed = userText('[[think Read it.]] [[call read_file {"path":"b.ts"}]]');
    const r = await messages(s, { ...base, thinking: DROP, messages: loop(changed, content) }, WITH_BETA);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.input_transformations).toStrictEqual(dropped('messages.1.content.0'));
    const removed = await messages(s, { ...base, messages: loop(changed, withoutThinking(content)) });
    expect(removed.json.error.message).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
  });

  it('with nothing invalid: an empty list, and the cache reads as without block_binding', async () => {
    const s = await start();
    const { history, usage2 } = await conversation(s);
    const r = await messages(s, { ...base, thinking: DROP, messages: history() }, WITH_BETA);
    expect(r.json.input_transformations).toStrictEqual([]);
    // Message blocks are read (the second request's prompt), not only the system prompt.
    expect(r.json.usage.cache_read_input_tokens).toBe(usage2.cache_read_input_tokens + usage2.cache_creation_input_tokens);
    await conversation(s);
    const plain = await messages(s, { ...base, messages: history() });
    expect(plain.json.usage).toStrictEqual(r.json.usage);
    expect(plain.json).not.toHaveProperty('input_transformations');
    // The beta alone reports, with nothing to report.
    await conversation(s);
    expect((await messages(s, { ...base, messages: history() }, WITH_BETA)).json.input_transformations).toStrictEqual([]);
  });
});

describe('sim anthropic block_binding: the request', () => {
  const msgs = [userText('q')];
  const status = async (s: Sim, thinking: Json, headers: Record<string, string> = WITH_BETA) => {
    const r = await messages(s, { ...base, thinking, messages: msgs }, headers);
    return { status: r.status, message: r.status === 200 ? '' : String(r.json.error.message), type: r.status === 200 ? '' : String(r.json.error.type) };
  };

  it('needs the beta header, alone or among others', async () => {
    const s = await start();
    const header = 'thinking.block_binding: requires the beta header `anthropic-beta: thinking-binding-controls-2026-08-01`';
    expect(await status(s, DROP, VERSION)).toStrictEqual({ status: 400, message: header, type: 'invalid_request_error' });
    expect((await status(s, DROP, { ...VERSION, 'anthropic-beta': 'thinking-binding-controls-2026-07-01' })).message).toBe(header);
    expect((await status(s, DROP, { ...VERSION, 'anthropic-beta': `context-management-2025-06-27, ${BETA}` })).status).toBe(200);
    expect((await status(s, { type: 'enabled', budget_tokens: 2048, block_binding: { prefix_mismatch_behavior: 'error' } })).status).toBe(200);
  });

  it('refuses another value, another key, a non-object and thinking disabled', async () => {
    const s = await start();
    const bad = await status(s, { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop' } });
    expect(bad).toStrictEqual({ status: 400, message: "thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'", type: 'invalid_request_error' });
    expect((await status(s, { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block', scope: 'all' } })).message).toBe('thinking.block_binding.scope: Extra inputs are not permitted');
    expect((await status(s, { type: 'adaptive', block_binding: 'drop_block' })).message).toBe('thinking.block_binding: Input should be an object');
    expect((await status(s, { type: 'disabled', block_binding: { prefix_mismatch_behavior: 'drop_block' } })).message).toBe('thinking.disabled.block_binding: Extra inputs are not permitted');
  });

  it('count_tokens takes it with the header and counts without the blocks it would drop', async () => {
    const s = await start();
    const { a2, history } = await conversation(s);
    const edited = userText('[[think Second thought.]] [[say Dos.]]');
    const count = async (body: Json, headers: Record<string, string>) => (await messages(s, body, headers, '/anthropic/v1/messages/count_tokens')).json;
    const { max_tokens: _m, ...countBase } = base;
    expect((await count({ ...countBase, thinking: DROP, messages: history() }, VERSION)).error.message).toMatch(/requires the beta header/);
    const dropping = await count({ ...countBase, thinking: DROP, messages: history({ second: edited }) }, WITH_BETA);
    const removed = await count({ ...countBase, messages: history({ second: edited, a2: withoutThinking(a2) }) }, VERSION);
    expect(dropping.input_tokens).toBe(removed.input_tokens);
  });
});
