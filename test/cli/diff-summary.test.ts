import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { WindowState } from '../../src/window/index.js';
import { generateSession } from '../window/gen-session.js';
import { proxy, writeSession } from './helpers.js';

let dir: string;
let events: LogEvent[];
const plain = { rewrites: false, summaries: false, originSwitches: false, sessionChanges: false, failures: false };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'proxy-cli-diff-'));
  events = generateSession(5, 60, plain);
  writeSession(dir, 'd1', events);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reqs = (list: LogEvent[]) => list.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');

describe('proxy diff', () => {
  it('names a trim as the cause where a request newly elided entries', () => {
    const all = reqs(events);
    const trimmed = all.find((e, i) => i > 0 && e.elided.length > 0)!;
    expect(trimmed).toBeDefined();
    const r = proxy(['diff', 'd1', String(trimmed.seq), '--json', '--data-dir', dir]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { cause: string; previous: number; index: number };
    expect(report.cause).toBe('trim');
    expect(report.previous).toBe(all[all.indexOf(trimmed) - 1]!.seq);
    expect(report.index).toBeGreaterThanOrEqual(0);
  });

  it('says "none" where a request only appended to its predecessor', () => {
    const all = reqs(events);
    const appended = all.find((e, i) => i > 0 && e.elided.length === 0 && all[i - 1]!.elided.length === 0 && e.cause !== 'trim')!;
    const r = proxy(['diff', 'd1', String(appended.seq), '--data-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/extends request \d+.*cause: none/);
  });

  it('the first request has no predecessor', () => {
    const r = proxy(['diff', 'd1', String(reqs(events)[0]!.seq), '--json', '--data-dir', dir]);
    expect(JSON.parse(r.stdout)).toMatchObject({ cause: 'first', previous: null });
  });

  it('a seq that is not a request is a clear error', () => {
    const r = proxy(['diff', 'd1', '1', '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('seq 1 is not a logged request');
  });
});

describe('proxy summary', () => {
  it('add replaces the span in the next window, revoke brings it back; both keep the log replayable', () => {
    const local = generateSession(8, 30, plain);
    const file = writeSession(dir, 'sum1', local);
    const entries = local.filter((e) => (e.type === 'client.msg' && e.head !== true) || (e.type === 'llm.resp' && e.aborted !== true));
    const from = entries[1]!.seq;
    const to = entries[4]!.seq;
    const text = join(dir, 'summary.txt');
    writeFileSync(text, 'The agent read the config loader and its tests.\n');

    const added = proxy(['summary', 'add', 'sum1', '--from', String(from), '--to', String(to), '--file', text, '--data-dir', dir]);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const after = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as LogEvent);
    const summary = after.at(-1) as EventOf<'summary.add'>;
    expect(summary).toMatchObject({ type: 'summary.add', from, to, text: 'The agent read the config loader and its tests.' });
    expect(summary.source_digest).toMatch(/^[0-9a-f]{64}$/);

    const last = reqs(local).at(-1)!;
    const input = { route: last.route, model: last.model, origin: last.origin, params: last.params };
    const withSummary = new WindowState();
    for (const e of after) withSummary.apply(e);
    const contents = withSummary.build(input).request.messages.map((m) => ('content' in m ? m.content : null));
    expect(contents).toContain('The agent read the config loader and its tests.');

    const revoked = proxy(['summary', 'revoke', 'sum1', String(summary.seq), '--data-dir', dir]);
    expect(revoked.code).toBe(0);
    const final = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as LogEvent);
    expect(final.at(-1)).toMatchObject({ type: 'summary.revoke', summary: summary.seq });
    const restored = new WindowState();
    for (const e of final) restored.apply(e);
    const back = restored.build(input).request.messages.map((m) => ('content' in m ? m.content : null));
    expect(back).not.toContain('The agent read the config loader and its tests.');

    expect(proxy(['replay', 'sum1', '--data-dir', dir]).code).toBe(0);
    expect(proxy(['summary', 'revoke', 'sum1', String(summary.seq), '--data-dir', dir]).stderr).toContain('already revoked');
  });

  it('refuses a span that reaches into the latest two user turns, and writes nothing', () => {
    const local = generateSession(9, 20, plain);
    const file = writeSession(dir, 'sum2', local);
    const before = readFileSync(file, 'utf8');
    const users = local.filter((e) => e.type === 'client.msg' && e.msg.role === 'user');
    const text = join(dir, 'summary2.txt');
    writeFileSync(text, 'x');
    const r = proxy(['summary', 'add', 'sum2', '--from', String(users[0]!.seq), '--to', String(users.at(-1)!.seq), '--file', text, '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('latest two user turns');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
