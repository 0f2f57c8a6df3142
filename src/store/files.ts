/**
 * The file store (the embedded default): the JSONL logs and sidecars of src/log under the data
 * directory, as they always were. This adds what the Store interface asks beyond LogStore: a read
 * by offset, the startup scan of the sidecars, and the no-ops of a store with one process.
 */
import { readFileSync, statSync } from 'node:fs';
import type { LogEvent } from '../core/events.js';
import { readEventAt } from '../log/reader.js';
import { LogStore } from '../log/store.js';
import type { IndexSnapshot, Store } from './types.js';

export class FileStore extends LogStore implements Store {
  readonly kind = 'files';

  readEventAt(id: string, offset: number): Promise<LogEvent> {
    return readEventAt(this.file(id), offset);
  }

  /**
   * The sidecars are read synchronously: this runs once, before the proxy serves, and ten
   * thousand small reads cost a quarter of the time through the thread pool (docs/decisions.md,
   * Session index).
   */
  async indexSnapshot(): Promise<IndexSnapshot[]> {
    const ids = await this.listSessions();
    return ids.map((id) => {
      let index: unknown;
      try {
        index = JSON.parse(readFileSync(this.indexFile(id), 'utf8'));
      } catch {
        index = undefined; // missing or unreadable: the log is read whole
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

  close(): Promise<void> {
    return Promise.resolve();
  }
}
