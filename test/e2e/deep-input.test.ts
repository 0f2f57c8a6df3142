/**
 * JSON nested deeper than the proxy reads (docs/decisions.md, A nesting limit for client JSON):
 * each is a 400 `json_too_deep` naming the field and the limit, sent raw (the SDK's own
 * JSON.stringify would overflow first), nothing is logged, and the same conversation goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/core/json-depth.js';
import type { LogEvent } from '../../src/core/events.js';
import { countLogLines, readSessions, startWorld, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.close();
});

interface Reply {
  status: number;
  json: {
    error?: { message: string; type: string; param: string | null; code: string | null };
    choices?: { message: { content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] } }[];
  };
}

async function post(body: string): Promise<Reply> {
  const res = await fetch(`${w.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer test' }, body });
  return { status: res.status, json: (await res.json()) as Reply['json'] };
}

/** The request body as text, with `deep` spliced in raw where `"@DEEP@"` stands. */
function bodyWith(request: Record<string, unknown>, deep = ''): string {
  return JSON.stringify(request).replace('"@DEEP@"', deep);
}

function expectTooDeep(r: Reply, param: string): void {
  expect(r.status).toBe(400);
  expect(r.json.error).toMatchObject({ code: 'json_too_deep', type: 'invalid_request_error', param });
  expect(r.json.error!.message).toBe(`${param} nests deeper than ${MAX_JSON_DEPTH} levels, the most the proxy reads.`);
}

const TOOLS = [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
const nestedArrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
/** A schema nested `n` objects deep (`{"type":"object","properties":{"a":...}}`): about 10 bytes a level. */
const nestedSchema = (n: number) => '{"type":"object","properties":{"a":'.repeat(n) + '{}' + '}}'.repeat(n);

describe('a conversation that meets deep JSON', () => {
  const user = { role: 'user', content: 'deep-input first [[call read {"path":"a.txt"}]]' };
  let call: { id: string; type: string; function: { name: string; arguments: string } };
  let history: Record<string, unknown>[];
  let linesBefore: number;

  beforeAll(async () => {
    const first = await post(JSON.stringify({ model: 'ds', tools: TOOLS, messages: [user] }));
    expect(first.status).toBe(200);
    call = first.json.choices![0]!.message.tool_calls![0]!;
    history = [user, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: 'contents of a.txt' }];
    linesBefore = await countLogLines(w);
  });

  it('tool call arguments nesting 50,000 brackets: 400 naming the arguments', async () => {
    const deepCall = { ...call, function: { ...call.function, arguments: nestedArrays(50_000) } };
    const messages = [user, { role: 'assistant', content: null, tool_calls: [deepCall] }, history[2]];
    expectTooDeep(await post(JSON.stringify({ model: 'ds', tools: TOOLS, messages })), 'messages[1].tool_calls[0].function.arguments');
  });

  it('arguments nested exactly to the limit are answered', async () => {
    // Not logged as the conversation's own call (the arguments differ), so sent as a new one.
    const okCall = { id: 'call-ok', type: 'function', function: { name: 'read', arguments: nestedArrays(MAX_JSON_DEPTH) } };
    const r = await post(JSON.stringify({ model: 'ds', messages: [{ role: 'user', content: 'deep-input limit' }, { role: 'assistant', content: null, tool_calls: [okCall] }, { role: 'tool', tool_call_id: 'call-ok', content: 'x [[say ok]]' }] }));
    expect(r.status).toBe(200);
    linesBefore = await countLogLines(w);
  });

  it('a tool schema nested 10,000 levels: 400 naming the tool', async () => {
    const tools = [...TOOLS, { type: 'function', function: { name: 'deep', parameters: '@DEEP@' } }];
    expectTooDeep(await post(bodyWith({ model: 'ds', tools, messages: history }, nestedSchema(10_000))), 'tools[1].function.parameters');
  });

  it('a content part carrying a deeply nested field: 400 naming the part', async () => {
    const messages = [...history, { role: 'user', content: [{ type: 'text', text: 'hi', extra: '@DEEP@' }] }];
    expectTooDeep(await post(bodyWith({ model: 'ds', tools: TOOLS, messages }, nestedArrays(10_000))), 'messages[3].content[0]');
  });

  it('a response_format one level past the limit: 400; at the limit: answered', async () => {
    // The body is level 1 and response_format level 2, so MAX_JSON_DEPTH - 1 arrays reach the limit.
    const atLimit = nestedArrays(MAX_JSON_DEPTH - 1);
    const over = nestedArrays(MAX_JSON_DEPTH);
    // The param names four steps from the top at most: the rest of the path says nothing more.
    expectTooDeep(await post(bodyWith({ model: 'ds', tools: TOOLS, messages: history, response_format: '@DEEP@' }, over)), 'response_format[0][0][0]');
    expect((await post(bodyWith({ model: 'ds', messages: [{ role: 'user', content: 'deep-input rf [[say ok]]' }], response_format: '@DEEP@' }, atLimit))).status).toBe(200);
    linesBefore = await countLogLines(w);
  });

  it('none of the refused requests was logged, and the conversation goes on in its own log', async () => {
    expect(await countLogLines(w)).toBe(linesBefore);
    const r = await post(JSON.stringify({ model: 'ds', tools: TOOLS, messages: history }));
    expect(r.status).toBe(200);
    const sessions = await readSessions(w);
    const mine = [...sessions.values()].filter((events) => events.some((e) => e.type === 'client.msg' && e.msg.role === 'user' && e.msg.content === user.content));
    expect(mine).toHaveLength(1);
    const events: LogEvent[] = mine[0]!;
    expect(events.filter((e) => e.type === 'llm.resp')).toHaveLength(2);
    expect(events.some((e) => e.type === 'client.rewrite')).toBe(false);
  });
});
