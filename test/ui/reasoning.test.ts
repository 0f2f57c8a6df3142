/**
 * Thinking blocks the upstream dropped, where a person looks for them (docs/decisions/0009): a
 * tool loop with signed thinking through the official `@anthropic-ai/sdk` client, whose second
 * request comes with another system prompt. The simulator, playing a model that binds a block to
 * its prefix, drops the first reply's block from that request and says so; the session page marks
 * the break and its row, the request page says how many of the blocks given back were dropped, and
 * each number is `proxy stats`' own.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxy as cli } from '../cli/helpers.js';
import { CLIENT_KEY, expectAccessible, figure, newId, screenshot, sessionList, startUiWorld, statsJson, type UiWorld } from './world.js';

let w: UiWorld;
let id: string;
beforeAll(async () => {
  w = await startUiWorld('reasoning');
  const before = await sessionList(w.dataDir);
  const client = new Anthropic({ baseURL: w.proxy.url, apiKey: CLIENT_KEY, maxRetries: 0 });
  const tools: Anthropic.Tool[] = [{ name: 'read_file', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
  const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'read the file [[think the file first]] [[call read_file {"path":"a.ts"}]]' }];
  const first = await client.messages.create({ model: 'thinker', max_tokens: 4096, tools, messages, thinking, system: 'You are careful. Rules, first version.' });
  messages.push({ role: 'assistant', content: first.content });
  const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
  messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'export const a = 1; [[think it is short]] [[say read it]]' }] });
  // Another system prompt: the first reply's signed block is bound to the old one.
  const second = await client.messages.create({ model: 'thinker', max_tokens: 4096, tools, messages, thinking, system: 'You are careful. Rules, second version.' });
  expect(second.content.at(-1)).toMatchObject({ type: 'text', text: 'read it' });
  id = await newId(w.dataDir, before);
}, 90_000);
afterAll(async () => {
  await w?.close();
});

describe('thinking blocks the upstream dropped', () => {
  it('proxy stats counts them on the request with the changed system prompt, and names it', () => {
    const stats = statsJson(w, id);
    expect(stats.requests.map((r) => [r.cause, r.dropped_blocks])).toEqual([['first', 0], ['system', 1]]);
    const text = cli(['stats', id, '--data-dir', w.dataDir, '--config', w.configFile]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`thinking blocks dropped\\s+1 by the upstream, bound to a prefix that changed \\(seq ${stats.requests[1]!.seq}\\)`));
  });

  it('the session page marks the break and its row with the count proxy stats gives', async () => {
    const stats = statsJson(w, id);
    const seq = stats.requests[1]!.seq;
    await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}`);
    await w.page.getByTestId('requests').waitFor();
    const brk = w.page.locator(`[data-testid="break"][data-seq="${seq}"]`);
    expect(await brk.getAttribute('data-cause')).toBe('system');
    expect(Number(await brk.getByTestId('dropped-blocks').getAttribute('data-value'))).toBe(1);
    expect(await brk.getByTestId('dropped-blocks').textContent()).toBe('1 thinking block dropped');
    const marked = await w.page.getByTestId('request-row').evaluateAll((trs) => trs.map((tr) => {
      const badge = tr.querySelector('[data-testid="dropped-blocks"]');
      return [Number(tr.getAttribute('data-seq')), badge === null ? 0 : Number(badge.getAttribute('data-value'))];
    }));
    expect(marked).toEqual(stats.requests.map((r) => [r.seq, r.dropped_blocks]));
    expect(await figure(w.page, 'session-requests')).toBe(stats.session.requests);
    await expectAccessible(w.page);
    await screenshot(w.page, 'session-dropped-thinking');
  });

  it('the request page, opened from the break, says how many of the blocks given back were dropped', async () => {
    const seq = statsJson(w, id).requests[1]!.seq;
    await w.page.locator(`[data-testid="break"][data-seq="${seq}"] a`).click();
    await w.page.getByTestId('digest-verified').waitFor();
    expect(w.page.url()).toContain(`#/s/${id}/r/${seq}`);
    expect(await w.page.getByTestId('digest-verified').getAttribute('data-value')).toBe('true');
    // The block went back (the log's, on its own origin), and the upstream dropped it.
    const back = w.page.getByTestId('reasoning-back').locator('li');
    expect(await back.count()).toBe(1);
    expect(await back.first().textContent()).toContain('anthropic.thinking (an/claude-sonnet-5-5)');
    expect(await figure(w.page, 'reasoning-dropped')).toBe(1);
    expect(await w.page.getByTestId('reasoning-dropped').textContent()).toContain('The upstream dropped 1 of these blocks.');
    await expectAccessible(w.page);
    await screenshot(w.page, 'request-dropped-thinking');
  });

  it('the first request, whose block nothing invalidated, shows none dropped', async () => {
    const seq = statsJson(w, id).requests[0]!.seq;
    await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}/r/${seq}`);
    // The same page, another hash: the last request's figures stay until this one's arrive, and
    // only this one, the session's first, has no difference from a predecessor.
    await w.page.getByTestId('diff-none').waitFor();
    expect(await w.page.getByTestId('digest-verified').getAttribute('data-value')).toBe('true');
    expect(await w.page.getByTestId('reasoning-back').locator('li').count()).toBe(0);
    expect(await w.page.getByTestId('reasoning-dropped').count()).toBe(0);
    const api = await w.context.request.get(`${w.proxy.url}/api/sessions/${encodeURIComponent(id)}/requests/${seq}`);
    expect(((await api.json()) as { dropped_blocks: number | null }).dropped_blocks).toBe(0);
  });
});
