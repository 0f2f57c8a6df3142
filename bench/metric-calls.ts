/**
 * What recording a request's metrics costs: prom-client's `inc` and `observe` given a new labels
 * object each call (as the request path made them before), against the route's series made once
 * and kept (src/metrics/series.ts). In one process, interleaved rounds, medians: ns per call.
 * docs/decisions/0013-a-routes-series-made-once.md.
 */
import { createMetrics } from '../src/metrics/registry.js';
import { counterOf, histogramOf, routeLabels } from '../src/metrics/series.js';
import type { Line } from './session-sections.js';
import { median } from './stats.js';

const CALLS = 200_000;
const ROUNDS = 5;

type Way = 'counter, labels each call' | 'counter, kept series' | 'histogram, labels each call' | 'histogram, kept series';
const WAYS: Way[] = ['counter, labels each call', 'counter, kept series', 'histogram, labels each call', 'histogram, kept series'];

function timeWay(way: Way): number {
  const metrics = createMetrics({ defaults: false });
  const route = { provider: 'up', label: 'peers' };
  // A new object per request, as admit.ts made it, and what the calls spread into.
  const fresh = () => ({ provider: route.provider, model: route.label });
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const status = i % 50 === 0 ? '502' : '200';
    if (way === 'counter, labels each call') metrics.requests.inc({ ...fresh(), status });
    else if (way === 'counter, kept series') counterOf(metrics.requests, routeLabels(route), 'status', status).inc();
    else if (way === 'histogram, labels each call') metrics.duration.observe({ ...fresh(), phase: 'total' }, 0.003);
    else histogramOf(metrics.duration, routeLabels(route), 'phase', 'total').observe(0.003);
  }
  return Number(process.hrtime.bigint() - start) / CALLS;
}

export async function metricCallsSection(line: Line): Promise<boolean> {
  const ns = new Map<Way, number[]>(WAYS.map((w) => [w, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < WAYS.length; k++) {
      const way = WAYS[(round + k) % WAYS.length]!;
      ns.get(way)!.push(timeWay(way));
    }
    await new Promise((r) => setImmediate(r));
  }
  const at = (way: Way) => median(ns.get(way)!);
  line('## Metric calls: a request\'s series made once');
  line('');
  line(`prom-client 15's \`inc\` and \`observe\` given a new labels object on every call (what the request path did), against the route's`);
  line(`series made once and kept (src/metrics/series.ts); ${CALLS.toLocaleString('en')} calls a round, ${ROUNDS} interleaved rounds in one process, medians.`);
  line('A request under a new conversation per request records seven: three durations (overhead, first byte, total) and the requests, cache-break, prompt-token and completion-token counters.');
  line('');
  line('| call | ns per call | kept series vs labels each call |');
  line('|---|---:|---:|');
  for (const kind of ['counter', 'histogram'] as const) {
    const each = at(`${kind}, labels each call`);
    const kept = at(`${kind}, kept series`);
    line(`| ${kind}, labels each call | ${each.toFixed(0)} | |`);
    line(`| ${kind}, kept series | ${kept.toFixed(0)} | ${(kept / each).toFixed(2)}x |`);
  }
  line('');
  return true;
}
