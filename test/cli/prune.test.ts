/**
 * `proxy sessions prune` as a person types it: what it needs, what it refuses (fewer days than a
 * proxy locates sessions for, a config that locates them for ever), and what
 * it prints. The command beside a running proxy: test/e2e/prune.test.ts; on PostgreSQL:
 * test/store/postgres.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { proxy, writeSession } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pp-prune-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DAY = 86_400_000;

function userAt(ts: number): LogEvent[] {
  return [{ seq: 1, ts: new Date(ts).toISOString(), type: 'client.msg', msg: { role: 'user', content: 'hello' } } as LogEvent];
}

async function configWith(locateDays: number): Promise<string> {
  const path = join(dir, 'config.toml');
  await writeFile(path, `data_dir = ${JSON.stringify(join(dir, 'data'))}\n\n[sessions]\nlocate_days = ${locateDays}\n`);
  return path;
}

describe('proxy sessions prune', () => {
  it('removes the logs idle longer than the days given and says what it removed and kept', () => {
    const data = join(dir, 'data');
    const old = writeSession(data, '20260901T000000Z-0000aaaa', userAt(Date.now() - 45 * DAY));
    const recent = writeSession(data, '20261101T000000Z-0000bbbb', userAt(Date.now() - DAY));
    const r = proxy(['sessions', 'prune', '--idle-days', '40', '--data-dir', data]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^removed 1 session log idle since before \S+ \(0\.0 MiB\); kept 1 more recent\n {2}20260901T000000Z-0000aaaa {2}last active \S+\n$/);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  });

  it('says what it did with the images: the one only a removed log named goes, the one a kept log names stays', async () => {
    const data = join(dir, 'data');
    const [gone, kept] = ['1'.repeat(64), '2'.repeat(64)];
    const naming = (sha256: string, ts: number) => [{ seq: 1, ts: new Date(ts).toISOString(), type: 'client.msg', msg: { role: 'user', content: [{ type: 'image', sha256, mime: 'image/png', tokens: 85 }] } } as LogEvent];
    writeSession(data, '20260901T000000Z-0000eeee', naming(gone, Date.now() - 45 * DAY));
    writeSession(data, '20261101T000000Z-0000ffff', naming(kept, Date.now() - DAY));
    await mkdir(join(data, 'blobs'));
    const back = new Date(Date.now() - 45 * DAY);
    for (const sha of [gone, kept]) {
      await writeFile(join(data, 'blobs', sha), Buffer.alloc(2 * 2 ** 20));
      await utimes(join(data, 'blobs', sha), back, back);
    }
    const r = proxy(['sessions', 'prune', '--idle-days', '40', '--data-dir', data]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('\nremoved 1 image no log names (2.0 MiB); kept 1 as old that a log names and 0 written or marked since\n');
    expect(existsSync(join(data, 'blobs', gone))).toBe(false);
    expect(existsSync(join(data, 'blobs', kept))).toBe(true);
  });

  it('goes on past a damaged log, which it leaves and names', async () => {
    const data = join(dir, 'data');
    const damaged = writeSession(data, '20260901T000000Z-0000cccc', userAt(Date.now() - 45 * DAY));
    // A line that is not JSON in the middle, then a torn one: the log cannot be dated.
    await writeFile(damaged, 'garbage\n{"seq":3,"ts":"2026-09-02T00:00:00.000Z","type":"client.msg"', { flag: 'a' });
    const old = writeSession(data, '20260902T000000Z-0000dddd', userAt(Date.now() - 45 * DAY));
    const r = proxy(['sessions', 'prune', '--idle-days', '40', '--data-dir', data]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('removed 1 session log');
    expect(r.stdout).toMatch(/left 1 that cannot be read to date them:\n {2}20260901T000000Z-0000cccc {2}\S*20260901T000000Z-0000cccc\.jsonl/);
    expect(existsSync(damaged)).toBe(true);
    expect(existsSync(old)).toBe(false);
  });

  it.each([
    [['--data-dir', 'x'], '--idle-days is required'],
    [['--idle-days', '0'], '--idle-days must be at least 1'],
    [['--idle-days', 'ten'], '--idle-days must be a positive integer, got "ten"'],
    [['--idle-days', '29'], '--idle-days 29 is less than the default locate_days (30; pass --config to read the proxy\'s own)'],
  ])('refuses %j: %s', (args, message) => {
    const r = proxy(['sessions', 'prune', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('reads locate_days from the config, and refuses a config that locates sessions for ever', async () => {
    const data = join(dir, 'data');
    const old = writeSession(data, '20260901T000000Z-0000aaaa', userAt(Date.now() - 45 * DAY));
    const at60 = proxy(['sessions', 'prune', '--idle-days', '45', '--config', await configWith(60)]);
    expect(at60.code).toBe(2);
    expect(at60.stderr).toContain('is less than locate_days in');
    const forever = proxy(['sessions', 'prune', '--idle-days', '400', '--config', await configWith(0)]);
    expect(forever.code).toBe(2);
    expect(forever.stderr).toContain('locate_days = 0');
    expect(existsSync(old)).toBe(true);
    const at10 = proxy(['sessions', 'prune', '--idle-days', '10', '--config', await configWith(10)]);
    expect(at10.code, at10.stderr).toBe(0);
    expect(existsSync(old)).toBe(false);
  });
});
