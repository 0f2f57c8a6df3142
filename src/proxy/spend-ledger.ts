/**
 * The spend ledger, `<data_dir>/client-spend.jsonl`: one line per priced reply to a client key
 * (`{"ts","client","usd"}`; the key's name, never the key), appended with the log's group commit and
 * durability, read at startup to rebuild each key's spend (docs/decisions.md, Client budgets). At
 * startup, lines from before the current UTC month are folded into one line per client, so the
 * file holds about a month of replies whatever the proxy's age; a torn last line is cut off.
 */
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { GroupCommitWriter } from '../log/group-commit.js';
import { periodStart } from './budget-period.js';
import type { SpendSink } from './client-limits.js';

export interface SpendEntry {
  /** When the reply was charged, ms since the epoch. */
  ts: number;
  client: string;
  usd: number;
}

export const LEDGER_FILE = 'client-spend.jsonl';

export class SpendLedger implements SpendSink {
  readonly #fh: FileHandle;
  readonly #writer: GroupCommitWriter;

  private constructor(fh: FileHandle, size: number, durable: boolean) {
    this.#fh = fh;
    this.#writer = new GroupCommitWriter(fh, size, durable);
  }

  /** Opens (or creates) the ledger for appending, with the entries it holds. */
  static async open(dataDir: string, opts: { durable: boolean; now: number }): Promise<{ ledger: SpendLedger; entries: SpendEntry[] }> {
    await mkdir(dataDir, { recursive: true });
    const file = join(dataDir, LEDGER_FILE);
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    const read = parseLedger(text ?? '');
    const entries = foldBefore(read.entries, periodStart('month', opts.now));
    if (text === undefined || read.torn || entries.length < read.entries.length) await rewrite(dataDir, file, entries, opts.durable);
    const fh = await open(file, 'a');
    const size = (await fh.stat()).size;
    return { ledger: new SpendLedger(fh, size, opts.durable), entries };
  }

  append(entry: SpendEntry): void {
    this.#writer.write(Buffer.from(ledgerLine(entry)));
  }

  sync(): Promise<void> {
    return this.#writer.sync();
  }

  async close(): Promise<void> {
    await this.#writer.idle();
    await this.#fh.close();
  }
}

export function ledgerLine(entry: SpendEntry): string {
  return `${JSON.stringify({ ts: new Date(entry.ts).toISOString(), client: entry.client, usd: entry.usd })}\n`;
}

/** Every whole line's entry; `torn` when the text does not end at a line's end (a crash mid-append). */
export function parseLedger(text: string): { entries: SpendEntry[]; torn: boolean } {
  const lines = text.split('\n');
  const tail = lines.pop() ?? '';
  const entries: SpendEntry[] = [];
  for (const line of lines) {
    const entry = readEntry(line);
    // Only a line the ledger wrote reads back; anything else is left out (and gone at the next fold).
    if (entry !== undefined) entries.push(entry);
  }
  return { entries, torn: tail !== '' };
}

/** The entries from `cutoff` on, after one entry per client summing those before it (dated at the last of them). */
export function foldBefore(entries: readonly SpendEntry[], cutoff: number): SpendEntry[] {
  const before = new Map<string, SpendEntry>();
  const after: SpendEntry[] = [];
  for (const e of entries) {
    if (e.ts >= cutoff) {
      after.push(e);
      continue;
    }
    const folded = before.get(e.client);
    before.set(e.client, folded === undefined ? { ...e } : { client: e.client, ts: Math.max(folded.ts, e.ts), usd: folded.usd + e.usd });
  }
  return [...before.values(), ...after];
}

function readEntry(line: string): SpendEntry | undefined {
  try {
    const raw = JSON.parse(line) as { ts?: unknown; client?: unknown; usd?: unknown };
    const ts = typeof raw.ts === 'string' ? Date.parse(raw.ts) : Number.NaN;
    if (Number.isNaN(ts) || typeof raw.client !== 'string' || typeof raw.usd !== 'number' || !Number.isFinite(raw.usd)) return undefined;
    return { ts, client: raw.client, usd: raw.usd };
  } catch {
    return undefined;
  }
}

/** Replaces the ledger whole: a new file, synced, renamed over the old, the directory synced. */
async function rewrite(dir: string, file: string, entries: readonly SpendEntry[], durable: boolean): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(entries.map(ledgerLine).join(''));
    if (durable) await fh.datasync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  if (durable) {
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }
}
