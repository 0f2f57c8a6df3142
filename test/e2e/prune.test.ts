/**
 * `proxy sessions prune` beside a running proxy (docs/decisions/0024-idle-sessions-removed-by-the-operator.md):
 * sessions served through the HTTP API with the official client, forty days back on the proxy's
 * clock and now; the command, a process of its own, removes the idle conversation that left
 * memory, leaves the one the proxy still holds live and the recent one, and refuses a number of
 * days a running proxy could still reach. The proxy goes on serving the live one, what is left
 * replays, and a restart finds the sessions that are left. The image only the removed call named
 * goes with it (decision 0026), the recent call's stays, and the running proxy, named the removed
 * image again more than an hour on, writes it again.
 */
import { createHash } from 'node:crypto';
import { existsSync, utimesSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PruneReport } from '../../src/cli/prune.js';
import { pngDataUrl } from './agent-content.js';
import { runCli } from './harness.js';
import { DAY, startPruneWorld, TOOLS, type Msg, type PruneWorld } from './prune-world.js';

let w: PruneWorld;
const ids = { oneShot: '', live: '', recent: '', again: '' };
/** The one-shot call's image, and the recent call's: their URLs and their files under blobs/. */
const images = { old: pngDataUrl(64, 48, 'prune-old'), recent: pngDataUrl(64, 48, 'prune-recent') };
const blobFile = (url: string) => join(w.dataDir, 'blobs', createHash('sha256').update(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64')).digest('hex'));
const withImage = (text: string, url: string): Msg => ({ role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url } }] });
const live: Msg[] = [{ role: 'system', content: 'You are an agent.' }];

const sessionsDir = () => join(w.dataDir, 'sessions');
const logIds = async () => (existsSync(sessionsDir()) ? await readdir(sessionsDir()) : []).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length)).sort();

/** The one session a call made. */
async function made(call: () => Promise<unknown>): Promise<string> {
  const before = new Set(await logIds());
  await call();
  const now = (await logIds()).filter((id) => !before.has(id));
  expect(now).toHaveLength(1);
  return now[0]!;
}

beforeAll(async () => {
  w = await startPruneWorld(30, Date.now() - 40 * DAY);
  // Forty days ago: a one-shot call (it leaves memory at its answer) and an agent's conversation
  // with tools (it stays live, its log held by this process).
  ids.oneShot = await made(() => w.client.chat.completions.create({ model: 'sim/prune', messages: [withImage('one question', images.old)] }));
  live.push({ role: 'user', content: 'first step' });
  ids.live = await made(async () => {
    const r = await w.client.chat.completions.create({ model: 'sim/prune', messages: live, tools: TOOLS });
    live.push({ role: 'assistant', content: r.choices[0]!.message.content });
  });
  w.at = Date.now();
  ids.recent = await made(() => w.client.chat.completions.create({ model: 'sim/prune', messages: [withImage('a recent question', images.recent)] }));
  // Both images were written forty days back, as far as their files say (the proxy's clock moved; the disk's did not).
  const back = new Date(Date.now() - 40 * DAY);
  for (const url of Object.values(images)) utimesSync(blobFile(url), back, back);
}, 60_000);
afterAll(async () => {
  await w?.close();
});

async function prune(...args: string[]): Promise<{ code: number | null; report: PruneReport | undefined; stderr: string }> {
  const r = await runCli(['sessions', 'prune', '--config', w.config, '--json', ...args]);
  return { code: r.code, report: r.code === 0 ? (JSON.parse(r.stdout) as PruneReport) : undefined, stderr: r.stderr };
}

describe('proxy sessions prune, beside a running proxy', () => {
  it('refuses fewer days than the proxy locates sessions for, and removes nothing', async () => {
    const r = await prune('--idle-days', '10');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--idle-days 10 is less than locate_days');
    expect(await logIds()).toEqual([ids.oneShot, ids.live, ids.recent].sort());
  });

  it('a dry run names the idle session that left memory and removes nothing', async () => {
    const r = await prune('--idle-days', '30', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.report!.dry_run).toBe(true);
    expect(r.report!.removed.map((x) => x.id)).toEqual([ids.oneShot]);
    // Counted as if the one-shot's log were gone: its image is named by no other.
    expect(r.report!.images).toMatchObject({ removed: 1, named: 1, recent: 0 });
    expect(await logIds()).toEqual([ids.oneShot, ids.live, ids.recent].sort());
    expect(existsSync(blobFile(images.old))).toBe(true);
  });

  it('removes it; the conversation the proxy holds live stays, named as held, and so does the recent one', async () => {
    const r = await prune('--idle-days', '30');
    expect(r.code, r.stderr).toBe(0);
    expect(r.report!.removed.map((x) => x.id)).toEqual([ids.oneShot]);
    expect(r.report!.removed[0]!.bytes).toBeGreaterThan(0);
    expect(r.report!.in_use.map((x) => x.id)).toEqual([ids.live]);
    expect(r.report!.in_use[0]!.detail).toContain(String(process.pid));
    expect(r.report!.kept).toBe(1);
    expect(await logIds()).toEqual([ids.live, ids.recent].sort());
    expect(r.report!.images).toMatchObject({ removed: 1, named: 1, recent: 0 });
    expect(existsSync(blobFile(images.old))).toBe(false);
    expect(existsSync(blobFile(images.recent))).toBe(true);
    const listed = await runCli(['sessions', '--json', '--data-dir', w.dataDir]);
    expect((JSON.parse(listed.stdout) as { sessions: { id: string }[] }).sessions.map((s) => s.id).sort()).toEqual([ids.live, ids.recent].sort());
  });

  it('the proxy goes on with the live conversation in its own log, and everything left replays', async () => {
    live.push({ role: 'user', content: 'second step' });
    const before = await logIds();
    await w.client.chat.completions.create({ model: 'sim/prune', messages: live, tools: TOOLS });
    expect(await logIds()).toEqual(before);
    const replay = await runCli(['replay', '--all', '--json', '--data-dir', w.dataDir]);
    expect(replay.code, replay.stderr).toBe(0);
  });

  // Before the restart: the proxy that wrote it still remembers having written it (forty days back on its clock).
  it('the removed image sent again to the running proxy is written again, and its new log replays', async () => {
    ids.again = await made(() => w.client.chat.completions.create({ model: 'sim/prune', messages: [withImage('the old picture again', images.old)] }));
    expect(existsSync(blobFile(images.old))).toBe(true);
    const replay = await runCli(['replay', ids.again, '--json', '--data-dir', w.dataDir]);
    expect(replay.code, replay.stderr).toBe(0);
  });

  it('a restart finds the sessions left; the removed one\'s sidecar line locates nothing', async () => {
    await w.restart();
    expect(w.proxy.sessions.sessionIds().sort()).toEqual([ids.live, ids.recent, ids.again].sort());
    // Its continuation is a session of its own, as any past locate_days is.
    const next = await made(() => w.client.chat.completions.create({ model: 'sim/prune', messages: [{ role: 'user', content: 'one question' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }] }));
    expect(next).not.toBe(ids.oneShot);
    // Had the start kept an entry for it from its sidecar line, that lookup would have met no log and
    // set the session aside as damaged.
    expect(w.proxy.sessions.damaged.size).toBe(0);
  });
});
