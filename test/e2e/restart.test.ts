/**
 * The real binary, killed with SIGKILL between requests: every answered request is on disk, a
 * restarted proxy continues the conversation in the same session (its index rebuilt from the
 * logs), and every logged request replays.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { runCli } from './harness.js';

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'pp-restart-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Start `proxy serve` on a free port; resolves with its base URL once it listens. */
function serve(): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, env: { PATH: process.env['PATH'] ?? '' } });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)\/v1/.exec(out);
      if (m) done({ child, url: m[1]! });
    });
    child.on('exit', (code) => fail(new Error(`proxy exited (${code}) before listening: ${out}`)));
  });
}

function logs(): LogEvent[][] {
  const sessions = join(dir, 'sessions');
  return readdirSync(sessions).filter((f) => f.endsWith('.jsonl')).map((f) => readFileSync(join(sessions, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as LogEvent));
}

it('loses no answered request to SIGKILL, and continues the session after a restart', async () => {
  const first = await serve();
  const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: 'test', maxRetries: 0 });
  const history: ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'first question' }];
  for (let i = 0; i < 3; i++) {
    const r = await client.chat.completions.create({ model: 'sim/restart', messages: history });
    history.push({ role: 'assistant', content: r.choices[0]!.message.content }, { role: 'user', content: `question ${i + 2}` });
  }
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));

  const before = logs();
  expect(before).toHaveLength(1);
  expect(before[0]!.filter((e) => e.type === 'llm.resp')).toHaveLength(3);

  const second = await serve();
  const again = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'test', maxRetries: 0 });
  await again.chat.completions.create({ model: 'sim/restart', messages: history });
  second.child.kill('SIGTERM');
  await new Promise((r) => second.child.once('exit', r));

  const after = logs();
  expect(after).toHaveLength(1);
  expect(after[0]!.filter((e) => e.type === 'llm.resp')).toHaveLength(4);
  expect(after[0]!.some((e) => e.type === 'client.rewrite')).toBe(false);

  const r = await runCli(['replay', '--all', '--json', '--data-dir', dir]);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ requests: 4, failed: 0 });
});
