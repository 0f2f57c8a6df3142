/**
 * `proxy serve`'s operator log is written in batches (docs/observability.md, Logs): a request's line
 * still shows within the flush interval when nothing else is logged, a burst loses no line, and a
 * SIGTERM writes out what is buffered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';

const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'pp-serve-log-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Served {
  child: ChildProcess;
  url: string;
  /** Request lines seen on stdout so far. */
  lines: () => { msg: string; status: number; session?: string }[];
  /** All of stdout so far. */
  output: () => string;
}

function serve(): Promise<Served> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, env: { PATH: process.env['PATH'] ?? '' } });
    children.push(child);
    let out = '';
    const lines = () =>
      out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; status: number }).filter((l) => l.msg === 'request');
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)\/v1/.exec(out);
      if (m) done({ child, url: m[1]!, lines, output: () => out });
    });
    child.on('exit', (code) => fail(new Error(`proxy exited (${code}) before listening: ${out}`)));
  });
}

async function ask(url: string, text: string): Promise<void> {
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sim/log', messages: [{ role: 'user', content: text }] }),
  });
  expect(r.status).toBe(200);
  await r.text();
}

async function waitFor(cond: () => boolean, ms: number): Promise<number> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}

it('shows a lone request\'s line within the flush interval, loses none of a burst, and flushes on SIGTERM', async () => {
  const s = await serve();
  await ask(s.url, 'one');
  // A line is ~300 bytes, far below the 4 KB batch: only the timer writes it.
  const waited = await waitFor(() => s.lines().length === 1, 2000);
  expect(waited).toBeLessThan(1000);

  await Promise.all(Array.from({ length: 40 }, (_, i) => ask(s.url, `burst ${i}`)));
  // What this part shows is that none is lost, not how soon: a loaded machine (the whole suite
  // beside it) has taken more than two seconds to show them all.
  await waitFor(() => s.lines().length === 41, 10_000);
  expect(s.lines().every((l) => l.status === 200)).toBe(true);

  // Answered, then stopped before the timer runs: the exit writes the buffer out.
  await ask(s.url, 'last');
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
  expect(s.lines()).toHaveLength(42);
});

it('names the inspector and the metrics on its banner, at addresses that answer', async () => {
  const s = await serve();
  await waitFor(() => /metrics at \S+\n/.test(s.output()), 5000);
  const m = /^inspector at (\S+) \((.+)\), metrics at (\S+)$/m.exec(s.output());
  expect(m?.[1]).toBe(`${s.url}/ui/`);
  // No [auth] keys and no admin key: this machine only, and this test is on it.
  expect(m?.[2]).toBe('from this machine');
  const page = await fetch(m![1]!);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<script');
  const metrics = await fetch(m![3]!);
  expect(await metrics.text()).toContain('proxy_requests_total');
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
});
