import { describe, expect, it } from 'vitest';
import { messages, userText } from './anthropic-client.js';
import type { Sim } from '../../src/sim/server.js';
import { simPerTest } from './client.js';

const start = simPerTest();

type Json = Record<string, unknown>;
const EPHEMERAL = { type: 'ephemeral' };
const base = { model: 'claude-sim', max_tokens: 4096 };
const marked = (t: string) => ({ type: 'text', text: t, cache_control: EPHEMERAL });
const useBlock = (id: string) => ({ type: 'tool_use', id, name: 'read_file', input: { path: `${id}.ts` } });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'x' });
const status = async (s: Sim, body: Json): Promise<{ status: number; message: string }> => {
  const r = await messages(s, body);
  return { status: r.status, message: r.status === 200 ? '' : String(r.json.error.message) };
};

describe('sim anthropic strict: cache markers', () => {
  it('takes four markers, refuses five (the top-level one counts)', async () => {
    const s = await start();
    const four = { ...base, system: [marked('s')], messages: [{ role: 'user', content: [marked('a'), marked('b'), marked('c')] }] };
    expect((await status(s, four)).status).toBe(200);
    const five = { ...four, messages: [{ role: 'user', content: [marked('a'), marked('b'), marked('c'), marked('d')] }] };
    expect(await status(s, five)).toStrictEqual({ status: 400, message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' });
    expect(await status(s, { ...four, cache_control: EPHEMERAL })).toStrictEqual({ status: 400, message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' });
    expect(s.anthropicRequests.map((r) => r.cacheMarkers)).toStrictEqual([4, 5, 5]);
  });

  it('refuses a malformed marker and a marker on a thinking block', async () => {
    const s = await start();
    const bad = await status(s, { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '2h' } }] }] });
    expect(bad.message).toMatch(/messages\.0\.content\.0\.cache_control\.ttl/);
    const thinking = { type: 'thinking', thinking: 't', signature: 's', cache_control: EPHEMERAL };
    const onThinking = await status(s, { ...base, messages: [userText('q'), { role: 'assistant', content: [thinking, { type: 'text', text: 'a' }] }, userText('r')] });
    expect(onThinking.message).toMatch(/thinking blocks cannot be marked with cache_control/);
  });
});

describe('sim anthropic strict: tool pairs', () => {
  it('refuses an orphaned tool_result', async () => {
    const s = await start();
    const orphan = await status(s, { ...base, messages: [userText('q'), { role: 'assistant', content: [useBlock('a')] }, { role: 'user', content: [result('a'), result('zzz')] }] });
    expect(orphan.status).toBe(400);
    expect(orphan.message).toMatch(/^messages\.2\.content: unexpected `tool_use_id` found in `tool_result` blocks: zzz\./);
    // A result two turns after its call is orphaned too: only the previous message counts.
    const late = await status(s, {
      ...base,
      messages: [userText('q'), { role: 'assistant', content: [useBlock('a')] }, { role: 'user', content: [result('a')] }, { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, { role: 'user', content: [result('a')] }],
    });
    expect(late.message).toMatch(/messages\.4\.content: unexpected `tool_use_id`/);
  });

  it('refuses a tool_use not answered in the next message', async () => {
    const s = await start();
    const r = await status(s, { ...base, messages: [userText('q'), { role: 'assistant', content: [useBlock('a'), useBlock('b')] }, { role: 'user', content: [result('a'), { type: 'text', text: 'hm' }] }] });
    expect(r.message).toMatch(/^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: b\./);
    const ok = await status(s, { ...base, messages: [userText('q'), { role: 'assistant', content: [useBlock('a'), useBlock('b')] }, { role: 'user', content: [result('b'), result('a'), { type: 'text', text: 'go on' }] }] });
    expect(ok.status).toBe(200);
  });
});

describe('sim anthropic strict: tool_use ids', () => {
  it('refuses a tool_use id used twice, in one turn or two', async () => {
    const s = await start();
    const twice = await status(s, {
      ...base,
      messages: [userText('q'), { role: 'assistant', content: [useBlock('a')] }, { role: 'user', content: [result('a')] }, { role: 'assistant', content: [{ type: 'text', text: 'again' }, useBlock('a')] }, { role: 'user', content: [result('a')] }],
    });
    expect(twice).toStrictEqual({ status: 400, message: 'messages.3.content.1: `tool_use` ids must be unique' });
    const inOne = await status(s, { ...base, messages: [userText('q'), { role: 'assistant', content: [useBlock('b'), useBlock('b')] }, { role: 'user', content: [result('b')] }] });
    expect(inOne.message).toBe('messages.1.content.1: `tool_use` ids must be unique');
  });
});

describe('sim anthropic strict: thinking limits', () => {
  it('refuses a budget under 1024 or not below max_tokens, and a temperature other than 1', async () => {
    const s = await start();
    const msgs = [userText('q')];
    expect((await status(s, { ...base, thinking: { type: 'enabled', budget_tokens: 512 }, messages: msgs })).message).toMatch(/greater than or equal to 1024/);
    expect((await status(s, { ...base, thinking: { type: 'enabled', budget_tokens: 4096 }, messages: msgs })).message).toMatch(/`max_tokens` must be greater than `thinking.budget_tokens`/);
    expect((await status(s, { ...base, thinking: { type: 'adaptive' }, temperature: 0.2, messages: msgs })).message).toMatch(/`temperature` may only be set to 1/);
    expect((await status(s, { ...base, thinking: { type: 'enabled', budget_tokens: 2048 }, temperature: 1, messages: msgs })).status).toBe(200);
    expect((await status(s, { ...base, temperature: 0.2, messages: msgs })).status).toBe(200);
  });

  it('refuses top_k and a forced tool choice while thinking, and takes both without it', async () => {
    const s = await start();
    const msgs = [userText('q')];
    const tools = [{ name: 'f', description: 'f', input_schema: { type: 'object' } }];
    expect((await status(s, { ...base, thinking: { type: 'adaptive' }, top_k: 5, messages: msgs })).message).toMatch(/`top_k` may not be set/);
    expect((await status(s, { ...base, thinking: { type: 'adaptive' }, tools, tool_choice: { type: 'any' }, messages: msgs })).message).toMatch(/forces tool use/);
    expect((await status(s, { ...base, thinking: { type: 'adaptive' }, tools, tool_choice: { type: 'auto' }, messages: msgs })).status).toBe(200);
    expect((await status(s, { ...base, top_k: 5, tools, tool_choice: { type: 'tool', name: 'f' }, messages: msgs })).status).toBe(200);
  });
});

describe('sim anthropic strict: signed thinking', () => {
  const system = [{ type: 'text', text: 'You are terse.' }];
  const thinkingOn = { type: 'enabled', budget_tokens: 2048 };
  /** A first turn with a tool call and its thinking, and the request that sends it back. */
  async function firstTurn(s: Sim) {
    const q = userText('[[think I should read a.ts first.]] [[call read_file {"path":"a.ts"}]]');
    const r = await messages(s, { ...base, thinking: thinkingOn, system, messages: [q] });
    expect(r.status).toBe(200);
    const content = r.json.content as Json[];
    const next = (over: { system?: Json[]; first?: Json; reply?: Json[] } = {}) => ({
      ...base, thinking: thinkingOn, system: over.system ?? system,
      messages: [over.first ?? q, { role: 'assistant', content: over.reply ?? content }, { role: 'user', content: [result(String(content[1]?.id))] }],
    });
    return { content, next };
  }

  it('signs the thinking block it makes, and takes it back unchanged', async () => {
    const s = await start();
    const { content, next } = await firstTurn(s);
    expect(content[0]).toMatchObject({ type: 'thinking', thinking: 'I should read a.ts first.' });
    expect(String(content[0]?.signature)).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect((await status(s, next())).status).toBe(200);
    expect(s.anthropicRequests[1]?.thinkingBlocksBack).toBe(1);
  });

  it('refuses the block when its text, the system prompt or an earlier message changed', async () => {
    const s = await start();
    const { content, next } = await firstTurn(s);
    const edited = [{ ...content[0], thinking: 'I should read b.ts first.' }, content[1]] as Json[];
    const cases = [next({ reply: edited }), next({ system: [{ type: 'text', text: 'You are verbose.' }] }), next({ first: userText('another question') })];
    for (const body of cases) {
      const r = await status(s, body);
      expect(r.status).toBe(400);
      expect(r.message).toMatch(/^messages\.1\.content\.0: Invalid `signature` in `thinking` block/);
    }
  });

  it('is not broken by a moved cache marker, and leaving the block out is not checked by signature', async () => {
    const s = await start();
    const { content, next } = await firstTurn(s);
    const q = userText('[[think I should read a.ts first.]] [[call read_file {"path":"a.ts"}]]');
    const markedFirst = { role: 'user', content: [{ ...q.content[0], cache_control: EPHEMERAL }] };
    expect((await status(s, { ...next({ first: markedFirst }), cache_control: EPHEMERAL })).status).toBe(200);
    // Without thinking asked for, the call may come back without its block (with it, see below).
    const { thinking: _, ...noThinking } = next({ reply: [content[1] as Json] });
    expect((await status(s, noThinking)).status).toBe(200);
  });

  it('inside a tool loop, refuses a last assistant turn that does not start with its thinking block', async () => {
    const s = await start();
    const { content, next } = await firstTurn(s);
    const rule = 'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.';
    const missing = await status(s, next({ reply: [content[1] as Json] }));
    expect(missing.status).toBe(400);
    expect(missing.message).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\. /);
    expect(missing.message).toContain(rule);
    const textFirst = await status(s, next({ reply: [{ type: 'text', text: 'Reading.' }, content[1] as Json] }));
    expect(textFirst.message).toMatch(/but found `text`\./);
    // Adaptive thinking has the rule too; a redacted block first satisfies it (it is not checked).
    const adaptive = await status(s, { ...next({ reply: [content[1] as Json] }), thinking: { type: 'adaptive' } });
    expect(adaptive.message).toContain(rule);
    const redacted = await status(s, next({ reply: [{ type: 'redacted_thinking', data: 'xyz' }, content[1] as Json] }));
    expect(redacted.status).toBe(200);
    expect((await status(s, { ...next({ reply: [content[1] as Json] }), thinking: { type: 'disabled' } })).status).toBe(200);
  });

  it('applies the rule only to the last assistant turn, and only while the loop goes on', async () => {
    const s = await start();
    const { content, next } = await firstTurn(s);
    const loop = next({ reply: [content[1] as Json] });
    // The loop ended: the model answered, the user speaks again.
    const ended = { ...loop, messages: [...loop.messages, { role: 'assistant', content: [{ type: 'text', text: 'It says x.' }] }, userText('thanks')] };
    expect((await status(s, ended)).status).toBe(200);
    // An earlier call without its block, in a loop whose last turn starts with one.
    const later = { type: 'tool_use', id: 'toolu_later', name: 'read_file', input: { path: 'b.ts' } };
    const deeper = {
      ...loop,
      messages: [...loop.messages, { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'xyz' }, later] }, { role: 'user', content: [result('toolu_later')] }],
    };
    expect((await status(s, deeper)).status).toBe(200);
  });

  it('binds a later block to the earlier ones: dropping an earlier turn\'s block breaks the later one', async () => {
    const s = await start();
    const { content, next } = await firstTurn(s);
    const second = next();
    const r2 = await messages(s, { ...second, messages: [...second.messages.slice(0, 2), { role: 'user', content: [result(String(content[1]?.id)), { type: 'text', text: '[[think Now answer.]] [[say Done.]]' }] }] });
    expect(r2.status).toBe(200);
    const third = (firstReply: Json[]) => ({
      ...second,
      messages: [second.messages[0], { role: 'assistant', content: firstReply }, r2Request(), { role: 'assistant', content: r2.json.content }, userText('thanks')],
    });
    const r2Request = () => ({ role: 'user', content: [result(String(content[1]?.id)), { type: 'text', text: '[[think Now answer.]] [[say Done.]]' }] });
    expect((await status(s, third(content))).status).toBe(200);
    const dropped = await status(s, third([content[1] as Json]));
    expect(dropped.message).toMatch(/^messages\.3\.content\.0: Invalid `signature`/);
  });

  it('makes no thinking block unless the request asks for thinking', async () => {
    const s = await start();
    const r = await messages(s, { ...base, messages: [userText('[[think hidden]] [[say visible]]')] });
    expect(r.json.content).toStrictEqual([{ type: 'text', text: 'visible' }]);
    expect(r.json.usage.output_tokens_details.thinking_tokens).toBe(0);
    const adaptive = await messages(s, { ...base, thinking: { type: 'adaptive' }, messages: [userText('[[say visible]]')] });
    expect(adaptive.json.content[0].type).toBe('thinking');
  });
});
