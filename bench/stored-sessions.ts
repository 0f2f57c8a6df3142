/**
 * What locating the sessions that left memory holds (src/session/locator.ts): an entry each, kept
 * for `[sessions] locate_days` after the session's last request, or for ever with `0`. A gateway
 * serves one-shot calls (titles, summaries, a team's API calls) by the thousand a day, each a
 * session. Entries of real shape (hashes, ids, lineage) are stored one a minute of a simulated
 * clock, in a child process per row (`--expose-gc`, a full collection before each reading), against
 * the same number with the horizon off. docs/decisions/0023-stored-sessions-located-for-a-time.md.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Locator, type StoredEntry } from '../src/session/locator.js';
import type { Line } from './session-sections.js';

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
/** Sessions stored per row: ~139 days at one a minute. */
const SESSIONS = 200_000;

interface Row {
  horizonDays: number;
  sessions: number;
  kept: number;
  heapMiB: number;
  bytesPerKept: number;
  /** µs per `store` with the clock moving a minute each: what the horizon's sweep adds. */
  storeUs: number;
}

const hex = (): string => randomBytes(32).toString('hex');

function entry(i: number, at: number): StoredEntry {
  const id = `20261207T${String(i).padStart(6, '0')}Z-${randomBytes(4).toString('hex')}`;
  return { id, tip: hex(), length: 2, latestReply: hex(), replyTo: hex(), retryTip: hex(), ids: [], lineage: hex(), lastActive: at };
}

/** One row, in this process (run as a child): store SESSIONS entries a minute apart. */
function measure(horizonDays: number): Row {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('stored-sessions: run with --expose-gc');
  let now = 0;
  const locator = new Locator(horizonDays > 0 ? { ms: horizonDays * DAY, now: () => now } : undefined);
  gc();
  const before = process.memoryUsage().heapUsed;
  let storeNs = 0n;
  for (let i = 0; i < SESSIONS; i++) {
    const e = entry(i, i * MINUTE);
    now = e.lastActive;
    const t = process.hrtime.bigint();
    locator.store(e, undefined);
    storeNs += process.hrtime.bigint() - t;
  }
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  return { horizonDays, sessions: SESSIONS, kept: locator.storedCount, heapMiB: heap / 2 ** 20, bytesPerKept: heap / Math.max(1, locator.storedCount), storeUs: Number(storeNs) / 1000 / SESSIONS };
}

export async function storedSessionsSection(line: Line): Promise<boolean> {
  const rows = [0, 30, 7].map((days) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), String(days)], { encoding: 'utf8' })) as Row);
  line('## Stored sessions: what locating them holds, with and without `locate_days`');
  line('');
  line(`${SESSIONS.toLocaleString('en')} sessions leave memory one a minute (~${Math.round(SESSIONS / 1440)} days of a gateway serving a session a minute), each leaving`);
  line('its entry with the locator (src/session/locator.ts); a child process per row, heap after a full collection, time per store.');
  line('');
  line('| locate_days | sessions | entries kept | heap held (MiB) | bytes per entry kept | µs per store |');
  line('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) line(`| ${r.horizonDays === 0 ? '0 (for ever)' : r.horizonDays} | ${r.sessions} | ${r.kept} | ${r.heapMiB.toFixed(1)} | ${r.bytesPerKept.toFixed(0)} | ${r.storeUs.toFixed(2)} |`);
  line('');
  const forever = rows[0]!;
  const month = rows[1]!;
  const ok = month.kept <= 30 * 1440 + 1 && forever.kept === SESSIONS;
  line(`With the default (30 days) the locator holds ${month.kept} entries, a month of them, however long it has run; with \`0\` it holds`);
  line(`every one, ${forever.bytesPerKept.toFixed(0)} bytes each. ${ok ? 'As expected.' : 'NOT as expected.'}`);
  line('');
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== undefined) {
  process.stdout.write(JSON.stringify(measure(Number(process.argv[2]))));
}
