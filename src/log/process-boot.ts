/**
 * Whether the process a file names may still be running. A pid names a process only within one
 * boot of the machine: after a power loss the pid a proxy had may belong to any process, which
 * `kill(pid, 0)` finds alive, so a lock, a held list or a first-sync segment of the dead proxy
 * would look held for as long as that process runs (sessions refused with `log_locked`, a
 * segment's answers not put back into their logs). The files that name a writer's pid also name
 * its boot (Linux's boot id) and when in that boot it started (`/proc/<pid>/stat`'s start time,
 * in clock ticks since the boot): a writer of another boot is gone whatever has its pid now, and
 * so is one whose pid now belongs to a process that started at another time (pids wrapped). Where
 * there is no /proc, or a file from before this was recorded, the pid alone decides
 * (docs/decisions/0018-a-writers-pid-names-its-boot-and-start.md).
 */
import { readFileSync } from 'node:fs';

const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

function readBoot(): string | undefined {
  try {
    const id = readFileSync(BOOT_ID_FILE, 'latin1').trim().replaceAll('-', '');
    return /^[0-9a-f]{32}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** This boot's id (32 hex digits), or undefined where the system gives none. */
export const BOOT: string | undefined = readBoot();

/** When process `pid` started, in clock ticks since the boot (Linux), or undefined. */
export function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command's name, which may hold spaces and parentheses: the 22nd is the
    // start time, the 20th after the name's closing parenthesis (proc(5)).
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start !== undefined && /^[0-9]{1,20}$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/** This process's start, recorded with its boot. */
const START: string | undefined = BOOT === undefined ? undefined : startOf(process.pid);

/** A boot id as files write it: 32 hex digits. */
export const BOOT_PATTERN = '[0-9a-f]{32}';

/** A process as files name it: its pid, and where recorded its boot and its start in that boot. */
export interface Writer {
  pid: number;
  boot?: string;
  start?: string;
}

/**
 * Whether the process a file names may still be running: false for another boot's, or for one
 * whose pid is now a process that started at another time; otherwise `kill(pid, 0)` decides
 * (EPERM: it exists, another user's).
 */
export function mayRun({ pid, boot, start }: Writer): boolean {
  if (boot !== undefined && BOOT !== undefined && boot !== BOOT) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (start === undefined || boot === undefined || boot !== BOOT) return true;
  const now = startOf(pid);
  return now === undefined || now === start;
}

/** A writer from the fields a file names it by: its pid, then its boot and start if recorded. */
export function writerOf(pid: string, boot: string | undefined, start: string | undefined): Writer {
  return { pid: Number(pid), ...(boot === undefined ? {} : { boot }), ...(start === undefined ? {} : { start }) };
}

/** This process's fields, in the order files write them: its pid, then where known its boot and start. */
export function selfFields(): string[] {
  return [String(process.pid), ...(BOOT === undefined ? [] : [BOOT]), ...(BOOT === undefined || START === undefined ? [] : [START])];
}

/** This process as a line names it (a lock, a pid file, a held list's first line). */
export function selfLine(): string {
  return `${selfFields().join(' ')}\n`;
}

const LINE = new RegExp(`^([0-9]{1,10})(?: (${BOOT_PATTERN})(?: ([0-9]{1,20}))?)?$`);

/** A line written by `selfLine` (or a bare pid, as earlier versions wrote): undefined if it is neither. */
export function parseSelfLine(text: string): Writer | undefined {
  const m = LINE.exec(text.trim());
  if (m === null || Number(m[1]) <= 0) return undefined;
  return writerOf(m[1]!, m[2], m[3]);
}
