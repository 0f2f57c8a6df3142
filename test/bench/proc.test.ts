import { closeSync, openSync, readSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cpuMs, mainThreadCpuMs, systemCpuMs } from '../../bench/peers/proc.js';

/**
 * System and total CPU this process spent while `work` ran until it had spent `ms` of CPU (or for
 * 20 times that on the clock): on a machine other tests keep busy, a span of the clock alone may
 * get too little CPU to measure.
 */
function spentOn(work: () => void, ms: number): { system: number; total: number } {
  const pid = process.pid;
  const system0 = systemCpuMs(pid);
  const total0 = cpuMs(pid);
  const until = performance.now() + 20 * ms;
  while (performance.now() < until && cpuMs(pid) - total0 < ms) {
    for (let i = 0; i < 20; i++) work();
  }
  return { system: systemCpuMs(pid) - system0, total: cpuMs(pid) - total0 };
}

describe('a process\'s CPU from /proc', () => {
  it('splits off the time spent in system calls: a share that grows with them', () => {
    // Arithmetic only, then nothing but system calls: a read of /dev/zero spends its time in the
    // kernel, filling the buffer.
    let x = 0;
    const compute = spentOn(() => {
      for (let i = 0; i < 5_000; i++) x = (x * 31 + i) % 1_000_003;
    }, 300);
    const zero = openSync('/dev/zero', 'r');
    const buffer = Buffer.alloc(1 << 20);
    const calls = spentOn(() => readSync(zero, buffer, 0, buffer.length, null), 300);
    closeSync(zero);
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
