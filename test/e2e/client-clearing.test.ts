/**
 * Client-side clearing through the proxy (docs/decisions/0005-client-clearing.md): an agent loop on
 * the official client reads files for 44 steps in a 12K window that trims, and clears its old tool
 * results in place the way qwen-code does (every result but the newest five, all tools) and the way
 * Claude Code's microcompact does (results of its compactable tools only, Read here, but the newest
 * three). A third agent, the same in every other way, never clears. The tap records each upstream
 * body; the simulator counts the cached tokens of each. `CLEARING_FIGURES=1` prints the figures.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChatCompletionMessageParam, ChatCompletionTool, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { renderPrompt, BLOCK_TOKENS, TOKEN_BYTES } from '../../src/sim/tokens.js';
import { MIN_CACHED_PROMPT } from '../../src/sim/engine.js';
import { openTappedWorld, readSessions, replayAll, sessionsDir, type Tap, type World } from './harness.js';
import { ask } from './wires-client.js';

const MARKER = '[Old tool result content cleared]';
const STEPS = 44;
/** The steps before whose request the clearing agents clear (qwen-code clears when its results pass a size). */
const CLEAR_AT = [14, 30];
const TOOLS: ChatCompletionTool[] = ['Read', 'TodoWrite'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
const WINDOW = `
[window]
context = 12288
output_reserve = 1024
max_result_tokens = 1000
`;

type Policy = 'none' | 'qwen-code' | 'claude-code';
type Call = [name: string, args: Record<string, unknown>];

/** The agent's calls, fixed in advance: ten files read in turn, a todo update every fourth step. */
const call = (i: number): Call => (i % 4 === 3 ? ['TodoWrite', { todos: [{ content: `step ${i}`, status: 'in_progress' }] }] : ['Read', { file_path: `src/f${i % 10}.ts` }]);

function run([name, args]: Call, i: number): string {
  if (name === 'TodoWrite') return 'Todos have been modified successfully.';
  const path = String(args.file_path);
  return Array.from({ length: 40 }, (_, k) => `${String(k + 1).padStart(6)}\tconst v${k} = parse(${i}, "${path}"); // line ${k + 1}`).join('\n');
}

const directive = ([name, args]: Call) => `\n[[call ${name} ${JSON.stringify(args)}]]`;

/** Clear old results in place, as the agent would: its history keeps every message, the content goes. */
function clear(history: ChatCompletionMessageParam[], policy: Policy): number {
  const results = history.filter((m): m is ChatCompletionToolMessageParam => m.role === 'tool');
  const names = new Map<string, string>();
  for (const m of history) if (m.role === 'assistant') for (const tc of m.tool_calls ?? []) if (tc.type === 'function') names.set(tc.id, tc.function.name);
  const eligible = policy === 'qwen-code' ? results : results.filter((m) => names.get(m.tool_call_id) === 'Read');
  const keep = policy === 'qwen-code' ? 5 : 3;
  let n = 0;
  for (const m of eligible.slice(0, Math.max(0, eligible.length - keep))) {
    if (m.content === MARKER) continue;
    m.content = MARKER;
    n++;
  }
  return n;
}

interface Run {
  world: World & { tap: Tap };
  /** Bytes of the session log after each request. */
  bytes: number[];
  cleared: number[];
}

async function logBytes(world: World): Promise<number> {
  const sessions = await readSessions(world);
  let total = 0;
  for (const id of sessions.keys()) total += (await stat(join(sessionsDir(world), `${id}.jsonl`))).size;
  return total;
}

async function drive(policy: Policy): Promise<Run> {
  const world = await openTappedWorld(`clearing-${policy}`, {}, WINDOW);
  const history: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a coding agent. Read what you need.' },
    { role: 'user', content: `The parser drops tokens; find out why.${directive(call(0))}` },
  ];
  const bytes: number[] = [];
  const cleared: number[] = [];
  for (let i = 0; i < STEPS; i++) {
    if (policy !== 'none' && CLEAR_AT.includes(i)) cleared.push(clear(history, policy));
    const a = await ask(world, 'm', history, TOOLS, { stream: i % 2 === 0, headers: { 'x-session-id': `clearing-${policy}` } });
    bytes.push(await logBytes(world));
    expect(a.toolCalls).toHaveLength(1);
    const tc = a.toolCalls[0]!;
    history.push({ role: 'assistant', content: a.content, tool_calls: [tc] });
    history.push({ role: 'tool', tool_call_id: tc.id, content: run(call(i), i) + (i + 1 < STEPS ? directive(call(i + 1)) : '') });
  }
  return { world, bytes, cleared };
}

interface Figures {
  sessions: number;
  rewrites: number;
  causes: string[];
  breaks: number;
  /** Bytes the log grew by on each clearing request. */
  growthAtClearing: number[];
  bytes: number;
  prompt: number;
  cached: number;
  /** What the unchanged prefix allowed, per request: the whole blocks the request shares with the one before. */
  allowed: number[];
  reads: number[];
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return Buffer.byteLength(a.slice(0, i));
}

async function figures(r: Run): Promise<Figures> {
  const sessions = [...(await readSessions(r.world)).values()];
  const events = sessions.flat();
  const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
  const causes = reqs.map((e) => e.cause ?? 'none');
  const upstream = r.world.tap.requests.filter((t) => t.path.includes('/chat/completions'));
  const rendered = upstream.map((t) => renderPrompt(t.body.tools ?? [], t.body.messages));
  const sim = r.world.sim.requests;
  const allowed = rendered.map((cur, i) => {
    if (i === 0) return 0;
    // The simulator reads and writes the cache only for prompts of at least 1,024 tokens.
    const tokens = (text: string) => Math.ceil(Buffer.byteLength(text) / TOKEN_BYTES);
    return tokens(cur) < MIN_CACHED_PROMPT || tokens(rendered[i - 1]!) < MIN_CACHED_PROMPT ? 0 : Math.floor(commonPrefix(rendered[i - 1]!, cur) / (TOKEN_BYTES * BLOCK_TOKENS)) * BLOCK_TOKENS;
  });
  return {
    sessions: sessions.length,
    rewrites: events.filter((e) => e.type === 'client.rewrite').length,
    causes,
    breaks: causes.filter((c) => c !== 'none' && c !== 'first').length,
    growthAtClearing: CLEAR_AT.map((i) => r.bytes[i]! - r.bytes[i - 1]!),
    bytes: r.bytes.at(-1)!,
    prompt: sim.reduce((n, x) => n + x.promptTokens, 0),
    cached: sim.reduce((n, x) => n + x.cachedTokens, 0),
    allowed,
    reads: sim.map((x) => x.cachedTokens),
  };
}

describe('a client that clears its old tool results, through the proxy', () => {
  const runs = new Map<Policy, Run>();
  const figs = new Map<Policy, Figures>();
  beforeAll(async () => {
    for (const policy of ['none', 'qwen-code', 'claude-code'] as const) {
      const r = await drive(policy);
      runs.set(policy, r);
      figs.set(policy, await figures(r));
    }
    if (process.env.CLEARING_FIGURES === '1') {
      for (const [policy, f] of figs) {
        const allowed = f.allowed.reduce((a, b) => a + b, 0);
        const readOfAllowed = f.reads.reduce((n, x, i) => n + Math.min(x, f.allowed[i]!), 0);
        console.log(`${policy}: cleared ${JSON.stringify(runs.get(policy)!.cleared)}; log ${f.bytes} bytes; growth at the clearing requests ${JSON.stringify(f.growthAtClearing)} bytes (the agent that does not clear: ${JSON.stringify(figs.get('none')!.growthAtClearing)}); sessions ${f.sessions}; rewrites ${f.rewrites}; breaks ${f.breaks} (${f.causes.map((c, i) => (c === 'none' ? '' : `${i}:${c}`)).filter(Boolean).join(' ')}); cached ${f.cached} of ${f.prompt} prompt tokens; read ${readOfAllowed} of the ${allowed} the unchanged prefix allowed`);
      }
    }
  }, 240_000);
  afterAll(async () => {
    for (const r of runs.values()) await r.world.close();
  });

  it('the agents did clear, and the window trimmed', () => {
    for (const policy of ['qwen-code', 'claude-code'] as const) {
      const cleared = runs.get(policy)!.cleared;
      expect(cleared).toHaveLength(CLEAR_AT.length);
      for (const n of cleared) expect(n).toBeGreaterThan(2);
    }
    for (const f of figs.values()) expect(f.causes.filter((c) => c === 'trim').length).toBeGreaterThanOrEqual(2);
  });

  for (const policy of ['qwen-code', 'claude-code'] as const) {
    describe(`the way ${policy} clears`, () => {
      it('stays one session with no rewrite; every break is a trim, at most one more than the agent that does not clear, per clearing', () => {
        const f = figs.get(policy)!;
        const control = figs.get('none')!;
        expect(f.sessions).toBe(1);
        expect(f.rewrites).toBe(0);
        expect(f.causes.filter((c) => c !== 'none' && c !== 'first' && c !== 'trim')).toEqual([]);
        expect(f.breaks).toBeLessThanOrEqual(control.breaks + CLEAR_AT.length);
        // No break at a clearing request, nor at the one after it.
        for (const i of CLEAR_AT) expect([f.causes[i], f.causes[i + 1]]).not.toContain('client_rewrite');
      });

      it('grows the log on a clearing request by a small field naming what was cleared, not by the history again', () => {
        const f = figs.get(policy)!;
        const control = figs.get('none')!;
        f.growthAtClearing.forEach((g, k) => {
          const named = runs.get(policy)!.cleared[k]!;
          expect(g - control.growthAtClearing[k]!).toBeGreaterThan(0);
          expect(g - control.growthAtClearing[k]!).toBeLessThanOrEqual(60 + MARKER.length + 6 * named);
        });
        expect(Math.abs(f.bytes - control.bytes)).toBeLessThan(2_000);
      });

      it('the first trim after a clearing elides every cleared result, and the log names each clearing once', async () => {
        const events = [...(await readSessions(runs.get(policy)!.world)).values()][0]!;
        const clearings = events.filter((e): e is EventOf<'client.msg'> => e.type === 'client.msg' && e.cleared !== undefined);
        expect(clearings.map((e) => e.cleared!.reduce((n, c) => n + c.seqs.length, 0))).toEqual(runs.get(policy)!.cleared);
        for (const c of clearings) {
          const elidedBefore = new Set(events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req' && e.seq < c.seq).flatMap((e) => e.elided));
          const trim = events.find((e): e is EventOf<'llm.req'> => e.type === 'llm.req' && e.seq > c.seq && e.elided.length > 0)!;
          const named = c.cleared!.flatMap((x) => x.seqs).filter((seq) => !elidedBefore.has(seq));
          expect(trim.elided).toEqual(expect.arrayContaining(named));
        }
      });

      it('every request reads what the unchanged prefix allows from the simulator\'s cache', () => {
        const f = figs.get(policy)!;
        f.allowed.forEach((allowed, i) => expect(f.reads[i], `request ${i}`).toBeGreaterThanOrEqual(allowed));
        expect(f.cached / f.prompt).toBeGreaterThan(0.8);
      });
    });
  }

  it('replays every request of every log', async () => {
    for (const r of runs.values()) {
      const res = await replayAll(r.world);
      expect(res.code, res.stderr).toBe(0);
    }
  });
});
