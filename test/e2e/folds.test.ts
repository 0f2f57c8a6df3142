/**
 * Folds and per-tool caps through the proxy (docs/decisions.md, Folds and per-tool caps): an agent
 * loop on the official client, steered with the simulator's `[[call ...]]` directives, reads the
 * same files again, edits them, fails and runs the tests again, in a 16K window that trims. Two
 * proxies take the same calls, one with `[window] folds = false`; the simulator counts the tokens.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { readSessions, replayAll, startWorld, type World } from './harness.js';
import { ask } from './wires-client.js';

const TOOLS: ChatCompletionTool[] = ['Read', 'Edit', 'Bash'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
const FILES: Record<string, number> = { 'src/parse.ts': 260, 'src/lex.ts': 180, 'src/ast.ts': 90, 'src/emit.ts': 220 };
const WINDOW = (folds: boolean) => `
[window]
context = 16384
output_reserve = 1024
folds = ${folds}
tool_caps = [{ tools = "Bash", max_result_tokens = 120 }]
`;

type Call = [name: string, args: Record<string, unknown>];

/** The agent's calls, fixed in advance: the same for both proxies whatever the window does. */
function script(): Call[] {
  const calls: Call[] = [];
  const paths = Object.keys(FILES);
  for (let round = 0; calls.length < 90; round++) {
    const p = paths[round % paths.length]!;
    const q = paths[(round + 1) % paths.length]!;
    calls.push(['Read', { file_path: p }], ['Read', { file_path: q, offset: 20, limit: 40 }]);
    calls.push(['Edit', { file_path: p, old_string: `old ${round}`, new_string: `new ${round}` }]);
    if (round % 3 === 0) calls.push(['Edit', { file_path: p, old_string: `again ${round}`, new_string: `new ${round}` }]);
    calls.push(['Read', { file_path: p }], ['Bash', { command: 'npm test' }]);
  }
  return calls;
}

/** What each call returns; a file's text changes with every edit of it. */
class Workspace {
  readonly #edits = new Map<string, number>();
  #runs = 0;

  run([name, args]: Call): string {
    const path = String(args.file_path ?? '');
    if (name === 'Read') {
      const lines = FILES[path]!;
      const from = typeof args.offset === 'number' ? args.offset : 1;
      const to = typeof args.limit === 'number' ? from + args.limit - 1 : lines;
      const version = this.#edits.get(path) ?? 0;
      return Array.from({ length: to - from + 1 }, (_, i) => `${String(from + i).padStart(6)}\tconst v${from + i} = parse(${version}, "${path}");`).join('\n');
    }
    if (name === 'Edit') {
      if (String(args.old_string).startsWith('old') && (this.#edits.get(path) ?? 0) % 3 === 0) {
        this.#edits.set(path, (this.#edits.get(path) ?? 0) + 1);
        return '<tool_use_error>String to replace not found in file.</tool_use_error>';
      }
      this.#edits.set(path, (this.#edits.get(path) ?? 0) + 1);
      return `The file ${path} has been updated.`;
    }
    this.#runs++;
    if (this.#runs % 2 === 1) return `Exit code 1\n${'  FAIL test/parse.test.ts > reads a token: expected 3 to be 4\n'.repeat(30)}`;
    return 'Tests  48 passed (48)';
  }
}

const directive = ([name, args]: Call) => `\n[[call ${name} ${JSON.stringify(args)}]]`;

async function drive(world: World): Promise<void> {
  const calls = script();
  const ws = new Workspace();
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: `The parser drops tokens; fix it.${directive(calls[0]!)}` },
  ];
  for (let i = 0; i < calls.length; i++) {
    const a = await ask(world, 'oa', messages, TOOLS, { stream: i % 2 === 0, headers: { 'x-session-id': 'fold-e2e' } });
    expect(a.toolCalls).toHaveLength(1);
    const tc = a.toolCalls[0]!;
    messages.push({ role: 'assistant', content: a.content, tool_calls: [tc] });
    const next = calls[i + 1];
    messages.push({ role: 'tool', tool_call_id: tc.id, content: ws.run(calls[i]!) + (next === undefined ? '' : directive(next)) });
  }
}

interface Figures {
  events: LogEvent[];
  reqs: EventOf<'llm.req'>[];
  prompt: number;
  cached: number;
  breaks: number;
}

async function figures(world: World): Promise<Figures> {
  const sessions = [...(await readSessions(world)).values()];
  expect(sessions).toHaveLength(1);
  const events = sessions[0]!;
  const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
  const resps = events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
  return {
    events,
    reqs,
    prompt: resps.reduce((n, e) => n + (e.reply.usage?.prompt_tokens ?? 0), 0),
    cached: resps.reduce((n, e) => n + (e.reply.usage?.cached_tokens ?? 0), 0),
    breaks: reqs.filter((e) => e.cause !== 'none' && e.cause !== 'first').length,
  };
}

describe('folds through the proxy', () => {
  let on: World;
  let off: World;
  let a: Figures;
  let b: Figures;
  beforeAll(async () => {
    on = await startWorld({ extraToml: WINDOW(true) });
    off = await startWorld({ extraToml: WINDOW(false) });
    await drive(on);
    await drive(off);
    a = await figures(on);
    b = await figures(off);
  }, 120_000);
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  it('records the version new sessions take (window-v4) with the tool caps and the folds setting in the session recipe', () => {
    expect(a.events[0]).toMatchObject({ type: 'session.start', recipe: { version: 'window-v4', tool_caps: [{ tools: 'Bash', max_result_tokens: 120 }] } });
    expect((a.events[0] as EventOf<'session.start'>).recipe.folds).toBeUndefined();
    expect(b.events[0]).toMatchObject({ type: 'session.start', recipe: { version: 'window-v4', folds: false } });
  });

  it('folds only on requests that trim, whose cause is the trim', () => {
    const folding = a.reqs.filter((e) => e.folded !== undefined);
    expect(folding.length).toBeGreaterThan(1);
    for (const e of folding) {
      expect(e.elided.length).toBeGreaterThan(0);
      expect(e.cause).toBe('trim');
      expect(Math.min(...e.folded!.map((f) => f.seq))).toBeGreaterThanOrEqual(Math.min(...e.elided));
    }
    expect(b.reqs.some((e) => e.folded !== undefined)).toBe(false);
    // Every break in either session is a trim.
    for (const f of [a, b]) expect(f.reqs.filter((e) => e.cause !== 'none' && e.cause !== 'first' && e.cause !== 'trim')).toEqual([]);
  });

  it('breaks the prefix no more often and sends fewer prompt tokens than without folds, as the simulator counts them', () => {
    expect(a.reqs).toHaveLength(b.reqs.length);
    expect(a.breaks).toBeLessThanOrEqual(b.breaks);
    expect(a.prompt).toBeLessThan(b.prompt);
    expect(a.cached / a.prompt).toBeGreaterThan(0.8);
  });

  it('replays every request of both logs', async () => {
    for (const w of [on, off]) {
      const r = await replayAll(w);
      expect(r.code, r.stderr).toBe(0);
    }
  });
});
