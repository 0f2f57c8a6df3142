/**
 * The peers bench as markdown: one table per workload (medians over rounds, ratios against the bare
 * pipe), failures named under their table, and the project's targets checked from the figures.
 */
import { fmt, median } from '../stats.js';
import { TARGET_LABELS, type TargetName } from './targets.js';
import type { RunResult, WorkloadKey } from './workloads.js';

/** Each target's runs of one workload, by round (a failed run is its error message). */
export type Runs = Partial<Record<TargetName, (RunResult | string)[]>>;

export interface WorkloadReport {
  key: WorkloadKey;
  title: string;
  about: string[];
  runs: Runs;
}

interface Column {
  header: string;
  value: (name: TargetName) => number;
  digits: number;
  suffix?: string;
}

const ok = (r: RunResult | string | undefined): r is RunResult => typeof r === 'object';

/** The median over rounds of one figure of a target's successful runs. */
export function med(runs: Runs, name: TargetName, pick: (r: RunResult) => number): number {
  return median((runs[name] ?? []).filter(ok).map(pick));
}

/** `f(a's run, b's run)` for every round both ran in: pairs taken in one round share its noise. */
function perRound(runs: Runs, a: TargetName, b: TargetName, f: (x: RunResult, y: RunResult) => number): number[] {
  const as = runs[a] ?? [];
  const bs = runs[b] ?? [];
  const out: number[] = [];
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const x = as[i];
    const y = bs[i];
    if (ok(x) && ok(y)) out.push(f(x, y));
  }
  return out;
}

/** Median over rounds of (a's p50 - b's p50) in the same round. */
export function addedP50(runs: Runs, a: TargetName, b: TargetName): number {
  return median(perRound(runs, a, b, (x, y) => x.p50 - y.p50));
}

/**
 * The lowest and highest of a's CPU per request over b's in the same round, as ` (rounds: 1.80x to
 * 2.30x)`: how far this machine's noise moves a ratio the verdict reads off the medians. Empty
 * with fewer than two such rounds.
 */
export function cpuRatioSpread(runs: Runs, a: TargetName, b: TargetName): string {
  const ratios = perRound(runs, a, b, (x, y) => x.cpuPerRequest / y.cpuPerRequest).filter(Number.isFinite);
  if (ratios.length < 2) return '';
  return ` (rounds: ${fmt(Math.min(...ratios), 2)}x to ${fmt(Math.max(...ratios), 2)}x)`;
}

export function renderWorkload(w: WorkloadReport): string[] {
  const { runs } = w;
  const pipeCpu = med(runs, 'pipe', (r) => r.cpuPerRequest);
  const pipeRps = med(runs, 'pipe', (r) => r.rps);
  const columns: Column[] = [
    { header: 'req/s', value: (n) => med(runs, n, (r) => r.rps), digits: 0 },
    { header: 'p50 (ms)', value: (n) => med(runs, n, (r) => r.p50), digits: 2 },
    { header: 'p99 (ms)', value: (n) => med(runs, n, (r) => r.p99), digits: 2 },
    { header: 'CPU (ms/req)', value: (n) => med(runs, n, (r) => r.cpuPerRequest), digits: 3 },
    { header: 'RSS (MiB)', value: (n) => med(runs, n, (r) => r.rssMb), digits: 0 },
    { header: 'CPU vs pipe', value: (n) => med(runs, n, (r) => r.cpuPerRequest) / pipeCpu, digits: 2, suffix: 'x' },
    { header: 'req/s vs pipe', value: (n) => med(runs, n, (r) => r.rps) / pipeRps, digits: 2, suffix: 'x' },
  ];
  if (w.key.startsWith('deep')) {
    columns.push(
      { header: 'p50 added over upstream (ms)', value: (n) => (n === 'upstream' ? NaN : addedP50(runs, n, 'upstream')), digits: 2 },
      { header: 'p50 added over pipe (ms)', value: (n) => (n === 'upstream' || n === 'pipe' ? NaN : addedP50(runs, n, 'pipe')), digits: 2 },
    );
  }
  if (w.key === 'live-sessions') {
    columns.push(
      { header: 'own request 10 (ms)', value: (n) => med(runs, n, (r) => r.extra['own10']!), digits: 2 },
      { header: 'request 10 (ms)', value: (n) => med(runs, n, (r) => r.extra['req10']!), digits: 2 },
      { header: 'request 1000 (ms)', value: (n) => med(runs, n, (r) => r.extra['req1000']!), digits: 2 },
      { header: '1000 vs 10', value: (n) => med(runs, n, (r) => r.extra['growth']!), digits: 2, suffix: 'x' },
    );
  }
  const out = [`### ${w.title}`, '', ...w.about, ''];
  out.push(`| target | ${columns.map((c) => c.header).join(' | ')} |`, `|---|${columns.map(() => '---:').join('|')}|`);
  const failures: string[] = [];
  for (const name of Object.keys(runs) as TargetName[]) {
    const all = runs[name]!;
    const good = all.filter(ok).length;
    const failed = all.filter((r): r is string => typeof r === 'string');
    if (failed.length === all.length) failures.push(`${TARGET_LABELS[name]} failed in every run here, so it has no figures in this table: ${failed[0]}`);
    else if (failed.length > 0) failures.push(`${TARGET_LABELS[name]} failed in ${failed.length} of ${all.length} runs (its figures are from the others): ${failed[0]}`);
    if (good === 0) {
      out.push(`| ${TARGET_LABELS[name]} | ${columns.map(() => 'fails').join(' | ')} |`);
      continue;
    }
    out.push(`| ${TARGET_LABELS[name]} | ${columns.map((c) => cell(c.value(name), c.digits, c.suffix)).join(' | ')} |`);
  }
  out.push('');
  for (const f of failures) out.push(`${f.replace(/\s+/g, ' ').slice(0, 400)}`, '');
  const targets = checkTargets(w);
  if (targets !== undefined) out.push(`Targets: ${targets}`, '');
  const floor = aboveFloor(w);
  if (floor !== undefined) out.push(floor, '');
  const disk = diskCost(w);
  if (disk !== undefined) out.push(disk, '');
  return out;
}

/** The workloads whose CPU per request the report reads against the pipe's and the references': (a), its variants and (b). */
export const CPU_JUDGED: readonly WorkloadKey[] = ['agent', 'agent-stream', 'agent-head', 'new-conversation'];

/**
 * For a workload whose CPU is judged, the median CPU per request of the pipe, prefix-proxy and
 * `reference`, and a reader of any target's median req/s; undefined if any of the three has none.
 */
function cpuMedians(w: WorkloadReport, reference: TargetName): { pipe: number; proxy: number; ref: number; rps: (n: TargetName) => number } | undefined {
  if (!CPU_JUDGED.includes(w.key)) return undefined;
  const cpu = (n: TargetName) => med(w.runs, n, (r) => r.cpuPerRequest);
  const [pipe, proxy, ref] = [cpu('pipe'), cpu('prefix-proxy'), cpu(reference)];
  if (![pipe, proxy, ref].every(Number.isFinite)) return undefined;
  return { pipe, proxy, ref, rps: (n) => med(w.runs, n, (r) => r.rps) };
}

/**
 * What the durable floor (bench/peers/floor.ts: parse, log what is new, fdatasync before the
 * answer, nothing else) leaves of a CPU target, and what prefix-proxy spends above it: the part of
 * its cost that its own features make (docs/decisions.md, A durable floor beside the pipe).
 */
export function aboveFloor(w: WorkloadReport): string | undefined {
  const medians = cpuMedians(w, 'floor');
  if (medians === undefined) return undefined;
  const { rps, pipe, proxy, ref: floor } = medians;
  const budget = w.key === 'new-conversation' ? '' : ` (3x the pipe leaves ${fmt(3 * pipe - floor, 3)} ms per request above the floor)`;
  return `The durable floor alone costs ${fmt(floor / pipe, 2)}x the pipe's CPU per request and serves ${fmt((100 * rps('floor')) / rps('pipe'), 0)}% of its throughput `
    + `(${fmt(rps('floor'), 0)} req/s); prefix-proxy spends ${fmt(proxy - floor, 3)} ms per request above the floor${budget}.${onStack(w, floor, proxy)}`;
}

/**
 * The floor on prefix-proxy's own stack (bench/peers/stack-floor.ts: fastify in, undici out, the
 * upstream asked to stream), as a sentence after the floor's: what the stack adds to the floor,
 * and so what of prefix-proxy's cost above the floor is its own work. Empty without that row.
 */
function onStack(w: WorkloadReport, floor: number, proxy: number): string {
  const stack = med(w.runs, 'stack-floor', (r) => r.cpuPerRequest);
  if (!Number.isFinite(stack)) return '';
  return ` On prefix-proxy's stack the floor costs ${fmt(stack, 3)} ms (${fmt(stack / floor, 2)}x the floor's${cpuRatioSpread(w.runs, 'stack-floor', 'floor')}): `
    + `${fmt(proxy - stack, 3)} ms per request is prefix-proxy's own work.`;
}

/**
 * What the disk costs prefix-proxy, from the same build with its data directory on tmpfs (files
 * created without allocating disk, fdatasync returning at once): the ceiling of any change to how
 * the log is laid out on disk (docs/decisions.md, What the disk costs, and what it does not).
 */
export function diskCost(w: WorkloadReport): string | undefined {
  const medians = cpuMedians(w, 'prefix-proxy-tmpfs');
  if (medians === undefined) return undefined;
  const { rps, pipe, proxy: onDisk, ref: tmpfs } = medians;
  return `With its data directory on tmpfs, where no file costs the disk anything, prefix-proxy serves ${fmt(rps('prefix-proxy-tmpfs'), 0)} req/s `
    + `(${fmt((100 * rps('prefix-proxy-tmpfs')) / rps('pipe'), 0)}% of the pipe's) at ${fmt(tmpfs / pipe, 2)}x the pipe's CPU per request; `
    + `the disk costs it ${fmt(onDisk - tmpfs, 3)} ms per request (${fmt((100 * (onDisk - tmpfs)) / onDisk, 0)}% of its CPU).`;
}

/**
 * The durable floor's own request 1,000 against its request 10, and prefix-proxy's request 1,000
 * against the floor's: a body of ~200 KB costs any gateway more than one of a few KB (the
 * upstream alone grows more than either), so the ratio reads best beside the floor's.
 */
function floorGrowth(runs: Runs): string {
  const floor = med(runs, 'floor', (r) => r.extra['growth']!);
  const over = med(runs, 'prefix-proxy', (r) => r.extra['req1000']!) / med(runs, 'floor', (r) => r.extra['req1000']!);
  if (!Number.isFinite(floor) || !Number.isFinite(over)) return '';
  return `; the durable floor's own request 1,000 is ${fmt(floor, 2)}x its request 10, and prefix-proxy's request 1,000 takes ${fmt(over, 2)}x the floor's`;
}

function cell(x: number, digits: number, suffix = ''): string {
  return Number.isFinite(x) ? `${fmt(x, digits)}${suffix}` : 'n/a';
}

const verdict = (met: boolean | undefined) => (met === undefined ? 'cannot be judged' : met ? 'met' : 'NOT MET');

/**
 * The project's targets for a workload, computed from its figures (undefined: it sets none): issue
 * 32's, set against the durable floor (what any gateway with this log must pay) and against Portkey
 * in the same run; the deep and live-session ones kept from before.
 */
export function checkTargets(w: WorkloadReport): string | undefined {
  const { runs } = w;
  const known = (...xs: number[]) => xs.every(Number.isFinite);
  const cpuOf = (n: TargetName) => med(runs, n, (r) => r.cpuPerRequest);
  const rpsOf = (n: TargetName) => med(runs, n, (r) => r.rps);
  const p = (pick: (r: RunResult) => number) => med(runs, 'prefix-proxy', pick);
  const overFloor = cpuOf('prefix-proxy') / cpuOf('floor');
  if (w.key === 'agent' || w.key === 'agent-stream' || w.key === 'agent-head') {
    const limit = w.key === 'agent-head' ? 1.5 : 2;
    const met = known(overFloor) ? (w.key === 'agent-head' ? overFloor < limit : overFloor <= limit) : undefined;
    return `prefix-proxy's CPU per request ${w.key === 'agent-head' ? 'under' : 'at most'} ${limit}x the durable floor's: ${fmt(overFloor, 2)}x${cpuRatioSpread(runs, 'prefix-proxy', 'floor')}, ${verdict(met)}.`;
  }
  if (w.key === 'new-conversation') {
    const [rps, peerRps, cpu, peerCpu] = [rpsOf('prefix-proxy'), rpsOf('portkey'), cpuOf('prefix-proxy'), cpuOf('portkey')];
    return `prefix-proxy's throughput at least Portkey's: ${fmt(rps, 0)} against ${fmt(peerRps, 0)} req/s, ${verdict(known(rps, peerRps) ? rps >= peerRps : undefined)}; `
      + `its CPU per request at most Portkey's: ${fmt(cpu, 3)} against ${fmt(peerCpu, 3)} ms${cpuRatioSpread(runs, 'prefix-proxy', 'portkey')}, ${verdict(known(cpu, peerCpu) ? cpu <= peerCpu : undefined)}; `
      + `at most 2.5x the durable floor's: ${fmt(overFloor, 2)}x${cpuRatioSpread(runs, 'prefix-proxy', 'floor')}, ${verdict(known(overFloor) ? overFloor <= 2.5 : undefined)}.`;
  }
  if (w.key === 'deep-1m') {
    const added = addedP50(runs, 'prefix-proxy', 'pipe');
    return `prefix-proxy adds at most 10 ms at the median over the bare pipe on 1 MB requests: ${fmt(added, 2)} ms, ${verdict(known(added) ? added <= 10 : undefined)}.`;
  }
  if (w.key === 'live-sessions') {
    const rss = p((r) => r.rssMb);
    const growth = p((r) => r.extra['growth']!);
    const own = p((r) => r.extra['req1000']! / r.extra['own10']!);
    return `prefix-proxy's RSS with 1,000 live sessions at most 300 MiB: ${fmt(rss, 0)} MiB, ${verdict(known(rss) ? rss <= 300 : undefined)}; `
      + `request 1,000 at most 3x request 10 (measured side by side): ${fmt(growth, 2)}x, ${verdict(known(growth) ? growth <= 3 : undefined)} `
      + `(against its own request 10, sent earlier: ${fmt(own, 2)}x)${floorGrowth(runs)}.`;
  }
  return undefined;
}
