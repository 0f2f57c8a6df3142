/** A child's own CPU time and resident memory, read from /proc (Linux), so each target pays only for itself. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * User plus system CPU time of a process so far, its children's that it has waited for included
 * (prefix-proxy's first-sync checkpoint runs `sync -f`, whose syncfs does its work in the child),
 * in ms (resolution: one clock tick, usually 10 ms).
 */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`, true);
}

/**
 * The CPU time of a process's main thread so far, in ms: what is left of `cpuMs` is its other
 * threads' (libuv's pool, which makes and syncs files, and V8's helpers, which collect and compile).
 */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`, false);
}

/**
 * The kernel's share of `cpuMs` (system time, its waited-for children's included), in ms: what the
 * process's system calls cost, where the rest is its own code (user time).
 */
export function systemCpuMs(pid: number): number {
  const { stime, cstime } = statTicks(`/proc/${pid}/stat`);
  return ((stime + cstime) * 1000) / TICKS_PER_SECOND;
}

function statCpuMs(file: string, children: boolean): number {
  const { utime, stime, cutime, cstime } = statTicks(file);
  const waited = children ? cutime + cstime : 0;
  return ((utime + stime + waited) * 1000) / TICKS_PER_SECOND;
}

function statTicks(file: string): { utime: number; stime: number; cutime: number; cstime: number } {
  const stat = readFileSync(file, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { utime: Number(fields[11]), stime: Number(fields[12]), cutime: Number(fields[13]), cstime: Number(fields[14]) };
}

/** Resident set size of a process, in MiB (VmRSS). */
export function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}
