/**
 * What the session room keeps beside each log (`<id>.idx.json`): where the next load may start
 * reading (the start tracker's point) and the bounded entry that locates the session, with the
 * log's size when it was written. Startup reads these, not the logs: a log is read whole only
 * when its entry is missing or older than the log (the proxy stopped without writing it).
 */
import { ProxyError } from '../core/errors.js';
import type { IndexSnapshot, Store } from '../store/types.js';
import type { StartPoint } from '../window/index.js';
import { replyMarks, type StoredEntry } from './locator.js';
import { replyFingerprint } from './fingerprint.js';
import { ClientView } from './view.js';

interface Sidecar {
  version: 2;
  /** The log's byte length when this was written: the entry is current while the log has it. */
  log_size: number;
  point?: StartPoint;
  entry: StoredEntry;
}

/** Version 1 held only the point. */
interface SidecarV1 {
  version: 1;
  point: StartPoint;
}

export interface Damaged {
  id: string;
  reason: string;
}

/** Sidecars read in parallel at startup; enough to keep the disk busy, few enough file handles. */
const PARALLEL = 64;

export class SessionFiles {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Every stored session's entry; a log that cannot be read is named in `damaged` and skipped.
   * The saved indexes come in one snapshot from the store (files.ts reads the sidecars).
   */
  async scan(): Promise<{ entries: StoredEntry[]; damaged: Damaged[]; read: number }> {
    const snapshot = await this.#store.indexSnapshot();
    const entries: StoredEntry[] = [];
    const damaged: Damaged[] = [];
    const stale: { id: string; point: StartPoint | undefined }[] = [];
    for (const one of snapshot) {
      const id = one.id;
      const saved = current(one);
      if (saved.entry !== undefined) entries.push(saved.entry);
      else stale.push({ id, point: saved.point });
    }
    let next = 0;
    const worker = async () => {
      while (next < stale.length) {
        const { id, point } = stale[next++]!;
        try {
          const { entry, size } = await this.#fromLog(id);
          entries.push(entry);
          // Written now, so the next start reads the entry instead of the log.
          await this.save(id, size, point, entry).catch(() => undefined);
        } catch (err) {
          damaged.push({ id, reason: err instanceof Error ? err.message : String(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, stale.length) }, worker));
    return { entries, damaged, read: stale.length };
  }

  /** The saved start point, if it fits a log of this session (undefined: read the log whole). */
  async point(id: string): Promise<StartPoint | undefined> {
    try {
      const saved = await this.#store.readIndex<Sidecar | SidecarV1>(id);
      const point = saved?.version === 1 || saved?.version === 2 ? saved.point : undefined;
      return point !== undefined && point.start.seq > 1 ? point : undefined;
    } catch {
      return undefined; // an unreadable sidecar only costs a whole read
    }
  }

  /** Written by the lock holder as the session leaves memory, after its log is synced. */
  async save(id: string, logSize: number, point: StartPoint | undefined, entry: StoredEntry): Promise<void> {
    const sidecar: Sidecar = { version: 2, log_size: logSize, entry, ...(point !== undefined && point.start.seq > 1 ? { point } : {}) };
    await this.#store.writeIndex(id, sidecar);
  }

  /** The entry folded from the whole log (a log with no entry, or a newer one). */
  async #fromLog(id: string): Promise<{ entry: StoredEntry; size: number }> {
    const { events, torn, end } = await this.#store.read(id);
    if (events.length === 0 && torn !== undefined) throw new ProxyError('log_malformed', { file: this.#store.file(id), line: 1, detail: 'no complete event' });
    const view = new ClientView();
    const ids: string[] = [];
    let lineage = id;
    let side = false;
    for (const e of events) {
      view.apply(e);
      if (e.type === 'session.start') {
        ids.push(...e.ids);
        lineage = e.lineage ?? e.parent?.session ?? id;
        side = e.side !== undefined;
      }
    }
    // A torn tail is cut when the session is next opened; until then the entry names the size before it.
    return { entry: entryOf(id, view, ids, lineage, Date.parse(events.at(-1)?.ts ?? '') || 0, side), size: torn === undefined ? end : -1 };
  }
}

/** The saved entry if it is current for the log, and its start point either way. */
function current(one: IndexSnapshot): { entry?: StoredEntry; point?: StartPoint } {
  const saved = one.index as Sidecar | SidecarV1 | undefined;
  const point = (saved?.version === 1 || saved?.version === 2) && saved.point !== undefined && saved.point.start.seq > 1 ? saved.point : undefined;
  const withPoint = point === undefined ? {} : { point };
  if (saved?.version !== 2 || saved.entry?.id !== one.id) return withPoint;
  return one.size >= 0 && one.size === saved.log_size ? { ...withPoint, entry: saved.entry } : withPoint;
}

/** The bounded entry a session leaves behind. */
export function entryOf(id: string, view: ClientView, ids: readonly string[], lineage: string, lastActive: number, side = false): StoredEntry {
  const hashes = view.hashes();
  const latest = view.latestReplyEntry();
  const latestReply = latest === undefined ? undefined : replyFingerprint(latest.msg);
  const last = view.entries.at(-1);
  // The view ends with a reply: a retry of the request it answered holds everything before it.
  const retryTip = last !== undefined && replyFingerprint(last.msg) !== undefined ? (hashes.at(-2) ?? view.h0) : undefined;
  return {
    id, tip: hashes.at(-1) ?? view.h0, length: hashes.length, ids: [...ids], lineage, lastActive,
    ...(latestReply === undefined ? {} : { latestReply, ...replyMarks(latest!) }),
    ...(retryTip === undefined ? {} : { retryTip }),
    ...(side ? { side: true as const } : {}),
  };
}
