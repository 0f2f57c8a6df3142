/**
 * What memory the process has not touched before costs on this machine, measured when a run
 * begins. A target that parses or copies a large body writes fresh buffers on every request (the
 * body's bytes, the text it decodes to, the body it sends on); the bare pipe streams and writes
 * none. On one machine a fresh MiB cost ~0.1 ms of CPU, on another (a VM whose page faults go
 * through its hypervisor) several times that, and the (c) workload's figures moved with it while
 * the code did not (docs/decisions/0017-what-a-first-request-no-longer-keeps.md, its last section). Printed beside
 * the figures so a reader can tell the two apart.
 */

const MIB = 2 ** 20;

export interface FreshMemoryCost {
  /** CPU (user + system) per MiB allocated off the heap and written once, µs. */
  usPerMib: number;
  /** Minor page faults per MiB: 256 where each 4 KiB page is faulted in. */
  faultsPerMib: number;
}

/**
 * `count` buffers of 1 MiB one after another, each allocated outside V8's heap (as Buffers of
 * that size are), filled and dropped; with `global.gc` (the bench runs with --expose-gc) each is
 * collected before the next, so the allocator can hand the memory back and take it again.
 */
export function freshMemoryCost(count = 64): FreshMemoryCost {
  const gc = (globalThis as { gc?: () => void }).gc;
  let us = 0;
  let faults = 0;
  for (let i = 0; i < count; i++) {
    // Only the allocation and the writing are counted, not the collection after.
    const faults0 = process.resourceUsage().minorPageFault;
    const cpu0 = process.cpuUsage();
    Buffer.allocUnsafeSlow(MIB).fill(i & 0xff);
    const cpu = process.cpuUsage(cpu0);
    faults += process.resourceUsage().minorPageFault - faults0;
    us += cpu.user + cpu.system;
    gc?.();
  }
  return { usPerMib: us / count, faultsPerMib: faults / count };
}
