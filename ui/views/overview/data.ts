/** The overview's read and the shapes its chart takes. */
import type uPlot from 'uplot';
import { getJson } from '../../api.js';
import { PERIODS, type Overview, type Period } from '../../contract.js';

export function periodOf(value: string | null): Period {
  return PERIODS.includes(value as Period) ? (value as Period) : '24h';
}

export function loadOverview(period: Period, signal: AbortSignal): Promise<Overview> {
  return getJson<Overview>('overview', { period }, signal);
}

/**
 * Seconds since the epoch (uPlot's time scale), cost, and cache share in percent. An interval
 * with no request has no bar (null), not a bar of $0: a run of idle intervals drew a dashed line.
 */
export function seriesData(series: Overview['series']): uPlot.AlignedData {
  const t: number[] = [];
  const cost: (number | null)[] = [];
  const share: (number | null)[] = [];
  for (const point of series) {
    t.push(typeof point.t === 'number' ? (point.t > 1e11 ? point.t / 1000 : point.t) : Date.parse(point.t) / 1000);
    cost.push(point.requests === 0 ? null : point.cost_usd);
    share.push(point.cache_share === null ? null : point.cache_share * 100);
  }
  return [t, cost, share];
}
