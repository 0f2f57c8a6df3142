import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cpuMs, mainThreadCpuMs, systemCpuMs } from '../../bench/peers/proc.js';

describe('a process\'s CPU from /proc', () => {
  it('splits off the time spent in system calls, which grows with them', () => {
    const pid = process.pid;
    const system0 = systemCpuMs(pid);
    const total0 = cpuMs(pid);
    // Half a second of nothing but system calls: stat spends its time in the kernel.
    const until = performance.now() + 500;
    while (performance.now() < until) for (let i = 0; i < 1000; i++) statSync('/');
    const system = systemCpuMs(pid) - system0;
    const total = cpuMs(pid) - total0;
    expect(system).toBeGreaterThan(0);
    expect(system).toBeLessThanOrEqual(total);
    expect(systemCpuMs(pid)).toBeLessThanOrEqual(cpuMs(pid));
    expect(mainThreadCpuMs(pid)).toBeLessThanOrEqual(cpuMs(pid));
  });
});
