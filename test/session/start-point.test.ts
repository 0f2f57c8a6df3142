/**
 * A session that left memory is read back from its start point (the tracker's, saved beside the
 * log), not from its first line, and builds the same request it would from every event.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, Recipe } from '../../src/core/events.js';
import type { NeutralMessage } from '../../src/core/types.js';
import { readLog } from '../../src/log/reader.js';
import { FileStore } from '../../src/store/files.js';
import { SessionManager, type Turn } from '../../src/session/manager.js';
import { WindowState } from '../../src/window/index.js';
import { verifyEvents } from '../../src/cli/verify.js';

const RECIPE: Recipe = {
  version: 'window-v1', route: 'm', context: 100_000, output_reserve: 4096, high_water: 70_000, low_water: 40_000,
  max_result_tokens: 4096, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
};
const ORIGIN = { provider: 'p', model: 'm' };
const INPUT = { route: 'm', model: 'm', origin: ORIGIN, params: {} };

let dir: string;
let store: FileStore;
let manager: SessionManager;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pp-start-'));
  store = new FileStore(dir);
  // Nothing stays in memory after its request: every request reloads its session.
  manager = new SessionManager(store, { now: () => new Date('2026-05-06T07:08:09Z'), maxLive: 0 });
  await manager.init();
});
afterEach(async () => {
  await manager.close();
  await rm(dir, { recursive: true, force: true });
});

async function request(messages: NeutralMessage[], reply: string): Promise<{ turn: Turn; digest: string }> {
  const turn = await manager.begin({ explicitId: 'agent-1', system: 'sys', tools: [], messages, recipe: RECIPE });
  const built = turn.session.window.build(INPUT);
  const req = turn.append({ type: 'llm.req', digest: built.digest, recipe_version: 'window-v1', route: 'm', model: 'm', origin: ORIGIN, params: {}, elided: built.elided, est_tokens: built.estTokens });
  turn.append({ type: 'llm.resp', req: req.seq, reply: { content: reply, finish_reason: 'stop' }, origin: ORIGIN, timings: { total_ms: 1 } });
  await turn.session.log.sync();
  turn.release();
  return { turn, digest: built.digest };
}

describe('loading a session from its start point', () => {
  it('reads from the compaction on, and builds the request it would build from every event', async () => {
    let history: NeutralMessage[] = [];
    for (let i = 0; i < 6; i++) {
      history.push({ role: 'user', content: `question ${i} ${'x'.repeat(2000)}` });
      const { turn } = await request(history, `answer ${i}`);
      history.push({ role: 'assistant', content: `answer ${i}` });
      expect(turn.plan.kind).not.toBe('fork');
    }
    // The client compacts its whole history into one summary message.
    history = [{ role: 'user', content: 'Summary of what we did so far.' }];
    const compacted = await request(history, 'noted');
    expect(compacted.turn.plan.kind).toBe('rewrite');
    history.push({ role: 'assistant', content: 'noted' }, { role: 'user', content: 'go on' });

    const file = store.file(compacted.turn.session.id);
    const all = (await readLog(file)).events;
    // The session left memory after its request; its start point is saved as it closes.
    let index: { point?: { start: { seq: number } } } | undefined;
    for (let i = 0; i < 200 && index?.point === undefined; i++) {
      index = await store.readIndex(compacted.turn.session.id);
      if (index?.point === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    const rewrite = all.find((e): e is EventOf<'client.rewrite'> => e.type === 'client.rewrite')!;
    expect(index?.point?.start.seq).toBe(rewrite.seq);

    // The next request loads the session from the saved point.
    const turn = await manager.begin({ explicitId: 'agent-1', system: 'sys', tools: [], messages: history, recipe: RECIPE });
    expect(turn.session.id).toBe(compacted.turn.session.id);
    expect(turn.session.loadedFrom?.start.seq).toBe(rewrite.seq);
    const fromPoint = turn.session.window.build(INPUT);

    const whole = new WindowState();
    for (const e of [...all, ...turn.appended]) whole.apply(e);
    expect(fromPoint.digest).toBe(whole.build(INPUT).digest);
    expect(fromPoint.request.messages.map((m) => ('content' in m ? m.content : null))).toEqual(['sys', 'Summary of what we did so far.', 'noted', 'go on']);
    turn.release();

    // And the log, read whole, still replays.
    expect(verifyEvents((await readLog(file)).events, { file }).every((r) => r.ok)).toBe(true);
  });

  it('a stale or missing index only costs a whole read', async () => {
    const { turn } = await request([{ role: 'user', content: 'hello' }], 'hi');
    await store.writeIndex(turn.session.id, { version: 1, point: { start: { seq: 999, offset: 0 }, carried: [{ seq: 1, offset: 5 }] } });
    const again = await manager.begin({ explicitId: 'agent-1', system: 'sys', tools: [], messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }, { role: 'user', content: 'more' }], recipe: RECIPE });
    expect(again.plan.kind).toBe('append');
    expect(again.session.loadedFrom).toBeUndefined();
    again.release();
  });
});
