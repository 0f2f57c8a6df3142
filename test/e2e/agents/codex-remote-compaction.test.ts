/**
 * The real Codex with its built-in `openai` provider pointed at the proxy (`openai_base_url`, as
 * OpenAI's own docs set a proxy) compacts on the server: past `model_auto_compact_token_limit` it
 * sends its history with a `compaction_trigger` item last, and must get one compaction item back,
 * or the run fails with "Error running remote compact task" (it did, answered 400, before decision
 * 0033). The proxy answers it from the route's model as a side request on the conversation's
 * prefix, and reads the item back as the summary when Codex sends it on.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACTION_PROMPT, COMPACTION_PROMPT_MARKER } from '../../../src/core/compaction-prompt.js';
import { COMPACTED_HEADER } from '../../../src/dialects/openai-responses/compaction.js';
import { readLogFiles, type LogFile } from '../agent-session.js';
import { codexConfig } from './codex-config.js';
import type { TappedRequest } from '../harness.js';
import { sseData } from '../wires-world.js';
import { AGENTS, binaryInstalled, replay, startLongWorld, upstreamUsage, writeSteps, type LongWorld } from './long-session.js';

const spec = AGENTS.codex;
const CONTENT_PREFIX = 'prefix-proxy.compaction.v1.';

type Item = Record<string, unknown>;
const inputOf = (r: TappedRequest): Item[] => (Array.isArray(r.body?.input) ? (r.body.input as Item[]) : []);
const isTrigger = (r: TappedRequest): boolean => inputOf(r).at(-1)?.type === 'compaction_trigger';
const itemText = (item: Item | undefined): string => {
  const content = item?.content;
  return typeof content === 'string' ? content : Array.isArray(content) ? (content as { text?: string }[]).map((p) => p.text ?? '').join('') : '';
};

describe.runIf(binaryInstalled(spec))('Codex through its built-in openai provider compacts on the server', () => {
  let lw: LongWorld;
  let code: number | null | 'killed';
  let stderr = '';
  let asked: TappedRequest[];
  let upstream: TappedRequest[];
  let files: LogFile[];

  beforeAll(async () => {
    lw = await startLongWorld(spec);
    const ws = join(lw.scratch, 'ws');
    const home = join(lw.scratch, 'home');
    await Promise.all([mkdir(ws, { recursive: true }), mkdir(home, { recursive: true })]);
    const { prompt } = await writeSteps(spec, ws, `remote-compaction-${process.pid}`, 12);
    // The built-in provider at the proxy, compacting past a small limit.
    await writeFile(join(home, 'config.toml'), codexConfig(spec.route, lw.front.origin, { builtIn: { autoCompactTokens: 12_000 } }));
    const child = spawn(spec.binary, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', ws, prompt], {
      cwd: ws, detached: true, stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, OPENAI_API_KEY: 'sk-local', RUST_LOG: 'error' },
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Its shells may hold the pipe past its exit: the exit, not the pipe's close, ends the run.
    code = await new Promise((resolve) => {
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone already
        }
        resolve('killed');
      }, 150_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    // Its POSTs: before them it tries the Responses WebSocket once (a GET, below).
    asked = lw.front.requests.filter((r) => r.path === '/v1/responses' && Array.isArray(r.body?.input));
    upstream = lw.world.tap.requests.filter((r) => r.path.startsWith(spec.upstreamPath));
    files = await readLogFiles(lw.world);
  }, 200_000);

  afterAll(async () => {
    await lw?.close();
  });

  it('runs to the end, every request it posted answered', () => {
    expect(code, stderr.slice(-2000)).toBe(0);
    expect(stderr).not.toContain('Error running remote compact task');
    expect(asked.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.response.slice(0, 200)}`)).toStrictEqual([]);
    // Its one try of the Responses WebSocket is refused with a 426, on which it goes on over HTTP at
    // once (a 404 took five tries and ~6 s).
    expect(lw.front.requests.filter((r) => !Array.isArray(r.body?.input)).map((r) => r.status)).toStrictEqual([426]);
  });

  it('asks for compaction, and gets exactly one compaction item holding the model\'s summary', () => {
    const triggers = asked.filter(isTrigger);
    expect(triggers.length).toBeGreaterThanOrEqual(1);
    for (const t of triggers) {
      const done = sseData(t.response).filter((e) => e.type === 'response.output_item.done').map((e) => e.item as Item);
      expect(done.map((i) => i.type)).toStrictEqual(['compaction']);
      expect(String(done[0]!.encrypted_content).startsWith(CONTENT_PREFIX)).toBe(true);
      expect(sseData(t.response).at(-1)?.type).toBe('response.completed');
    }
  });

  it('sends the item on in place of its history, and the upstream reads the summary there', () => {
    const first = asked.findIndex(isTrigger);
    const item = sseData(asked[first]!.response).find((e) => e.type === 'response.output_item.done')!.item as Item;
    const summary = Buffer.from(String(item.encrypted_content).slice(CONTENT_PREFIX.length), 'base64url').toString('utf8');
    expect(summary.length).toBeGreaterThan(0);
    const next = asked.slice(first + 1).find((r) => !isTrigger(r));
    expect(next, 'a request after the compaction').toBeDefined();
    expect(inputOf(next!).filter((i) => i.type === 'compaction').map((i) => i.encrypted_content)).toStrictEqual([item.encrypted_content]);
    // The history it replaced is gone from Codex's request: no tool output before the compaction.
    expect(inputOf(next!).some((i) => i.type === 'function_call_output')).toBe(false);
    const after = upstream.filter((r) => JSON.stringify(r.body).includes(JSON.stringify(`${COMPACTED_HEADER}\n\n${summary}`).slice(1, -1)));
    expect(after.length).toBeGreaterThanOrEqual(1);
    expect(after.every((r) => r.status === 200)).toBe(true);
  });

  it('asks the model on the conversation\'s prefix, with no tool to call, and reads that prefix from the cache', () => {
    const asks = upstream.filter((r) => itemText(inputOf(r).at(-1)) === COMPACTION_PROMPT);
    expect(asks.length).toBe(asked.filter(isTrigger).length);
    for (const ask of asks) {
      expect(ask.body.tool_choice).toBe('none');
      expect((ask.body.tools as unknown[]).length).toBeGreaterThan(0);
      // The conversation's request before it went first, with the same input up to its end.
      const before = upstream.slice(0, upstream.indexOf(ask)).filter((r) => itemText(inputOf(r).at(-1)) !== COMPACTION_PROMPT).at(-1)!;
      expect(JSON.stringify(inputOf(ask).slice(0, inputOf(before).length))).toBe(JSON.stringify(inputOf(before)));
      const prior = upstreamUsage('responses', before)!;
      const usage = upstreamUsage('responses', ask)!;
      expect(usage.cached).toBeGreaterThanOrEqual(Math.floor(prior.prompt * 0.9));
    }
  });

  it('logs each ask as a side session of the conversation, whose own log never holds the prompt', () => {
    const starts = files.map((f) => ({ f, start: f.lines[0]!.event }));
    const sides = starts.filter(({ start }) => start.type === 'session.start' && start.side?.kind === 'compaction');
    expect(sides.length).toBe(asked.filter(isTrigger).length);
    const parents = new Set(sides.map(({ start }) => (start.type === 'session.start' ? start.parent?.session : undefined)));
    expect(parents.size).toBe(1);
    const main = files.find((f) => f.id === [...parents][0])!;
    expect(main).toBeDefined();
    expect(main.lines.some((l) => JSON.stringify(l.event).includes(COMPACTION_PROMPT_MARKER))).toBe(false);
  });

  it('replays: every upstream request rebuilt from the log alone', async () => {
    const r = await replay(lw);
    expect(r.code, r.stderr + r.stdout).toBe(0);
  });
});
