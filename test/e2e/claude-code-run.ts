/**
 * The real Claude Code (`@anthropic-ai/claude-code`, pinned in package.json), headless and offline
 * against a proxy's Anthropic endpoint: a workspace whose files chain a six-call tool loop through
 * the simulator's directives (src/sim/directives.ts), and the run itself.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLAUDE = join(process.cwd(), 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');

export interface RunResult {
  code: number | null;
  json: { result?: string; is_error?: boolean; num_turns?: number; subtype?: string } | undefined;
  stderr: string;
  ws: string;
}

/** The step files: each tool's output is the directive for the next call. */
export async function workspace(): Promise<{ ws: string; prompt: string }> {
  const ws = await mkdtemp(join(tmpdir(), 'pp-cc-ws-'));
  const call = (name: string, input: object) => `[[call ${name} ${JSON.stringify(input)}]]`;
  await writeFile(join(ws, 'step1.txt'), `${call('Read', { file_path: join(ws, 'step2.txt') })}\n`);
  await writeFile(join(ws, 'step2.txt'), `${call('Write', { file_path: join(ws, 'out.txt'), content: 'hello from the simulator\n' })} ${call('Bash', { command: 'cat step3.txt', description: 'Read step 3' })}\n`);
  await writeFile(join(ws, 'step3.txt'), `${call('Bash', { command: 'cat out.txt && cat step4.txt', description: 'Check the output' })}\n`);
  await writeFile(join(ws, 'step4.txt'), `${call('Read', { file_path: join(ws, 'step5.txt') })}\n`);
  await writeFile(join(ws, 'step5.txt'), '[[say All six steps are done.]]\n');
  return { ws, prompt: `Follow the steps. ${call('Bash', { command: 'cat step1.txt', description: 'Read step 1' })}` };
}

export function runClaude(o: { base: string; key: string; model: string; prompt: string; ws: string; home: string }): Promise<RunResult> {
  const { model, prompt, ws, home } = o;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: o.base,
    ANTHROPIC_API_KEY: o.key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_ENABLE_TELEMETRY: '0',
    IS_SANDBOX: '1',
  };
  const args = ['-p', prompt, '--output-format', 'json', '--model', model, '--allowedTools', 'Bash', 'Read', 'Write', '--max-turns', '12', '--dangerously-skip-permissions'];
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, args, { cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
      resolve({ code, json, stderr: stderr + stdout.slice(0, 2000), ws });
    });
  });
}

