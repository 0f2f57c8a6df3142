/**
 * The real Codex CLI (`@openai/codex`, pinned in package.json; its npm package ships the linux-x64
 * binary) run headless against the proxy over loopback, as README.md "Codex" configures it: a
 * custom provider with `wire_api = "responses"`. Upstream, the simulator in three modes: Responses
 * (encrypted reasoning kept), chat (DeepSeek) and Anthropic. The simulator answers the directive
 * in the last thing Codex sent, so files in a temporary workspace chain the tool loop: each holds
 * the `exec_command` call that reads the next, the last says done (deterministic, six calls).
 * A tap between Codex and the proxy records what Codex sent and got.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayAll, startTap, tag, type Tap } from './harness.js';
import { expectPrefixReads } from './responses-client.js';
import { responsesReasoning, sessionWith, startWiresWorld, wire, type WiresWorld } from './wires-world.js';
import { codexConfig } from './agents/codex-config.js';

const CODEX = join(process.cwd(), 'node_modules', '.bin', 'codex');
const STEPS = 6;

let w: WiresWorld;
let front: Tap;
let scratch: string;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.codex-rs]
provider = "rs"
model = "gpt-sim"

[models.codex-chat]
provider = "ds"
model = "deepseek-v4"

[models.codex-claude]
provider = "an"
model = "claude-sim"

[models.codex-gpt-responses]
provider = "rs56"
model = "gpt-5.6"

[models.codex-gpt-chat]
provider = "op56"
model = "gpt-5.6"
`,
  });
  front = await startTap(new URL(w.proxy.url).origin);
  scratch = await mkdtemp(join(tmpdir(), 'pp-codex-'));
});
afterAll(async () => {
  await front?.close();
  await w?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stderr: string;
  last: string;
}

async function runCodex(model: string, t: string): Promise<Run> {
  const home = join(scratch, `${model}-home`);
  const ws = join(scratch, `${model}-ws`);
  await Promise.all([mkdir(home), mkdir(ws)]);
  await writeFile(join(home, 'config.toml'), codexConfig(model, front.origin));
  for (let i = 1; i < STEPS; i++) await writeFile(join(ws, `step${i}.txt`), `${t} [[call exec_command {"cmd":"cat step${i + 1}.txt"}]]\n`);
  await writeFile(join(ws, `step${STEPS}.txt`), `[[say ${t}: all steps read.]]\n`);
  const last = join(scratch, `${model}-last.txt`);
  const args = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', ws, '-o', last, '[[call exec_command {"cmd":"cat step1.txt"}]]'];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: home, PREFIX_PROXY_KEY: 'sk-local', RUST_LOG: 'error' };
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      void readFile(last, 'utf8').catch(() => '').then((text) => resolve({ code, stderr, last: text.trim() }));
    });
  });
}

const WIRES = [
  { model: 'codex-rs', path: '/v1/responses', blocks: true },
  { model: 'codex-chat', path: '/deepseek/v1/chat/completions', blocks: true },
  { model: 'codex-claude', path: '/anthropic/v1/messages', blocks: false },
  // OpenAI's GPT-5.6 as the simulator plays it, refusing what its reasoning models refuse (docs/wires.md).
  { model: 'codex-gpt-responses', path: '/gpt56/v1/responses', blocks: true },
  { model: 'codex-gpt-chat', path: '/gpt56/v1/chat/completions', blocks: true },
] as const;

describe('the real Codex CLI through the proxy', () => {
  for (const { model, path, blocks } of WIRES) {
    it(`${model}: a ${STEPS}-call tool loop, every request reading its predecessor from the cache, nothing refused`, async () => {
      const t = tag(model);
      const upFrom = w.tap.requests.length;
      const inFrom = front.requests.length;
      const run = await runCodex(model, t);
      expect(run.code, run.stderr).toBe(0);
      expect(run.last).toBe(`${t}: all steps read.`);

      const asked = front.requests.slice(inFrom);
      expect(asked.every((r) => r.path === '/v1/responses' && r.status === 200)).toBe(true);
      expect(asked).toHaveLength(STEPS + 1);
      const up = wire(w, path, upFrom);
      expect(up.map((r) => r.status)).toStrictEqual(asked.map(() => 200));

      const events = await sessionWith(w, t);
      const start = events[0]!;
      // Named by Codex's session-id header (= its prompt_cache_key).
      expect(start.type === 'session.start' ? start.ids : []).toStrictEqual([asked[0]!.headers['session-id']]);
      const calls = events.flatMap((e) => (e.type === 'llm.resp' ? e.reply.tool_calls ?? [] : []));
      expect(calls.map((c) => c.name)).toStrictEqual(Array.from({ length: STEPS }, () => 'exec_command'));
      expectPrefixReads(events, blocks);
    }, 120_000);
  }

  it('Responses upstream: Codex got each encrypted reasoning item as the upstream made it and gave it back; the proxy sent the log\'s copy', async () => {
    const asked = front.requests.filter((r) => (r.body as { model?: string }).model === 'codex-rs');
    const up = w.tap.requests.filter((r) => r.path === '/v1/responses' && (r.body as { model?: string }).model === 'gpt-sim');
    // The route leaves keep_reasoning unset: reasoning is asked for as Codex asks (a summary, encrypted content).
    for (const r of up) expect(r.body).toMatchObject({ reasoning: { summary: 'auto', context: 'all_turns' }, include: ['reasoning.encrypted_content'] });
    const made = up.map((r) => (responsesReasoning(r.response)[0] as { encrypted_content: string }).encrypted_content);
    expect(made.every((m) => /^[A-Za-z0-9_-]{40,}$/.test(m))).toBe(true);
    asked.forEach((req, k) => {
      const echoed = (req.body.input as { type: string; encrypted_content?: string }[]).filter((i) => i.type === 'reasoning').map((i) => i.encrypted_content);
      expect(echoed).toStrictEqual(made.slice(0, k));
      const sent = (up[k]!.body.input as { type: string; encrypted_content?: string }[]).filter((i) => i.type === 'reasoning').map((i) => i.encrypted_content);
      expect(sent).toStrictEqual(made.slice(0, k));
    });
  });

  it('proxy replay --all rebuilds every request', async () => {
    const r = await replayAll(w);
    expect(r.code, r.stderr).toBe(0);
  });
});
