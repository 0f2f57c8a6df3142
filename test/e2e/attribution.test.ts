/**
 * Cache-break attribution: each cause produced on purpose through the proxy and named in the
 * request's log line, in `proxy_cache_breaks_total{cause}` and in `proxy stats`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { readSessions, startWorld, tag, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld({
    extraToml: `
[models.oa2]
provider = "oa"
model = "sim-other"

[models.tiny]
provider = "oa"
model = "sim-tiny"
context = 3000
output_reserve = 500
`,
  });
});
afterAll(async () => world.close());

const TOOL = (description: string): ChatCompletionTool => ({
  type: 'function', function: { name: 'read_file', description, parameters: { type: 'object', properties: { path: { type: 'string' } } } },
});
const padding = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}: some context the agent gathered earlier`).join('\n');

/** Send a conversation named by `id`; returns the assistant's reply as the client keeps it. */
async function send(id: string, model: string, messages: ChatCompletionMessageParam[], tools?: ChatCompletionTool[]): Promise<ChatCompletionMessageParam> {
  const res = await world.client.chat.completions.create({ model, messages, ...(tools === undefined ? {} : { tools }) }, { headers: { 'x-session-id': id } });
  return { role: 'assistant', content: res.choices[0]!.message.content };
}

async function requestsOf(marker: string): Promise<{ req: EventOf<'llm.req'>; resp: EventOf<'llm.resp'> | undefined }[]> {
  const session = [...(await readSessions(world)).values()].find((events) => JSON.stringify(events).includes(marker));
  expect(session, `a session holding ${marker}`).toBeDefined();
  const events = session as LogEvent[];
  return events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').map((req) => ({
    req, resp: events.find((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp' && e.req === req.seq),
  }));
}

async function breaks(): Promise<Record<string, number>> {
  const text = await (await fetch(`${world.proxy.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^proxy_cache_breaks_total\{[^}]*cause="([a-z_]+)"[^}]*\} (\d+)/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  return out;
}

describe('cache-break attribution', () => {
  it('an appended request is "none", the first is "first"', async () => {
    const id = tag('plain');
    const history: ChatCompletionMessageParam[] = [{ role: 'system', content: 'sys' }, { role: 'user', content: `${id} hello` }];
    history.push(await send(id, 'oa', history), { role: 'user', content: 'more' });
    await send(id, 'oa', history);
    expect((await requestsOf(id)).map((r) => r.req.cause)).toEqual(['first', 'none']);
  });

  it('a changed system prompt is "system"', async () => {
    const id = tag('system');
    const history: ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are helpful. Date: Monday.' }, { role: 'user', content: `${id} hi` }];
    history.push(await send(id, 'oa', history), { role: 'user', content: 'next' });
    history[0] = { role: 'system', content: 'You are helpful. Date: Tuesday.' };
    await send(id, 'oa', history);
    expect((await requestsOf(id)).map((r) => r.req.cause)).toEqual(['first', 'system']);
  });

  it('a changed tool is "tools"', async () => {
    const id = tag('tools');
    const history: ChatCompletionMessageParam[] = [{ role: 'user', content: `${id} hi` }];
    history.push(await send(id, 'oa', history, [TOOL('Read a file.')]), { role: 'user', content: 'next' });
    await send(id, 'oa', history, [TOOL('Read a file, with line numbers.')]);
    expect((await requestsOf(id)).map((r) => r.req.cause)).toEqual(['first', 'tools']);
  });

  it('a client compaction is "client_rewrite"', async () => {
    const id = tag('compact');
    const history: ChatCompletionMessageParam[] = [{ role: 'system', content: 'sys' }, { role: 'user', content: `${id} start` }];
    for (let i = 0; i < 3; i++) history.push(await send(id, 'oa', history), { role: 'user', content: `step ${i}` });
    await send(id, 'oa', [{ role: 'system', content: 'sys' }, { role: 'user', content: 'Summary: we did three steps.' }]);
    expect((await requestsOf(id)).map((r) => r.req.cause)).toEqual(['first', 'none', 'none', 'client_rewrite']);
  });

  it('another model is "model_switch"', async () => {
    const id = tag('switch');
    const history: ChatCompletionMessageParam[] = [{ role: 'user', content: `${id} hi` }];
    history.push(await send(id, 'oa', history), { role: 'user', content: 'next' });
    await send(id, 'oa2', history);
    expect((await requestsOf(id)).map((r) => r.req.cause)).toEqual(['first', 'model_switch']);
  });

  it('a window that crosses high water is "trim", on exactly the requests that elided', async () => {
    const id = tag('trim');
    const history: ChatCompletionMessageParam[] = [{ role: 'system', content: 'sys' }];
    for (let i = 0; i < 16; i++) {
      history.push({ role: 'user', content: `${id} turn ${i}: ${'words of the task '.repeat(24)} [[len 100]]` });
      history.push(await send(id, 'tiny', history));
    }
    const rows = await requestsOf(id);
    const trimmed = rows.filter((r) => r.req.elided.length > 0);
    expect(trimmed.length).toBeGreaterThan(1);
    for (const r of rows.slice(1)) expect(r.req.cause).toBe(r.req.elided.length > 0 ? 'trim' : 'none');
  });

  it('an expired provider cache is "provider_miss": the prefix held, the provider read less', async () => {
    const id = tag('expiry');
    const history: ChatCompletionMessageParam[] = [{ role: 'system', content: padding(200) }, { role: 'user', content: `${id} hi` }];
    history.push(await send(id, 'oa', history), { role: 'user', content: 'next' });
    history.push(await send(id, 'oa', history), { role: 'user', content: 'and next' });
    world.sim.advance(301_000); // past the simulator's 5-minute TTL
    await send(id, 'oa', history);
    const rows = await requestsOf(id);
    expect(rows.map((r) => r.req.cause)).toEqual(['first', 'none', 'none']);
    expect(rows[1]!.resp?.provider_miss).toBeUndefined();
    expect(rows[1]!.resp?.reply.usage?.cached_tokens).toBeGreaterThan(1024);
    expect(rows[2]!.resp?.provider_miss).toBe(true);
    expect(rows[2]!.resp?.reply.usage?.cached_tokens).toBe(0);
  });

  it('the metric counts every cause', async () => {
    const counted = await breaks();
    for (const cause of ['first', 'none', 'system', 'tools', 'client_rewrite', 'model_switch', 'trim', 'provider_miss']) {
      expect(counted[cause], cause).toBeGreaterThan(0);
    }
  });
});
