import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cpuMs, mainThreadCpuMs, systemCpuMs } from '../../bench/peers/proc.js';

/** System and total CPU this process spent while `work` ran for `ms`. */
function spentOn(work: () => void, ms: number): { system: number; total: number } {
  const pid = process.pid;
  const system0 = systemCpuMs(pid);
  const total0 = cpuMs(pid);
  const until = performance.now() + ms;
  while (performance.now() < until) work();
  return { system: systemCpuMs(pid) - system0, total: cpuMs(pid) - total0 };
}

describe('a process\'s CPU from /proc', () => {
  it('splits off the time spent in system calls: a share that grows with them', () => {
    // Arithmetic only, then nothing but system calls (stat spends its time in the kernel).
    let x = 0;
    const compute = spentOn(() => {
      for (let i = 0; i < 100_000; i++) x = (x * 31 + i) % 1_000_003;
    }, 400);
    const calls = spentOn(() => {
      for (let i = 0; i < 1000; i++) statSync('/');
    }, 400);
    expect(x).toBeGreaterThanOrEqual(0); // the loop's result used, so it is not optimised away
    expect(compute.total).toBeGreaterThan(200);
    expect(calls.system).toBeGreaterThan(0);
    expect(calls.system).toBeLessThanOrEqual(calls.total);
    // A /proc reading that did not tell the two apart (all user, all system, or the same split) fails here.
    expect(calls.system / calls.total).toBeGreaterThan(compute.system / compute.total + 0.1);
    expect(systemCpuMs(process.pid)).toBeLessThanOrEqual(cpuMs(process.pid));
    expect(mainThreadCpuMs(process.pid)).toBeLessThanOrEqual(cpuMs(process.pid));
  });
});
