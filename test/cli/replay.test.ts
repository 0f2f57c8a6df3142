import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalDigest } from '../../src/core/canonical.js';
import type { LogEvent } from '../../src/core/events.js';
import { generateSession } from '../window/gen-session.js';
import { logText, proxy, writeSession } from './helpers.js';

let dir: string;
const sessions: Record<string, LogEvent[]> = {};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'proxy-cli-'));
  for (const [id, seed] of [['s-alpha', 3], ['s-beta', 11], ['s-gamma', 29]] as const) {
    sessions[id] = generateSession(seed, 40);
    writeSession(dir, id, sessions[id]);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reqs = (events: LogEvent[]) => events.filter((e): e is Extract<LogEvent, { type: 'llm.req' }> => e.type === 'llm.req');

describe('proxy replay', () => {
  it('--all verifies every request of every session, with a progress bar', () => {
    const r = proxy(['replay', '--all', '--data-dir', dir]);
    const total = Object.values(sessions).reduce((n, e) => n + reqs(e).length, 0);
    expect(r.stderr).toMatch(/replay \d+\/\d+/);
    expect(r.stdout).toContain(`${total} of ${total} requests in 3 session(s) match`);
    expect(r.code).toBe(0);
  });

  it('--window SEQ prints the rebuilt request, and it is the request the digest names', () => {
    const target = reqs(sessions['s-beta']!)[17]!;
    const r = proxy(['replay', 's-beta', '--window', String(target.seq), '--data-dir', dir]);
    expect(r.code).toBe(0);
    const request = JSON.parse(r.stdout) as unknown;
    expect(canonicalDigest(request)).toBe(target.digest);
  });

  it('--json reports each request', () => {
    const r = proxy(['replay', 's-alpha', '--json', '--data-dir', dir]);
    const report = JSON.parse(r.stdout) as { requests: number; failed: number; results: { seq: number; ok: boolean }[] };
    expect(report.failed).toBe(0);
    expect(report.results.map((x) => x.seq)).toEqual(reqs(sessions['s-alpha']!).map((e) => e.seq));
  });

  it('a changed message makes the requests after it mismatch: exit 1, the line named, nothing printed', () => {
    const events = structuredClone(sessions['s-gamma']!);
    const msg = events.find((e) => e.type === 'client.msg' && e.msg.role === 'user' && e.head !== true) as Extract<LogEvent, { type: 'client.msg' }>;
    (msg.msg as { content: string }).content += ' (edited)';
    const file = writeSession(dir, 's-tampered', events);
    const target = reqs(events).find((e) => e.seq > msg.seq)!;
    const r = proxy(['replay', 's-tampered', '--window', String(target.seq), '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const line = events.findIndex((e) => e.seq === target.seq) + 1;
    expect(r.stderr).toContain(`${file}:${line}: request seq ${target.seq}`);
    rmSync(file);
  });
});

describe('bad input: a one-line error naming the file and line, a non-zero exit, nothing rewritten', () => {
  it('a malformed line in the middle', () => {
    const lines = logText(sessions['s-alpha']!).split('\n');
    lines[4] = '{"seq":5,"ts":"x","type":"client.msg", broken';
    const file = join(dir, 'sessions', 's-malformed.jsonl');
    const text = lines.join('\n');
    writeFileSync(file, text);
    const r = proxy(['replay', 's-malformed', '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${file}:5`);
    expect(readFileSync(file, 'utf8')).toBe(text);
    rmSync(file);
  });

  it('an unknown recipe version', () => {
    const events = structuredClone(sessions['s-alpha']!);
    const start = events[0] as Extract<LogEvent, { type: 'session.start' }>;
    (start.recipe as { version: string }).version = 'window-v99';
    const file = writeSession(dir, 's-future', events);
    const before = readFileSync(file, 'utf8');
    const r = proxy(['replay', 's-future', '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${file}:1`);
    expect(r.stderr).toContain('window-v99');
    expect(readFileSync(file, 'utf8')).toBe(before);
    rmSync(file);
  });

  it('a missing session', () => {
    const r = proxy(['replay', 'no-such-session', '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(join(dir, 'sessions', 'no-such-session.jsonl'));
  });

  it('a torn last line is reported, and replay refuses the log until the store repairs it', () => {
    const text = logText(sessions['s-beta']!);
    const file = join(dir, 'sessions', 's-torn.jsonl');
    writeFileSync(file, text + '{"seq":999,"ts":"2026');
    const r = proxy(['replay', 's-torn', '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/s-torn\.jsonl:\d+: torn last line/);
    expect(readFileSync(file, 'utf8')).toBe(text + '{"seq":999,"ts":"2026');
    rmSync(file);
  });
});
