/**
 * Whether the process a file names may still be running. A pid names a process only within one
 * boot of the machine: after a power loss the pid a proxy had may belong to any process, which
 * `kill(pid, 0)` finds alive, so a lock, a held list or a first-sync segment of the dead proxy
 * would look held for as long as that process runs (sessions refused with `log_locked`, a
 * segment's answers not put back into their logs). The files that name a writer's pid also name
 * its boot (Linux's boot id), and a writer of another boot is gone whatever has its pid now.
 * Where there is no boot id, or a file from before this was recorded, the pid alone decides.
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

/** A boot id as files write it: 32 hex digits. */
export const BOOT_PATTERN = '[0-9a-f]{32}';

/**
 * Whether process `pid`, which ran in boot `boot` (undefined: not recorded), may still be running.
 * False for another boot's process; otherwise `kill(pid, 0)` decides (EPERM: it exists, another
 * user's).
 */
export function mayRun(pid: number, boot?: string): boolean {
  if (boot !== undefined && BOOT !== undefined && boot !== BOOT) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This process as a line names it: `<pid>` and, where known, ` <boot>`. */
export function selfLine(): string {
  return BOOT === undefined ? `${process.pid}\n` : `${process.pid} ${BOOT}\n`;
}

/** A line written by `selfLine` (or a bare pid, as earlier versions wrote): undefined if it is neither. */
export function parseSelfLine(text: string): { pid: number; boot?: string } | undefined {
  const m = new RegExp(`^([0-9]{1,10})(?: (${BOOT_PATTERN}))?$`).exec(text.trim());
  if (m === null) return undefined;
  const pid = Number(m[1]);
  if (pid <= 0) return undefined;
  return m[2] === undefined ? { pid } : { pid, boot: m[2] };
}
