/** The store contract on the file store, and what only files have: a torn last line, cut on open. */
import { spawnSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/files.js';
import { openStore } from '../../src/store/open.js';
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

  it('the proxy\'s store puts back the first syncs a crashed process left before anything reads; a reader\'s does not', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pp-first-syncs-'));
    try {
      const line = `${JSON.stringify({ seq: 1, ts: 'T', type: 'client.msg', msg: { role: 'user', content: 'hi' } })}\n`;
      const segments = join(dataDir, 'sessions', 'first-syncs');
      await mkdir(segments, { recursive: true });
      await writeFile(join(segments, `${spawnSync('true').pid}-0.log`), `{"id":"s1","len":${Buffer.byteLength(line)}}\n${line}`);
      const reader = await openStore({ kind: 'files', dataDir, urlEnv: '' });
      expect(await reader.exists('s1')).toBe(false);
      await reader.close();
      const proxy = await openStore({ kind: 'files', dataDir, urlEnv: '', recover: true });
      expect(await readFile(join(dataDir, 'sessions', 's1.jsonl'), 'utf8')).toBe(line);
      expect(await proxy.listSessions()).toStrictEqual(['s1']);
      await proxy.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
