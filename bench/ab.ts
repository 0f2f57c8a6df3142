/**
 * Two builds of prefix-proxy, paired: this checkout's and another's (`--baseline`), both started
 * once against one fake upstream and warmed as the peers bench warms a target, then measured in
 * short bursts that alternate A B B A, so that a change of the machine's load (it is shared, and
 * moves the peers figures by a fifth from one minute to the next) falls on both builds alike. Each
 * pair of bursts gives a ratio of CPU per request; the figure is the median ratio and its quartiles,
 * where the peers bench's rounds, minutes apart, cannot tell a change of a few percent from the load.
 * `--against floor` (or another peers target) pairs this checkout with that target instead: its
 * ratio to the durable floor, measured the same way.
 *
 * Each target's CPU is also split into the main thread's and the rest, and into user time (its own
 * code) and system time (its system calls).
 *
 * Usage: node dist-bench/bench/ab.js (--baseline <checkout, built> | --against floor|stack-floor|pipe)
 *   [--workload new-conversation|agent|agent-stream] [--pairs 12] [--requests 800]
 * Prints a Markdown table; it writes nothing to RESULTS.md (a before and after belongs beside the
 * decision it supports).
 */
import autocannon from 'autocannon';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { drive } from './peers/agent-driver.js';
import { cpuMs, mainThreadCpuMs, systemCpuMs } from './peers/proc.js';
import { startTarget, startUpstream, type Target } from './peers/targets.js';
import { median, percentile } from './stats.js';

type Workload = 'new-conversation' | 'agent' | 'agent-stream';

interface Burst {
  requests: number;
  cpuMs: number;
  mainMs: number;
  /** The kernel's share of cpuMs. */
  systemMs: number;
}

/** One burst of about `requests` requests of the workload; the CPU the target spent on it. */
async function burst(target: Target, workload: Workload, requests: number, tag: string): Promise<Burst> {
  const cpu0 = cpuMs(target.pid);
  const main0 = mainThreadCpuMs(target.pid);
  const system0 = systemCpuMs(target.pid);
  const spent = (requests: number): Burst => ({ requests, cpuMs: cpuMs(target.pid) - cpu0, mainMs: mainThreadCpuMs(target.pid) - main0, systemMs: systemCpuMs(target.pid) - system0 });
  if (workload !== 'new-conversation') {
    // 8 conversations of 25 turns at once: bodies to ~50 KB, as (a) grows them.
    const conversations = Math.max(8, Math.round(requests / 25));
    const run = await drive(target, { concurrency: 8, conversations, turns: 25, turnBytes: () => 2048, stream: workload === 'agent-stream', tag });
    return spent(run.samples.length);
  }
  let n = 0;
  const result = await autocannon({
    url: target.origin + target.path,
    method: 'POST',
    connections: 10,
    amount: requests,
    headers: { 'content-type': 'application/json', ...target.headers },
    requests: [{
      setupRequest: (req: { method?: string }) => ({
        ...req,
        body: JSON.stringify({ model: target.model, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `question ${tag}-${n++}: ${'context '.repeat(200)}` }] }),
      }),
    }],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx and ${result.errors} errors`);
  return spent(result['2xx']);
}

/** What this checkout is paired with: another build, or another of the peers bench's targets. */
export type Other = { baselineMain: string } | { against: 'floor' | 'stack-floor' | 'pipe' };

export async function abRun(opts: { other: Other; workload: Workload; pairs: number; requests: number }): Promise<string[]> {
  const upstream = await startUpstream();
  const a = await startTarget('prefix-proxy', upstream);
  const b = 'against' in opts.other ? await startTarget(opts.other.against, upstream) : await startTarget('baseline', upstream, { baselineMain: opts.other.baselineMain });
  const other = 'against' in opts.other ? opts.other.against : 'baseline';
  try {
    // Warm as the peers bench does: seconds of agent requests, then the workload itself, unmeasured.
    for (const t of [a, b]) {
      const until = performance.now() + 5000;
      for (let round = 0; performance.now() < until; round++) {
        await drive(t, { concurrency: 4, conversations: 4, turns: 6, turnBytes: () => 2048, stream: false, tag: `warm-${t.name}-${round}` });
      }
      for (let i = 0; i < 2; i++) await burst(t, opts.workload, opts.requests, `settle-${t.name}-${i}`);
    }
    const perA: number[] = [];
    const perB: number[] = [];
    const mainA: number[] = [];
    const mainB: number[] = [];
    const systemA: number[] = [];
    const systemB: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < opts.pairs; i++) {
      // A B in even pairs, B A in odd ones: neither build always runs first.
      const order = i % 2 === 0 ? [a, b] : [b, a];
      const got = new Map<Target, Burst>();
      for (const t of order) got.set(t, await burst(t, opts.workload, opts.requests, `p${i}-${t.name}`));
      const x = got.get(a)!.cpuMs / got.get(a)!.requests;
      const y = got.get(b)!.cpuMs / got.get(b)!.requests;
      mainA.push(got.get(a)!.mainMs / got.get(a)!.requests);
      mainB.push(got.get(b)!.mainMs / got.get(b)!.requests);
      systemA.push(got.get(a)!.systemMs / got.get(a)!.requests);
      systemB.push(got.get(b)!.systemMs / got.get(b)!.requests);
      perA.push(x);
      perB.push(y);
      ratios.push(x / y);
    }
    const fmt = (v: number) => v.toFixed(3);
    const spread = (v: number[]) => `${fmt(percentile(v, 25))}-${fmt(percentile(v, 75))}`;
    return [
      `A/B, ${opts.workload}: ${opts.pairs} pairs of bursts of ~${opts.requests} requests (A B, then B A), CPU of each target's process per request.`,
      '',
      '| build | CPU per request, median (ms) | quartiles (ms) | main thread (ms) | other threads and children (ms) | user (ms) | system (ms) |',
      '|---|---:|---:|---:|---:|---:|---:|',
      `| this checkout | ${fmt(median(perA))} | ${spread(perA)} | ${fmt(median(mainA))} | ${fmt(median(perA.map((v, i) => v - mainA[i]!)))} | ${fmt(median(perA.map((v, i) => v - systemA[i]!)))} | ${fmt(median(systemA))} |`,
      `| ${other} | ${fmt(median(perB))} | ${spread(perB)} | ${fmt(median(mainB))} | ${fmt(median(perB.map((v, i) => v - mainB[i]!)))} | ${fmt(median(perB.map((v, i) => v - systemB[i]!)))} | ${fmt(median(systemB))} |`,
      '',
      `Paired ratio, this checkout over the ${other}: median ${fmt(median(ratios))}, quartiles ${spread(ratios)}, below 1 in ${ratios.filter((v) => v < 1).length} of ${ratios.length} pairs.`,
    ];
  } finally {
    await Promise.all([a.stop(), b.stop(), upstream.stop()]);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      baseline: { type: 'string' },
      against: { type: 'string' },
      workload: { type: 'string', default: 'new-conversation' },
      pairs: { type: 'string', default: '12' },
      requests: { type: 'string', default: '800' },
    },
  });
  const against = values.against;
  if ((values.baseline === undefined) === (against === undefined)) throw new Error('ab: give --baseline <checkout> (a built checkout of prefix-proxy) or --against floor|stack-floor|pipe');
  if (against !== undefined && against !== 'floor' && against !== 'stack-floor' && against !== 'pipe') throw new Error(`ab: --against is floor, stack-floor or pipe, not ${against}`);
  const workload = values.workload as Workload;
  if (workload !== 'new-conversation' && workload !== 'agent' && workload !== 'agent-stream') throw new Error(`ab: --workload is new-conversation, agent or agent-stream, not ${values.workload}`);
  const other: Other = against !== undefined ? { against } : { baselineMain: join(resolve(values.baseline!), 'dist', 'cli', 'main.js') };
  const lines = await abRun({ other, workload, pairs: Number(values.pairs), requests: Number(values.requests) });
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
