/**
 * Side requests on the conversation's prefix (docs/how-it-works.md, Side requests): an opencode
 * compaction prompt and title prompt (chat wire) and Codex's local compaction (Responses wire,
 * streamed), under the conversation's id, on a keyed simulator of eight replicas, are built as the conversation's last request went (same system, same catalog bytes with
 * `tool_choice: "none"`, the history and its last reply) with the side's instruction appended, so
 * they read the conversation's cached prefix. The conversation's log is untouched, the side
 * sessions replay to their digests, the conversation goes on in its own session, and a request of
 * no known shape is served as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/canonical.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { buildAt } from '../../src/window/index.js';
import { newSessions, openTappedWorld, readSessions, sessionIds, tag, type Tap, type World } from './harness.js';
import { RESPONSE_TOOLS, respond } from './responses-client.js';
import { contentOf, post } from './wire-faults.js';
import type OpenAI from 'openai';

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

let w: World & { tap: Tap };
beforeAll(async () => {
  w = await openTappedWorld('side', { replicas: 8, routing: 'random' }, `
[models.small]
provider = "up"
model = "sim-small"

[models.tight]
provider = "up"
model = "sim-model"
context = 16000
output_reserve = 2000
high_water = 6000
low_water = 3000
`);
});
afterAll(async () => {
  await w?.close();
});

const TOOLS = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'bash', description: 'Run a command.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } },
];

/** A system prompt of about 1,600 tokens: above the simulator's 1,024-token cache minimum by itself. */
function longSystem(t: string): string {
  return Array.from({ length: 120 }, (_, i) => `Rule ${i + 1} of ${t}: keep the answer short, name files exactly.`).join('\n');
}

async function send(body: Record<string, unknown>, headers: Record<string, string>) {
  const before = w.sim.requests.length;
  const r = await post(w.proxy.url, body, headers);
  expect(r.status, r.text).toBe(200);
  expect(w.sim.requests.length).toBe(before + 1);
  return { reply: contentOf(r), sim: w.sim.requests.at(-1)!, wire: w.tap.requests.at(-1)! };
}

/** A three-turn conversation under an explicit id; returns its history, last exchange and session. */
async function conversation(t: string, model = 'm') {
  const named = { 'x-session-id': `conv-${t}` };
  const before = await sessionIds(w);
  const history: Msg[] = [{ role: 'system', content: longSystem(t) }];
  let last;
  for (let i = 1; i <= 3; i++) {
    history.push({ role: 'user', content: `step ${i} of ${t}: ${'context words '.repeat(150)} [[say done with step ${i}]]` });
    last = await send({ model, messages: history, tools: TOOLS }, named);
    history.push({ role: 'assistant', content: last.reply });
  }
  const created = await newSessions(w, before);
  expect(created.size).toBe(1);
  const [id, events] = [...created][0]!;
  return { named, history, last: last!, id, events };
}

function start(events: readonly LogEvent[]): EventOf<'session.start'> {
  return events[0] as EventOf<'session.start'>;
}

/** Every logged request of the session rebuilds to its digest (what `proxy replay` checks). */
function replays(events: readonly LogEvent[]): number {
  const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
  for (const r of reqs) expect(buildAt(events, r.seq).digest).toBe(r.digest);
  return reqs.length;
}

const COMPACTION = 'Provide a detailed prompt for continuing our conversation above.\nFocus on information that would be helpful for continuing the conversation, including what we did, what we\'re doing, which files we\'re working on, and what we\'re going to do next.';

describe('side requests on the conversation\'s prefix (OpenAI chat wire, keyed replicas)', () => {
  it('an opencode compaction prompt reads the conversation\'s prefix and leaves its log alone', async () => {
    const t = tag('compact');
    const conv = await conversation(t);
    const key = sha256Hex(conv.id);
    const logBefore = JSON.stringify((await readSessions(w)).get(conv.id));

    // opencode's compaction call: its own system prompt, the history, the prompt last, no tools.
    const compaction = await send({
      model: 'm', tools: [],
      messages: [{ role: 'system', content: 'You are a helpful AI assistant tasked with summarizing conversations.' }, ...conv.history.slice(1), { role: 'user', content: `${COMPACTION} [[say the summary]]` }],
    }, conv.named);
    expect(compaction.reply).toBe('the summary');

    // The same key, replica, catalog bytes and system; the history as the last request sent it, its reply, then the instruction.
    expect(compaction.sim.sessionKey).toBe(key);
    expect(compaction.sim.replica).toBe(conv.last.sim.replica);
    expect(JSON.stringify(compaction.wire.body.tools)).toBe(JSON.stringify(conv.last.wire.body.tools));
    expect(compaction.wire.body.tool_choice).toBe('none');
    const lastMessages = conv.last.wire.body.messages as unknown[];
    const sideMessages = compaction.wire.body.messages as { role: string; content: string }[];
    expect(sideMessages.slice(0, lastMessages.length)).toStrictEqual(lastMessages);
    expect(sideMessages[lastMessages.length]).toMatchObject({ role: 'assistant', content: conv.last.reply });
    expect(sideMessages).toHaveLength(lastMessages.length + 2);
    expect(sideMessages.at(-1)!.role).toBe('user');
    expect(sideMessages.at(-1)!.content.startsWith('You are a helpful AI assistant tasked with summarizing conversations.\n\nProvide a detailed prompt')).toBe(true);
    // It reads the conversation's cached prefix: at least 90% of the last request's prompt.
    expect(compaction.sim.cachedTokens).toBeGreaterThanOrEqual(0.9 * conv.last.sim.promptTokens);

    const sessions = await readSessions(w);
    expect(JSON.stringify(sessions.get(conv.id))).toBe(logBefore);
    const side = [...sessions].filter(([, ev]) => start(ev).parent?.session === conv.id);
    expect(side).toHaveLength(1);
    const [, sideEvents] = side[0]!;
    expect(start(sideEvents)).toMatchObject({ side: { kind: 'compaction', client: 'opencode' }, ids: [], lineage: conv.id });
    // The parent's events, then the instruction, one request and its reply.
    expect(sideEvents.slice(-3).map((e) => e.type)).toStrictEqual(['client.msg', 'llm.req', 'llm.resp']);
    expect((sideEvents.at(-2) as EventOf<'llm.req'>).params.tool_choice).toBe('none');
    expect(replays(sideEvents)).toBe(4);

    // The conversation goes on in its own session, reading its own prefix.
    const next = await send({ model: 'm', tools: TOOLS, messages: [...conv.history, { role: 'user', content: 'and the tests [[say tested]]' }] }, conv.named);
    expect(next.reply).toBe('tested');
    const after = (await readSessions(w)).get(conv.id)!;
    expect(after.slice(0, JSON.parse(logBefore).length)).toStrictEqual(JSON.parse(logBefore));
    expect(after.filter((e) => e.type === 'client.rewrite')).toHaveLength(0);
    expect(after.filter((e) => e.type === 'catalog')).toHaveLength(1);
    expect(next.sim.cachedTokens).toBeGreaterThanOrEqual(0.9 * conv.last.sim.promptTokens);
    expect((await newSessions(w, new Set([conv.id, side[0]![0]]))).size).toBe(0);
  });

  it('an opencode title prompt goes after the conversation\'s history and reads its prefix', async () => {
    const t = tag('title');
    const conv = await conversation(t);
    const logBefore = JSON.stringify((await readSessions(w)).get(conv.id));
    const title = await send({
      model: 'm',
      messages: [
        { role: 'system', content: 'You are a title generator. You output ONLY a thread title.' },
        { role: 'user', content: 'Generate a title for this conversation: [[say Steps of the task]]' },
        { role: 'user', content: `step 1 of ${t}` },
      ],
    }, conv.named);
    expect(title.reply).toBe('Steps of the task');
    const sideMessages = title.wire.body.messages as { role: string; content: string }[];
    expect(sideMessages.at(-1)).toStrictEqual({
      role: 'user',
      content: `You are a title generator. You output ONLY a thread title.\n\nGenerate a title for this conversation: [[say Steps of the task]]\n\nstep 1 of ${t}`,
    });
    expect(JSON.stringify(title.wire.body.tools)).toBe(JSON.stringify(conv.last.wire.body.tools));
    expect(title.sim.replica).toBe(conv.last.sim.replica);
    expect(title.sim.cachedTokens).toBeGreaterThanOrEqual(0.9 * conv.last.sim.promptTokens);

    const sessions = await readSessions(w);
    expect(JSON.stringify(sessions.get(conv.id))).toBe(logBefore);
    const side = [...sessions.values()].filter((ev) => start(ev).parent?.session === conv.id);
    expect(side).toHaveLength(1);
    expect(start(side[0]!).side).toStrictEqual({ kind: 'title', client: 'opencode' });
    expect(replays(side[0]!)).toBe(4);
  });

  it('a side request that crosses the high water is not trimmed: it fits, and its prefix holds', async () => {
    const t = tag('tight');
    const conv = await conversation(t, 'tight');
    const convReq = (await readSessions(w)).get(conv.id)!.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').at(-1)!;
    expect(convReq.est_tokens).toBeLessThan(6000);
    expect(convReq.elided).toStrictEqual([]);
    const compaction = await send({
      model: 'tight', tools: [],
      messages: [...conv.history, { role: 'user', content: `${COMPACTION} ${'keep every detail. '.repeat(300)} [[say the summary]]` }],
    }, conv.named);
    expect(compaction.reply).toBe('the summary');
    expect(compaction.sim.cachedTokens).toBeGreaterThanOrEqual(0.9 * conv.last.sim.promptTokens);
    const side = [...(await readSessions(w)).values()].find((ev) => start(ev).parent?.session === conv.id)!;
    const req = side.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').at(-1)!;
    // Above the recipe's high water, below the window's ceiling (context less the reply's reserve).
    expect(req.est_tokens).toBeGreaterThan(6000);
    expect(req.high_water).toBe(14000);
    expect(req.elided).toStrictEqual([]);
    expect(replays(side)).toBe(4);
    // Rebuilt under the recipe's own line, the same request would have been trimmed.
    const events = side.filter((e) => e.seq < req.seq);
    const { high_water: _line, ...asIfRecipe } = req;
    expect(buildAt([...events, asIfRecipe as LogEvent], req.seq).elided.length).toBeGreaterThan(0);
  });

  it('Codex\'s local compaction, streamed on the Responses wire, reads the conversation\'s prefix', async () => {
    const t = tag('codex');
    const key = { prompt_cache_key: `thread-${t}` };
    const input: OpenAI.Responses.ResponseInputItem[] = [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: longSystem(t) }] }];
    const before = await sessionIds(w);
    let lastUp;
    for (let i = 1; i <= 3; i++) {
      input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `step ${i} of ${t}: ${'context words '.repeat(150)} [[say done ${i}]]` }] });
      const r = await respond(w, { model: 'm', input, tools: RESPONSE_TOOLS, store: false, ...key }, true);
      lastUp = w.sim.requests.at(-1)!;
      input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: r.text, annotations: [] }] } as unknown as OpenAI.Responses.ResponseInputItem);
    }
    const [convId] = [...(await newSessions(w, before)).keys()];
    const logBefore = JSON.stringify((await readSessions(w)).get(convId!));
    const compact = 'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.';
    const r = await respond(w, { model: 'm', input: [...input, { type: 'message', role: 'user', content: [{ type: 'input_text', text: `${compact} [[say handoff]]` }] }], tools: RESPONSE_TOOLS, store: false, ...key }, true);
    expect(r.text).toBe('handoff');
    const up = w.sim.requests.at(-1)!;
    expect(up.sessionKey).toBe(lastUp!.sessionKey);
    expect(up.replica).toBe(lastUp!.replica);
    expect(up.cachedTokens).toBeGreaterThanOrEqual(0.9 * lastUp!.promptTokens);
    // The same catalog was offered: nothing to say about tools.
    expect(w.tap.requests.at(-1)!.body.tool_choice).toBeUndefined();
    const sessions = await readSessions(w);
    expect(JSON.stringify(sessions.get(convId!))).toBe(logBefore);
    const side = [...sessions.values()].filter((ev) => start(ev).parent?.session === convId);
    expect(side.map((ev) => start(ev).side)).toStrictEqual([{ kind: 'compaction', client: 'Codex' }]);
    expect(replays(side[0]!)).toBe(4);
  });

  it('a side request on another route, or of no known shape, is served as before', async () => {
    const t = tag('plain');
    const conv = await conversation(t);
    const before = await sessionIds(w);
    // A title prompt of no known shape: a session of its own with the conversation's id, its own body.
    const plain = await send({ model: 'm', messages: [{ role: 'system', content: 'You write five-word titles.' }, { role: 'user', content: `Title for step 1 of ${t} [[say Five words]]` }] }, conv.named);
    expect(plain.reply).toBe('Five words');
    expect(plain.wire.body.messages).toHaveLength(2);
    expect(plain.sim.cachedTokens).toBe(0);
    // A known shape on another model: planned as before too (nothing of the prefix is cached for it).
    const other = await send({
      model: 'small',
      messages: [{ role: 'system', content: 'You are a title generator. You output ONLY a thread title.' }, { role: 'user', content: `step 1 of ${t} [[say Other model]]` }],
    }, conv.named);
    expect(other.wire.body.messages).toHaveLength(2);
    const created = await newSessions(w, before);
    expect(created.size).toBe(2);
    for (const events of created.values()) {
      expect(start(events).side).toBeUndefined();
      expect(start(events).ids).toStrictEqual([`conv-${t}`]);
      expect(start(events).lineage).toBe(conv.id);
    }
  });
});
