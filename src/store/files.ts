/**
 * The file store (the embedded default): the JSONL logs and sidecars of src/log under the data
 * directory, as they always were. This adds what the Store interface asks beyond LogStore: a read
 * by offset, the startup scan of the sidecars, and the no-ops of a store with one process.
 */
import { readFileSync, statSync } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import { readEventAt } from '../log/reader.js';
import { LogStore } from '../log/store.js';
import { removeUnnamedImageFiles } from './file-images-gc.js';
import type { ImagesRemoved, IndexSnapshot, SessionPruner, Store } from './types.js';

export class FileStore extends LogStore implements Store {
  readonly kind = 'files';

  readEventAt(id: string, offset: number): Promise<LogEvent> {
    return readEventAt(this.file(id), offset);
  }

  async exportLines(id: string): Promise<string[]> {
    const read = await this.read(id);
    if (read.torn !== undefined) {
      throw new ProxyError('log_malformed', { file: this.file(id), line: read.torn.line, detail: 'torn last line; open the session with the proxy first, which repairs it' });
    }
    return (await readFile(this.file(id), 'utf8')).split('\n').slice(0, -1);
  }

  async importLog(id: string, lines: readonly string[]): Promise<void> {
    const file = this.file(id);
    await mkdir(this.dir, { recursive: true });
    let fh;
    try {
      fh = await open(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new ProxyError('bad_argument', { detail: `${file} exists already; nothing was written` });
      throw err;
    }
    try {
      await fh.writeFile(lines.map((l) => `${l}\n`).join(''), 'utf8');
      await fh.datasync();
    } finally {
      await fh.close();
    }
    // The new file's directory entry is durable once the directory is synced.
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  /**
   * The sidecars come from the journal, read once; a session it does not name may have a sidecar
   * file from before it. Read synchronously: this runs once, before the proxy serves, and ten
   * thousand small reads cost a quarter of the time through the thread pool (docs/decisions.md,
   * Session index).
   */
  async indexSnapshot(): Promise<IndexSnapshot[]> {
    const ids = await this.listSessions();
    const saved = this.savedIndexes(new Set(ids));
    return ids.map((id) => {
      let index = saved.get(id);
      if (index === undefined) {
        try {
          index = JSON.parse(readFileSync(this.indexFile(id), 'utf8'));
        } catch {
          index = undefined; // missing or unreadable: the log is read whole
        }
      }
      let size = -1;
      try {
        size = statSync(this.file(id)).size;
      } catch {
        // gone since listed: the entry is not current
      }
      return { id, index, size };
    });
  }

  /** One process holds the files: the locator already knows every session. */
  readonly shared = false;

  locate(): Promise<unknown[]> {
    return Promise.resolve([]);
  }

  /** Budgets stay in the process, with client-spend.jsonl (src/proxy/spend-ledger.ts). */
  readonly ledger = undefined;
  /** Keys are the config's `[auth] keys`. */
  readonly keys = undefined;
  /** Images are files under the data dir's `blobs/` (src/proxy/images.ts). */
  readonly blobs = undefined;

  /** LogStore's own `removeIdle` and `recoverFirstSyncs`, and the images under `blobs/`. */
  get pruner(): SessionPruner {
    return this;
  }

  async removeUnnamedImages(idleBefore: number, dryRun: boolean, leaving: readonly string[]): Promise<ImagesRemoved> {
    const skip = new Set(leaving);
    const logs = (await this.listSessions()).filter((id) => !skip.has(id)).map((id) => this.file(id));
    return removeUnnamedImageFiles(join(dirname(this.dir), 'blobs'), logs, idleBefore, dryRun);
  }

  /** The files are the process's own disk: ready while the process is. */
  ping(): Promise<void> {
    return Promise.resolve();
  }
}
