/**
 * A route's series of a metric, made once. Given a new labels object on every `inc` or `observe`,
 * prom-client validates and hashes it each time: 1.7-2.7 µs an `inc` and 2.0-2.3 µs an `observe`,
 * against 0.4 and 0.7 on a child made once and kept (prom-client 15, measured on the bench machine),
 * and a request records about ten (docs/decisions/0013-a-routes-series-made-once.md).
 *
 * Children are kept by the route's labels object (`routeLabels`, one per route) and the value of
 * the one label a metric adds to it. Those values come from bounded sets (registry.ts), so what is
 * kept is as many children as there are series; a route that is gone takes its children with it.
 */
import type { Counter, Histogram } from 'prom-client';

export interface RouteLabels {
  readonly provider: string;
  readonly model: string;
}

const byRoute = new WeakMap<{ provider: string; label: string }, RouteLabels>();

/** The labels object of a route, the same one on every request (what the children are kept by). */
export function routeLabels(route: { provider: string; label: string }): RouteLabels {
  let labels = byRoute.get(route);
  if (labels === undefined) {
    labels = Object.freeze({ provider: route.provider, model: route.label });
    byRoute.set(route, labels);
  }
  return labels;
}

type Metric = Counter<string> | Histogram<string>;
const kept = new WeakMap<RouteLabels, Map<Metric, Map<string, unknown>>>();

function child<C>(metric: Metric, labels: RouteLabels, name: string | undefined, value: string): C {
  let perRoute = kept.get(labels);
  if (perRoute === undefined) kept.set(labels, (perRoute = new Map()));
  let perMetric = perRoute.get(metric);
  if (perMetric === undefined) perRoute.set(metric, (perMetric = new Map()));
  let made = perMetric.get(value) as C | undefined;
  if (made === undefined) {
    const set = name === undefined ? { ...labels } : { ...labels, [name]: value };
    made = (metric as Counter<string>).labels(set) as C;
    perMetric.set(value, made);
  }
  return made;
}

/** `metric`'s counter for the route, and for `value` of the label `name` when the metric adds one. */
export function counterOf<E extends string = never>(metric: Counter<'provider' | 'model' | E>, labels: RouteLabels, name?: E, value = ''): Counter.Internal {
  return child(metric as Counter<string>, labels, name, value);
}

/** `metric`'s histogram for the route, and for `value` of the label `name` when the metric adds one. */
export function histogramOf<E extends string = never>(metric: Histogram<'provider' | 'model' | E>, labels: RouteLabels, name?: E, value = ''): Histogram.Internal<string> {
  return child(metric as Histogram<string>, labels, name, value);
}
