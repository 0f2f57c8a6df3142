/**
 * Claude Code's side requests on the Anthropic Messages wire (docs/how-it-works.md, Side requests):
 * its compaction prompt and its session-naming prompt, under the conversation's
 * `x-claude-code-session-id`, read the conversation's cached prefix, to the Anthropic simulator
 * (cache_control breakpoints; the side keeps the conversation's `tool_choice` and thinking, which
 * Anthropic's message cache is keyed on) and to a keyed chat upstream of eight replicas
 * (`tool_choice: "none"` over the same catalog). The conversation's log is untouched and every side
 * session replays to its digests (`proxy replay --all`).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { newSessions, readSessions, replayAll, sessionIds, tag } from './harness.js';
import { startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
let client: Anthropic;
beforeAll(async () => {
  w = await startWiresWorld({
    sim: { replicas: 8, routing: 'random' },
    models: `
[models.claude]
provider = "an"
model = "claude-sim"

[models.claude-chat]
provider = "oa"
model = "sim-model"
`,
  });
  client = new Anthropic({ baseURL: w.proxy.url, apiKey: 'sk-ant-test', maxRetries: 0 });
});
afterAll(async () => {
  await w?.close();
});

const TOOLS: Anthropic.Tool[] = [
  { name: 'Read', description: 'Read a file.', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } },
  { name: 'Bash', description: 'Run a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
];
const BILLING = 'x-anthropic-billing-header: cc_version=2.1.328.abc; cc_entrypoint=sdk-cli;';
const IDENTITY = 'You are Claude Code, Anthropic\'s official CLI for Claude.';
const COMPACT = 'CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nYour task is to create a detailed summary of the conversation so far, paying close attention to the user\'s explicit requests and your previous actions.';

function system(t: string): Anthropic.TextBlockParam[] {
  return [
    { type: 'text', text: BILLING },
    { type: 'text', text: `${IDENTITY}\nYou work on ${t}. ${'Stable instructions for the agent. '.repeat(300)}`, cache_control: { type: 'ephemeral' } },
  ];
}

interface Upstream {
  promptTokens: number;
  cachedTokens: number;
  replica: number | null;
}

/** What the simulator recorded of the latest request on the route's wire. */
function lastUpstream(model: string): Upstream {
  if (model === 'claude') {
    const r = w.sim.anthropicRequests.at(-1)!;
    return { promptTokens: r.promptTokens, cachedTokens: r.cachedTokens, replica: null };
  }
  const r = w.sim.requests.at(-1)!;
  return { promptTokens: r.promptTokens, cachedTokens: r.cachedTokens, replica: r.replica };
}

function path(model: string): string {
  return model === 'claude' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
}

async function ask(params: Anthropic.MessageCreateParamsNonStreaming, sessionId: string) {
  const reply = await client.messages.create(params, { headers: { 'x-claude-code-session-id': sessionId, 'anthropic-beta': 'interleaved-thinking-2025-05-14' } });
  const sent = wire(w, path(String(params.model))).at(-1)!;
  expect(sent.status).toBe(200);
  return { reply, text: reply.content.filter((b): b is Anthropic.TextBlock => b.type === 'text').map((b) => b.text).join(''), up: lastUpstream(String(params.model)), sent };
}

function start(events: readonly LogEvent[]): EventOf<'session.start'> {
  return events[0] as EventOf<'session.start'>;
}

for (const model of ['claude', 'claude-chat']) {
  describe(`Claude Code's side requests on the conversation's prefix (${model})`, () => {
    it('a compaction and a session-naming request read the conversation\'s prefix; its log is untouched; every side session replays', async () => {
      const t = tag(`cc-${model}`);
      const sessionId = `cc-${t}`;
      const before = await sessionIds(w);
      const messages: Anthropic.MessageParam[] = [];
      const thinking = model === 'claude' ? { thinking: { type: 'enabled' as const, budget_tokens: 2048 } } : {};
      let last;
      for (let i = 1; i <= 3; i++) {
        messages.push({ role: 'user', content: `step ${i} of ${t}: ${'context words '.repeat(150)} [[say done with step ${i}]]` });
        last = await ask({ model, max_tokens: 8192, system: system(t), tools: TOOLS, messages, ...thinking }, sessionId);
        messages.push({ role: 'assistant', content: last.reply.content });
      }
      const created = await newSessions(w, before);
      expect(created.size).toBe(1);
      const [convId] = [...created.keys()];
      const logBefore = JSON.stringify(created.get(convId!));

      // Compaction: the whole history, Claude Code's tools, the prompt last, no thinking asked.
      const compaction = await ask({
        model, max_tokens: 20000, system: system(t), tools: TOOLS,
        messages: [...messages, { role: 'user', content: `${COMPACT} [[say the summary]]` }],
      }, sessionId);
      expect(compaction.text).toBe('the summary');
      expect(compaction.up.cachedTokens).toBeGreaterThanOrEqual(0.9 * last!.up.promptTokens);

      // Naming the session: its own system prompt, the first message quoted, no tools.
      const title = await ask({
        model, max_tokens: 512,
        system: [{ type: 'text', text: BILLING }, { type: 'text', text: IDENTITY }, { type: 'text', text: 'You are naming a coding session so the user can pick it out of a long list of sessions. [[say Steps of the task]]' }],
        messages: [{ role: 'user', content: `step 1 of ${t}` }],
      }, sessionId);
      expect(title.text).toBe('Steps of the task');
      expect(title.up.cachedTokens).toBeGreaterThanOrEqual(0.9 * last!.up.promptTokens);

      for (const side of [compaction, title]) {
        // The conversation's catalog and system, byte for byte.
        expect(JSON.stringify(side.sent.body.tools)).toBe(JSON.stringify(last!.sent.body.tools));
        if (model === 'claude') {
          expect(JSON.stringify(side.sent.body.system)).toBe(JSON.stringify(last!.sent.body.system));
          // What Anthropic keys its message cache on stays as the conversation sent it.
          expect(side.sent.body.thinking).toStrictEqual(last!.sent.body.thinking);
          expect(side.sent.body.tool_choice).toStrictEqual(last!.sent.body.tool_choice);
        } else {
          expect(side.up.replica).toBe(last!.up.replica);
          const convMessages = last!.sent.body.messages as unknown[];
          expect((side.sent.body.messages as unknown[]).slice(0, convMessages.length)).toStrictEqual(convMessages);
        }
      }
      // Only the title offered no tools: on the chat wire it may call none.
      if (model === 'claude-chat') {
        expect(title.sent.body.tool_choice).toBe('none');
        expect(compaction.sent.body.tool_choice).toBeUndefined();
      }

      const sessions = await readSessions(w);
      expect(JSON.stringify(sessions.get(convId!))).toBe(logBefore);
      const sides = [...sessions.values()].filter((ev) => start(ev).parent?.session === convId);
      expect(sides.map((ev) => start(ev).side).sort((a, b) => a!.kind.localeCompare(b!.kind))).toStrictEqual([
        { kind: 'compaction', client: 'Claude Code' },
        { kind: 'title', client: 'Claude Code' },
      ]);
      const titleLog = sides.find((ev) => start(ev).side?.kind === 'title')!;
      const instruction = titleLog.filter((e) => e.type === 'client.msg').at(-1) as EventOf<'client.msg'>;
      expect(instruction.msg).toStrictEqual({
        role: 'user',
        content: `${IDENTITY}\n\nYou are naming a coding session so the user can pick it out of a long list of sessions. [[say Steps of the task]]\n\nstep 1 of ${t}`,
      });

      // The conversation goes on in its own session.
      messages.push({ role: 'user', content: 'and the tests [[say tested]]' });
      const next = await ask({ model, max_tokens: 8192, system: system(t), tools: TOOLS, messages, ...thinking }, sessionId);
      expect(next.text).toBe('tested');
      const after = (await readSessions(w)).get(convId!)!;
      expect(after.slice(0, JSON.parse(logBefore).length)).toStrictEqual(JSON.parse(logBefore));
      expect(after.some((e) => e.type === 'client.rewrite')).toBe(false);
      expect((await newSessions(w, before)).size).toBe(3);
    });
  });
}

it('every session, the side ones included, replays to its digests', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as { failed: number; results: { session: string; ok: boolean }[] };
  expect(report.failed).toBe(0);
  const sides = [...(await readSessions(w))].filter(([, ev]) => start(ev).side !== undefined).map(([id]) => id);
  expect(sides).toHaveLength(4);
  // Each side session's own request and the parent's copied ones: four each, all verified.
  for (const id of sides) {
    const rows = report.results.filter((x) => x.session === id);
    expect(rows).toHaveLength(4);
    expect(rows.every((x) => x.ok)).toBe(true);
  }
});
