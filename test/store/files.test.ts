/** The store contract on the file store, and what only files have: a torn last line, cut on open. */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/files.js';
import { storeContract } from './contract.js';

async function makeFiles() {
  const dir = await mkdtemp(join(tmpdir(), 'pp-store-files-'));
  const store = new FileStore(dir);
  return {
    store,
    another: () => Promise.resolve(new FileStore(dir)),
    async rawLines(id: string) {
      const text = await readFile(store.file(id), 'utf8');
      return text.split('\n').slice(0, -1);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

storeContract('files', makeFiles);

describe('file store only', () => {
  it('a torn last line (a write cut short) is reported by read and cut off by the next writer', async () => {
    const b = await makeFiles();
    try {
      const w = await b.store.open('s1', { create: true });
      const one = w.append({ type: 'session.start', recipe: { version: 1 } as never, ids: [] }, 'T');
      await w.close();
      await appendFile(b.store.file('s1'), '{"seq":2,"ts":"T","ty');
      expect((await b.store.read('s1')).torn).toMatchObject({ line: 2 });
      const again = await b.store.open('s1', { create: false });
      expect(again.repaired).toMatchObject({ line: 2 });
      expect(again.events).toEqual([one]);
      expect(again.append({ type: 'client.msg', msg: { role: 'user', content: 'x' } }, 'T').seq).toBe(2);
      await again.close();
      expect(await b.rawLines('s1')).toHaveLength(2);
      expect((await b.store.read('s1')).torn).toBeUndefined();
    } finally {
      await b.cleanup();
    }
  });

  it('the startup snapshot reads each sidecar with the log size', async () => {
    const b = await makeFiles();
    try {
      const w = await b.store.open('s1', { create: true });
      w.append({ type: 'session.start', recipe: { version: 1 } as never, ids: [] }, 'T');
      await w.close();
      await appendFile(b.store.indexFile('s1'), 'not json');
      const [snap] = await b.store.indexSnapshot();
      expect(snap).toEqual({ id: 's1', index: undefined, size: w.size });
    } finally {
      await b.cleanup();
    }
  });
});
