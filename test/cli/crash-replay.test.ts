/**
 * A process appending a session is killed with SIGKILL mid-write. The store reopens, reports and
 * repairs the torn tail, loses no event that was synced, and every complete request in what is
 * left replays to its digest.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { LogStore } from '../../src/log/store.js';
import { generateSession } from '../window/gen-session.js';
import { proxy } from './helpers.js';

const WRITER = resolve(import.meta.dirname, 'fixtures/session-writer.mjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Run the writer until `until(line)` says so, then SIGKILL it; returns the seqs it reported synced. */
function runWriter(dataDir: string, id: string, eventsFile: string, tornAfter: number, until: (line: string, synced: number) => boolean): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [WRITER, dataDir, id, eventsFile, String(tornAfter)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let synced = 0;
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const m = /^synced (\d+)$/.exec(line);
        if (m) synced = Number(m[1]);
        if (until(line, synced)) child.kill('SIGKILL');
      }
    });
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolvePromise(synced) : reject(new Error(`writer exited without being killed: ${stderr}`))));
  });
}

function setup(seed: number, size: number): { dataDir: string; events: LogEvent[]; eventsFile: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'proxy-crash-'));
  dirs.push(dataDir);
  const events = generateSession(seed, size);
  const eventsFile = join(dataDir, 'events.json');
  writeFileSync(eventsFile, JSON.stringify(events));
  return { dataDir, events, eventsFile };
}

async function reopenAndCheck(dataDir: string, id: string, events: LogEvent[], synced: number) {
  const store = new LogStore(dataDir);
  const log = await store.open(id, { create: false });
  const repaired = log.repaired;
  const kept = log.events;
  await log.close();
  // Nothing synced is lost, every kept event is the one written, seqs contiguous.
  expect(kept.length).toBeGreaterThanOrEqual(synced);
  kept.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    const { ts: _a, ...got } = e;
    const { ts: _b, ...want } = events[i]!;
    expect(got).toEqual(want);
  });
  expect(readFileSync(store.file(id), 'utf8').endsWith('\n')).toBe(true);
  // Every complete request replays to its digest.
  const r = proxy(['replay', id, '--data-dir', dataDir]);
  const requests = kept.filter((e) => e.type === 'llm.req').length;
  expect(r.stdout).toContain(`${requests} of ${requests} requests`);
  expect(r.code).toBe(0);
  return { repaired, kept };
}

describe('SIGKILL while a session is being written', () => {
  it('mid-line: the torn tail is reported and repaired, and the rest replays', async () => {
    const { dataDir, events, eventsFile } = setup(21, 30);
    const tornAfter = events.findIndex((e, i) => i > events.length / 2 && e.type === 'llm.req');
    const synced = await runWriter(dataDir, 'crash-torn', eventsFile, tornAfter, (line) => line === 'torn');
    expect(synced).toBe(tornAfter);
    const { repaired, kept } = await reopenAndCheck(dataDir, 'crash-torn', events, synced);
    expect(repaired).toMatchObject({ line: tornAfter + 1 });
    expect(kept).toHaveLength(tornAfter);
  });

  for (const killAt of [5, 17]) {
    it(`killed while appending (after ${killAt} replies synced)`, async () => {
      const { dataDir, events, eventsFile } = setup(40 + killAt, 40);
      let replies = 0;
      const synced = await runWriter(dataDir, `crash-loop-${killAt}`, eventsFile, -1, (line) => line.startsWith('synced') && ++replies === killAt);
      await reopenAndCheck(dataDir, `crash-loop-${killAt}`, events, synced);
    });
  }
});
