/**
 * `proxy sessions prune` run again and again while a proxy serves (docs/decisions/0024): on the
 * proxy's clock, sixty one-shot calls and ten agents' conversations began two days ago, past its
 * `locate_days = 1`; now the agents go on, some of the old calls are continued (each a new session,
 * being past the horizon) and new ones come, all at once with the command. No request fails, the
 * idle one-shots' logs go, every log a request wrote is there with all it wrote, and what is left
 * replays.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PruneReport } from '../../src/cli/prune.js';
import { runCli } from './harness.js';
import { DAY, startPruneWorld, TOOLS, type Msg, type PruneWorld } from './prune-world.js';

let w: PruneWorld;
beforeAll(async () => {
  w = await startPruneWorld(1, Date.now() - 2 * DAY);
});
afterAll(async () => {
  await w?.close();
});

const sessions = () => join(w.dataDir, 'sessions');

/** Each log's user texts. */
async function logs(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const f of (await readdir(sessions())).filter((n) => n.endsWith('.jsonl'))) {
    const events = (await readFile(join(sessions(), f), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { type: string; msg?: { role: string; content: string } });
    out.set(f.slice(0, -'.jsonl'.length), events.flatMap((e) => (e.type === 'client.msg' && e.msg?.role === 'user' ? [e.msg.content] : [])));
  }
  return out;
}

async function turn(messages: Msg[], text: string, tools = false): Promise<void> {
  messages.push({ role: 'user', content: text });
  const r = await w.client.chat.completions.create({ model: 'sim/prune', messages, ...(tools ? { tools: TOOLS } : {}) });
  messages.push({ role: 'assistant', content: r.choices[0]!.message.content });
}

it('runs beside the proxy\'s load without failing a request or losing what one wrote', async () => {
  const calls: Msg[][] = Array.from({ length: 60 }, () => []);
  const agents: Msg[][] = Array.from({ length: 10 }, (_, i) => [{ role: 'system', content: `You are agent ${i}.` }]);
  for (const [i, c] of calls.entries()) await turn(c, `old call ${i}`);
  for (const [i, a] of agents.entries()) await turn(a, `agent ${i} step 0`, true);
  const before = await logs();
  const oldCalls = [...before].filter(([, texts]) => texts[0]?.startsWith('old call ')).map(([id]) => id);
  expect(oldCalls).toHaveLength(60);

  w.at = Date.now();
  const reports: PruneReport[] = [];
  let serving = true;
  const pruning = (async () => {
    while (serving || reports.length < 2) {
      const r = await runCli(['sessions', 'prune', '--idle-days', '1', '--config', w.config, '--json']);
      expect(r.code, r.stderr).toBe(0);
      reports.push(JSON.parse(r.stdout) as PruneReport);
    }
  })();
  const load = [
    ...agents.map(async (a, i) => {
      for (let step = 1; step <= 6; step++) await turn(a, `agent ${i} step ${step}`, true);
    }),
    (async () => {
      for (let i = 0; i < 60; i += 3) await turn(calls[i]!, `old call ${i} again`);
    })(),
    (async () => {
      for (let i = 0; i < 30; i++) await turn([], `new call ${i}`);
    })(),
  ];
  await Promise.all(load).finally(() => {
    serving = false;
  });
  await pruning;

  const after = await logs();
  const removed = new Set(reports.flatMap((r) => r.removed.map((x) => x.id)));
  // Every idle one-shot went, and nothing else did.
  expect([...removed].sort()).toEqual([...oldCalls].sort());
  for (const id of oldCalls) expect(after.has(id)).toBe(false);
  // Each agent's conversation is one log holding all its steps; the agents were held, never removed.
  for (let i = 0; i < 10; i++) {
    const mine = [...after.values()].filter((texts) => texts[0] === `agent ${i} step 0`);
    expect(mine).toEqual([Array.from({ length: 7 }, (_, step) => `agent ${i} step ${step}`)]);
  }
  // The continued calls and the new ones are sessions of their own, all there.
  const texts = [...after.values()].map((x) => x.join(' | '));
  for (let i = 0; i < 60; i += 3) expect(texts).toContain(`old call ${i} | old call ${i} again`);
  for (let i = 0; i < 30; i++) expect(texts).toContain(`new call ${i}`);
  const replay = await runCli(['replay', '--all', '--json', '--data-dir', w.dataDir]);
  expect(replay.code, replay.stderr).toBe(0);
}, 180_000);
