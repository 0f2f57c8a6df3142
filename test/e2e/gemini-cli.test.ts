/**
 * The real Gemini CLI (`@google/gemini-cli`, headless, `gemini -p`) pointed at the proxy over
 * loopback with GOOGLE_GEMINI_BASE_URL, offline, the simulator upstream. Its tool loop is scripted
 * through files in a temporary workspace: each file holds the simulator directive for the next call
 * (src/sim/directives.ts), six calls of read_file and grep_search. Through the native
 * Gemini wire (the simulator's gemini-native mode, strict about thought signatures) and through a
 * chat wire: no 4xx anywhere, every request after the first reads its predecessor's whole prefix
 * from the simulator's cache, and replay passes.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSessions, replayAll } from './harness.js';
import { startWiresWorld, wire, type WiresWorld } from './wires-world.js';
import { wholeBlockTokens } from './wire-prefix.js';

const GEMINI = join(process.cwd(), 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
/** The task router's model, which Gemini CLI asks before each prompt. */
const ROUTER = 'gemini-3.5-flash-lite';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: (tap) => `
[providers.gm]
preset = "gemini"
base_url = "${tap}/v1beta"
api_key_env = ""

[models.gm-main]
provider = "gm"
model = "gemini-3.1-pro-preview"

[models.chat-main]
provider = "oa"
model = "sim-model"

[models."${ROUTER}"]
provider = "gm"
model = "${ROUTER}"
`,
  });
}, 30_000);
afterAll(async () => {
  await w?.close();
});

interface RunResult {
  code: number | null;
  json: { response?: string; error?: unknown; stats?: { tools?: { totalCalls?: number; totalFail?: number } } } | undefined;
  stderr: string;
}

/** The step files: each tool's output is the directive for the next call. */
async function workspace(): Promise<{ ws: string; prompt: string }> {
  const ws = await mkdtemp(join(tmpdir(), 'pp-gem-ws-'));
  const call = (name: string, input: object) => `[[call ${name} ${JSON.stringify(input)}]]`;
  await writeFile(join(ws, 'step1.txt'), `${call('read_file', { file_path: 'step2.txt' })}\n`);
  // grep_search shows the matching line: the directive stands beside the mark the pattern finds
  // (a character class, so the directive naming the pattern does not match it itself).
  await writeFile(join(ws, 'step2.txt'), `${call('grep_search', { pattern: 'MARK[3]' })}\n`);
  await writeFile(join(ws, 'step3.txt'), `MARK3 ${call('read_file', { file_path: 'step4.txt' })}\n`);
  await writeFile(join(ws, 'step4.txt'), `${call('grep_search', { pattern: 'MARK[5]' })}\n`);
  await writeFile(join(ws, 'step5.txt'), `MARK5 ${call('read_file', { file_path: 'step6.txt' })}\n`);
  await writeFile(join(ws, 'step6.txt'), '[[say All six steps are done.]]\n');
  return { ws, prompt: `Follow the steps. ${call('read_file', { file_path: 'step1.txt' })}` };
}

async function runGemini(model: string, prompt: string, ws: string): Promise<RunResult> {
  const home = await mkdtemp(join(tmpdir(), 'pp-gem-home-'));
  await mkdir(join(home, '.gemini'));
  await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    telemetry: { enabled: false },
  }));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GEMINI_API_KEY: 'gm-proxy-test',
    GOOGLE_GEMINI_BASE_URL: w.proxy.url,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
  const args = [GEMINI, '-p', prompt, '--output-format', 'json', '--model', model];
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        let json: RunResult['json'];
        try {
          json = JSON.parse(stdout) as RunResult['json'];
        } catch {
          json = undefined;
        }
        resolve({ code, json, stderr: stderr.slice(-4000) + stdout.slice(0, 2000) });
      });
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

describe('Gemini CLI, headless, through the proxy', () => {
  it('has its bundle installed', () => {
    expect(existsSync(GEMINI), GEMINI).toBe(true);
  });

  const ROUTES = [
    ['gm-main', '/v1beta/models/gemini-3.1-pro-preview'],
    ['chat-main', '/openai/v1/chat/completions'],
  ] as const;
  for (const [model, prefix] of ROUTES) {
    it(`completes a six-call tool loop through ${prefix}`, async () => {
      const from = w.tap.requests.length;
      const simFrom = { gemini: w.sim.geminiRequests.length, chat: w.sim.requests.length };
      const { ws, prompt } = await workspace();
      try {
        const run = await runGemini(model, prompt, ws);
        expect(run.code, run.stderr).toBe(0);
        expect(run.json?.response, run.stderr).toContain('All six steps are done.');
        expect(run.json?.stats?.tools?.totalCalls).toBeGreaterThanOrEqual(6);
        expect(run.json?.stats?.tools?.totalFail).toBe(0);

        // Nothing refused anywhere: the router's side request and every turn.
        const all = w.tap.requests.slice(from);
        expect(all.every((r) => r.status === 200), JSON.stringify(all.map((r) => [r.path, r.status, r.response.slice(0, 300)]))).toBe(true);
        const sent = wire(w, prefix, from);
        expect(sent.length).toBeGreaterThanOrEqual(7);
        const records = prefix.startsWith('/v1beta')
          ? w.sim.geminiRequests.slice(simFrom.gemini).filter((r) => r.model !== ROUTER && !r.path.endsWith(':countTokens'))
          : w.sim.requests.slice(simFrom.chat).filter((r) => r.path.startsWith(prefix));
        expect(records.length).toBe(sent.length);
        if (prefix.startsWith('/v1beta')) {
          // The simulator signs each reply's first call: every one came back, unchanged and in place
          // (a changed, moved or missing one is its 400, which the status check above would show).
          const returned = records.reduce((n, r) => n + (r as { signatures: { returned: number } }).signatures.returned, 0);
          expect(returned).toBeGreaterThanOrEqual(records.length - 1);
        }
        // Each request reads its predecessor's whole prompt, up to the simulator's last whole block.
        for (let i = 1; i < records.length; i++) {
          const allowed = wholeBlockTokens(records[i - 1]!.promptTokens);
          expect(records[i]!.cachedTokens, `request ${i + 1}`).toBeGreaterThanOrEqual(Math.floor(allowed * 0.99));
        }
      } finally {
        await rm(ws, { recursive: true, force: true });
      }
    }, 240_000);
  }

  it('keeps the turns of one run in one session, and its date line out of the log', async () => {
    const sessions = await readSessions(w);
    // One session a run: given --model, Gemini CLI asks its task router nothing.
    expect(sessions.size).toBe(2);
    const logged = JSON.stringify([...sessions.values()]);
    expect(logged).toContain('<session_context>');
    expect(logged).not.toMatch(/Today's date is \w+day, /);
  });

  it('replays every request it logged', async () => {
    const result = await replayAll(w);
    expect(result.code, result.stderr).toBe(0);
  });
});
