/**
 * Crash safety with real processes: a child appends with the compiled store and is SIGKILLed.
 * Everything it saw synced must survive intact, seqs stay contiguous, and a torn tail is repaired.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { LogStore } from '../../src/log/store.js';
import { Child, childWorld } from './helpers.js';

const w = childWorld();

function syncedSeqs(child: Child): number[] {
  return child.lines.filter((l) => l.startsWith('synced ')).map((l) => Number(l.slice(7)));
}

async function checkAfterCrash(id: string, synced: number): Promise<{ repaired: boolean }> {
  const store = new LogStore(w.dir);
  const log = await store.open(id, { create: false });
  const seqs = log.events.map((e) => e.seq);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  expect(log.lastSeq).toBeGreaterThanOrEqual(synced);
  for (const e of log.events) {
    // Intact: each event still says which seq it was written as, with its full padding.
    expect(e.type === 'client.msg' && e.msg.content).toBe(`message ${e.seq} ` + 'x'.repeat((e.seq % 7) * 700));
  }
  const raw = await readFile(log.file);
  expect(raw.at(-1)).toBe(10);
  const repaired = log.repaired !== undefined;
  if (log.repaired !== undefined) expect(log.repaired.offset).toBe(raw.length);
  await log.close();
  return { repaired };
}

describe('SIGKILL during appends', () => {
  it('a crash mid-line: the torn tail is repaired and every synced event is intact', async () => {
    const child = new Child('crash-writer.mjs', [w.dir, 'torn', 'torn']);
    w.children.push(child);
    await child.waitFor((l) => l === 'torn');
    await child.kill();
    expect(syncedSeqs(child)).toEqual([20]);
    const { repaired } = await checkAfterCrash('torn', 20);
    expect(repaired).toBe(true);
    // The repair itself is durable and the log is clean for the next reader.
    expect((await new LogStore(w.dir).read('torn')).torn).toBeUndefined();
  });

  it('with durability = "write" (no fdatasync), a killed process loses nothing it saw synced', async () => {
    const child = new Child('crash-writer.mjs', [w.dir, 'os-only', 'loop', 'write']);
    w.children.push(child);
    await child.waitFor((l) => l.startsWith('synced ') && Number(l.slice(7)) >= 200);
    await child.kill();
    await checkAfterCrash('os-only', Math.max(...syncedSeqs(child)));
  });

  for (const killAfter of [40, 150, 400]) {
    it(`killed while appending in a loop (after seq ${killAfter} synced)`, async () => {
      const id = `loop-${killAfter}`;
      const child = new Child('crash-writer.mjs', [w.dir, id, 'loop']);
      w.children.push(child);
      await child.waitFor((l) => l.startsWith('synced ') && Number(l.slice(7)) >= killAfter);
      await child.kill();
      const synced = Math.max(...syncedSeqs(child));
      expect(synced).toBeGreaterThanOrEqual(killAfter);
      await checkAfterCrash(id, synced);
    });
  }
});
