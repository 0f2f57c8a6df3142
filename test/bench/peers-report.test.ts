/**
 * The peers report's lines under (a) and (b): what the durable floor costs against the pipe and
 * what prefix-proxy spends above it, and what the disk costs prefix-proxy (its run with the data
 * directory on tmpfs), from the medians of each target's runs; nothing where a target is missing
 * or the workload sets no CPU target.
 */
import { describe, expect, it } from 'vitest';
import { aboveFloor, checkTargets, cpuRatioSpread, diskCost, type Runs, type WorkloadReport } from '../../bench/peers/report.js';
import type { RunResult, WorkloadKey } from '../../bench/peers/workloads.js';

function run(cpuPerRequest: number, rps: number): RunResult {
  return { requests: 960, rps, p50: 1, p99: 2, cpuPerRequest, rssMb: 100, extra: {} };
}

function report(key: WorkloadKey, runs: Runs): WorkloadReport {
  return { key, title: key, about: [], runs };
}

describe('peers report, the durable floor', () => {
  it('says the floor\'s ratio to the pipe, prefix-proxy\'s CPU above it and what 3x leaves, from medians over rounds', () => {
    const runs: Runs = {
      pipe: [run(0.3, 2000), run(0.4, 1800), run(0.2, 2200)],
      floor: [run(0.75, 1000), 'crashed', run(0.85, 900)],
      'prefix-proxy': [run(1.5, 600), run(1.6, 580), run(1.4, 620)],
    };
    const line = aboveFloor(report('agent', runs))!;
    // Medians: the pipe 0.3 ms and 2,000 req/s; the floor 0.8 ms (of its two good runs) and 950; prefix-proxy 1.5 ms.
    expect(line).toContain('costs 2.67x the pipe\'s CPU per request');
    expect(line).toContain('serves 48% of its throughput (950 req/s)');
    expect(line).toContain('prefix-proxy spends 0.700 ms per request above the floor');
    expect(line).toContain('3x the pipe leaves 0.100 ms per request above the floor');
  });

  it('gives (b) no CPU budget, and nothing for a workload without a CPU target or a run without the floor', () => {
    const runs: Runs = { pipe: [run(0.2, 5000)], floor: [run(0.4, 2500)], 'prefix-proxy': [run(1.5, 800)] };
    const b = aboveFloor(report('new-conversation', runs))!;
    expect(b).toContain('costs 2.00x');
    expect(b).not.toContain('leaves');
    expect(aboveFloor(report('deep-1m', runs))).toBeUndefined();
    expect(aboveFloor(report('agent', { pipe: runs.pipe!, 'prefix-proxy': runs['prefix-proxy']! }))).toBeUndefined();
    expect(aboveFloor(report('agent', { ...runs, floor: ['failed'] }))).toBeUndefined();
  });

  it('says what the floor costs on prefix-proxy\'s stack and what of prefix-proxy\'s CPU is its own work, only with that row', () => {
    const runs: Runs = {
      pipe: [run(0.2, 5000), run(0.2, 5000)],
      floor: [run(0.30, 3000), run(0.40, 3000)],
      'stack-floor': [run(0.33, 2900), run(0.50, 2800)],
      'prefix-proxy': [run(1.0, 1000), run(1.2, 900)],
    };
    // Medians: the floor 0.35 ms, on the stack 0.415, prefix-proxy 1.1; per round 1.10x and 1.25x.
    const line = aboveFloor(report('new-conversation', runs))!;
    expect(line).toContain('On prefix-proxy\'s stack the floor costs 0.415 ms (1.19x the floor\'s (rounds: 1.10x to 1.25x)): 0.685 ms per request is prefix-proxy\'s own work.');
    expect(aboveFloor(report('new-conversation', { ...runs, 'stack-floor': ['crashed'] }))).not.toContain('stack');
  });

  it('judges (a) against the floor (at most 2x; the agent head under 1.5x), not the pipe', () => {
    const runs: Runs = { pipe: [run(0.5, 2000)], floor: [run(0.75, 1000)], 'prefix-proxy': [run(1.5, 800)] };
    expect(checkTargets(report('agent', runs))).toBe('prefix-proxy\'s CPU per request at most 2x the durable floor\'s: 2.00x, met.');
    expect(checkTargets(report('agent-stream', { ...runs, 'prefix-proxy': [run(1.51, 800)] }))).toContain('2.01x, NOT MET');
    expect(checkTargets(report('agent-head', runs))).toBe('prefix-proxy\'s CPU per request under 1.5x the durable floor\'s: 2.00x, NOT MET.');
    expect(checkTargets(report('agent', { pipe: runs.pipe!, 'prefix-proxy': runs['prefix-proxy']! }))).toContain('cannot be judged');
  });

  it('judges (b) against Portkey in the same run and 2.5x the floor', () => {
    const runs: Runs = { pipe: [run(0.2, 5000)], floor: [run(0.4, 2500)], portkey: [run(1.1, 1000)], 'prefix-proxy': [run(1.0, 1000)] };
    expect(checkTargets(report('new-conversation', runs))).toBe(
      'prefix-proxy\'s throughput at least Portkey\'s: 1000 against 1000 req/s, met; its CPU per request at most Portkey\'s: 1.000 against 1.100 ms, met; at most 2.5x the durable floor\'s: 2.50x, met.',
    );
    const worse = checkTargets(report('new-conversation', { ...runs, 'prefix-proxy': [run(1.2, 990)] }))!;
    expect(worse).toContain('990 against 1000 req/s, NOT MET');
    expect(worse).toContain('1.200 against 1.100 ms, NOT MET');
    expect(worse).toContain('3.00x, NOT MET');
    expect(checkTargets(report('new-conversation', { ...runs, portkey: ['failed'] }))).toContain('cannot be judged');
  });

  it('gives the spread of the same-round ratios beside a median verdict, from rounds both targets ran in', () => {
    const runs: Runs = {
      floor: [run(0.5, 1000), run(0.4, 1000), run(0.5, 1000), 'crashed'],
      'prefix-proxy': [run(0.9, 600), run(1.0, 600), 'crashed', run(0.1, 600)],
    };
    // Rounds 1 and 2 have both: 1.80x and 2.50x; the medians give 0.9 / 0.5 = 1.80x.
    expect(cpuRatioSpread(runs, 'prefix-proxy', 'floor')).toBe(' (rounds: 1.80x to 2.50x)');
    expect(checkTargets(report('agent', runs))).toBe('prefix-proxy\'s CPU per request at most 2x the durable floor\'s: 1.80x (rounds: 1.80x to 2.50x), met.');
    // One round in common tells nothing of the spread.
    expect(cpuRatioSpread({ floor: [run(0.5, 1)], 'prefix-proxy': [run(1, 1), run(1, 1)] }, 'prefix-proxy', 'floor')).toBe('');
  });
});

describe('peers report, the data directory on tmpfs', () => {
  it('says what prefix-proxy serves without the disk\'s costs and what the disk costs it, from medians over rounds', () => {
    const runs: Runs = {
      pipe: [run(0.2, 5000), run(0.25, 4000), run(0.3, 4500)],
      'prefix-proxy': [run(1.6, 800), run(1.5, 750), 'crashed'],
      'prefix-proxy-tmpfs': [run(1.0, 1000), run(1.2, 1100), run(1.1, 1050)],
    };
    // Medians: the pipe 0.25 ms and 4,500 req/s; prefix-proxy 1.55 ms (of its two good runs); on tmpfs 1.1 ms and 1,050 req/s.
    const line = diskCost(report('new-conversation', runs))!;
    expect(line).toContain('prefix-proxy serves 1050 req/s (23% of the pipe\'s) at 4.40x the pipe\'s CPU per request');
    expect(line).toContain('the disk costs it 0.450 ms per request (29% of its CPU)');
  });

  it('says nothing without the tmpfs run, or for a workload whose CPU it does not judge', () => {
    const runs: Runs = { pipe: [run(0.2, 5000)], 'prefix-proxy': [run(1.5, 800)], 'prefix-proxy-tmpfs': [run(1.0, 1000)] };
    expect(diskCost(report('agent', runs))).toContain('the disk costs it 0.500 ms per request (33% of its CPU)');
    expect(diskCost(report('deep-1m', runs))).toBeUndefined();
    expect(diskCost(report('agent', { ...runs, 'prefix-proxy-tmpfs': ['failed'] }))).toBeUndefined();
    expect(diskCost(report('agent', { pipe: runs.pipe!, 'prefix-proxy-tmpfs': runs['prefix-proxy-tmpfs']! }))).toBeUndefined();
  });
});

describe('peers report, a session\'s length', () => {
  const live = (rssMb: number, req10: number, req1000: number, own10: number): RunResult => ({
    requests: 4000, rps: 500, p50: 10, p99: 40, cpuPerRequest: 2, rssMb, extra: { own10, req10, req1000, growth: req1000 / req10 },
  });

  it('judges request 1,000 against request 10 and reads it beside the durable floor\'s own', () => {
    const runs: Runs = { floor: [live(130, 1.0, 5.0, 0.9)], 'prefix-proxy': [live(280, 1.6, 5.6, 1.7)] };
    expect(checkTargets(report('live-sessions', runs))).toBe(
      'prefix-proxy\'s RSS with 1,000 live sessions at most 300 MiB: 280 MiB, met; request 1,000 at most 3x request 10 (measured side by side): 3.50x, NOT MET '
      + '(against its own request 10, sent earlier: 3.29x); the durable floor\'s own request 1,000 is 5.00x its request 10, and prefix-proxy\'s request 1,000 takes 1.12x the floor\'s.',
    );
  });

  it('leaves the floor out when it has no run', () => {
    const line = checkTargets(report('live-sessions', { 'prefix-proxy': [live(280, 2.0, 5.0, 2.0)] }))!;
    expect(line).toContain('2.50x, met');
    expect(line).not.toContain('floor');
  });
});
