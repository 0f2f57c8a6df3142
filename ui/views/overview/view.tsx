/** Overview: a period's requests, tokens, cache share, cost and savings; breaks; per route and key; over time. */
import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { PERIODS, type Overview, type Period, type Totals } from '../../contract.js';
import { cause, int, isBreak, pct, time, usd } from '../../format.js';
import { href } from '../../router.js';
import { Figure, Figures } from '../../parts/figure.js';
import { LiveBadge, useDebounced, useLive } from '../../parts/live.js';
import { Status, useLoad } from '../../parts/load.js';
import { Th } from '../../parts/table-parts.js';
import { barScale, UPlotChart } from '../../parts/uplot-chart.js';
import { Budgets } from './budgets.js';
import { loadOverview, periodOf, seriesData } from './data.js';

const PERIOD_LABEL: Record<Period, string> = { '1h': 'Last hour', '24h': 'Last day', '7d': 'Last 7 days', all: 'All' };

export function OverviewPage({ query }: { query: URLSearchParams }) {
  const period = periodOf(query.get('period'));
  const loaded = useLoad((signal) => loadOverview(period, signal), [period]);
  const refresh = useDebounced(loaded.reload, 300);
  const live = useLive(undefined, refresh);
  return (
    <>
      <div class="title-row">
        <h1>Overview</h1>
        <LiveBadge {...live} />
      </div>
      <div role="group" aria-label="Period" class="periods">
        {PERIODS.map((p) => (
          <a href={href.overview({ period: p })} aria-current={p === period ? 'page' : undefined} data-testid={`period-${p}`} class="chip">{PERIOD_LABEL[p]}</a>
        ))}
      </div>
      <Status loaded={loaded} what="the overview">{loaded.data !== undefined && <OverviewBody overview={loaded.data} />}</Status>
    </>
  );
}

function OverviewBody({ overview }: { overview: Overview }) {
  const t = overview.totals;
  return (
    <>
      <p class="muted" data-testid="overview-range">{overview.from === null ? 'All time' : `${time(overview.from)} to ${time(overview.to)}`}</p>
      <TotalsFigures totals={t} prefix="overview" />
      {overview.unreadable_sessions > 0 && (
        <p class="status error" data-testid="overview-unreadable" data-value={overview.unreadable_sessions}>
          These figures leave out {int(overview.unreadable_sessions)} session{overview.unreadable_sessions === 1 ? ' whose log' : 's whose logs'} cannot be read: <a href={href.sessions()}>Sessions</a> names {overview.unreadable_sessions === 1 ? 'it' : 'them'}.
        </p>
      )}
      <div class="columns">
        <section aria-labelledby="causes-h">
          <h2 id="causes-h">Breaks by cause</h2>
          <Causes causes={overview.causes} period={overview.period} />
        </section>
        <section aria-labelledby="series-h">
          <h2 id="series-h">Cost and cache share over time</h2>
          <SeriesChart series={overview.series} />
        </section>
      </div>
      <section aria-labelledby="routes-h">
        <h2 id="routes-h">By route and model</h2>
        <TotalsTable rows={overview.by_route.map((r) => ({ ...r, name: r.route, second: r.model }))} first="Route" second="Model" testid="by-route" />
      </section>
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">By client key</h2>
        <TotalsTable rows={overview.by_key.map((r) => ({ ...r, name: r.key }))} first="Key" testid="by-key" />
      </section>
      {overview.budgets.length > 0 && (
        <section aria-labelledby="budgets-h">
          <h2 id="budgets-h">Budgets</h2>
          <Budgets budgets={overview.budgets} />
        </section>
      )}
    </>
  );
}

export function TotalsFigures({ totals: t, prefix }: { totals: Totals; prefix: string }) {
  return (
    <Figures label="Totals">
      <Figure label="Requests" testid={`${prefix}-requests`} value={t.requests} text={int(t.requests)} />
      <Figure label="Prompt tokens" testid={`${prefix}-prompt-tokens`} value={t.prompt_tokens} text={int(t.prompt_tokens)} />
      <Figure label="Read from cache" testid={`${prefix}-cache-share`} value={t.cache_share} text={pct(t.cache_share)}
        note={t.cached_tokens === null ? undefined : `${int(t.cached_tokens)} tokens`} />
      <Figure label="Cost" testid={`${prefix}-cost`} value={t.cost_usd} text={usd(t.cost_usd)}
        note={t.unknown_cost_requests > 0 ? `${int(t.unknown_cost_requests)} at unknown prices` : undefined} />
      <Figure label="Saved by the cache" testid={`${prefix}-savings`} value={t.savings_usd} text={usd(t.savings_usd)}
        note={t.uncached_cost_usd === null ? undefined : `of ${usd(t.uncached_cost_usd)} uncached`} />
    </Figures>
  );
}

function Causes({ causes: all, period }: { causes: Overview['causes']; period: Period }) {
  // The first request of a session and one that extends its predecessor are not breaks.
  const causes = all.filter((c) => isBreak(c.cause));
  const kept = all.filter((c) => !isBreak(c.cause)).reduce((n, c) => n + c.requests, 0);
  if (causes.length === 0) return <p class="muted" data-testid="causes-none">No breaks in this period ({int(kept)} requests kept or opened their prefix).</p>;
  const max = Math.max(...causes.map((c) => c.requests), 1);
  return (
    <table class="bars" data-testid="causes">
      <caption class="sr-only">Requests whose cached prefix broke, by cause</caption>
      <thead><tr><Th>Cause</Th><Th numeric>Requests</Th></tr></thead>
      <tbody>
        {causes.map((c) => (
          <tr data-testid="cause-row" data-cause={c.cause} data-value={c.requests}>
            <th scope="row">
              <a href={href.sessions({ cause: c.cause, period: period === 'all' ? '' : period })} data-testid="cause-sessions" title={`The sessions with a ${cause(c.cause)} in this period`}>
                <span class={`cause c-${c.cause}`}>{cause(c.cause)}</span>
              </a>
            </th>
            <td class="num"><span class="hbar" style={{ width: `${(100 * c.requests) / max}%` }} aria-hidden="true" />{int(c.requests)}</td>
          </tr>
        ))}
      </tbody>
      <tfoot><tr><td colSpan={2} class="muted">{int(kept)} other requests were a session's first or extended its prefix.</td></tr></tfoot>
    </table>
  );
}

function SeriesChart({ series }: { series: Overview['series'] }) {
  const data = useMemo(() => seriesData(series), [series]);
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => ({
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: barScale(true), usd: { auto: true }, share: { range: [0, 100] } },
    axes: [
      { stroke: '#444' },
      { scale: 'usd', stroke: '#444', values: (_u, vals) => vals.map((v) => usd(v)) },
      { scale: 'share', side: 1, stroke: '#444', grid: { show: false }, values: (_u, vals) => vals.map((v) => `${v}%`) },
    ],
    series: [
      {},
      { label: 'Cost', scale: 'usd', fill: '#2f6db566', stroke: '#2f6db5', paths: uPlot.paths.bars!({ size: [0.8, 30] }), points: { show: false }, value: (_u, v) => (v === null ? '–' : usd(v)) },
      { label: 'Cache share', scale: 'share', stroke: '#b5532f', width: 2, value: (_u, v) => (v === null ? '–' : `${v.toFixed(1)}%`) },
    ],
  }), []);
  if (series.length === 0) return <p class="muted">No requests in this period.</p>;
  return (
    <>
      <UPlotChart options={options} data={data} height={220} testid="overview-series" label="Cost per interval as bars and the share read from cache as a line" extra={{ 'data-points': series.length }} />
      <details>
        <summary>The same as a table</summary>
        <table data-testid="series-table">
          <thead><tr><Th>Time</Th><Th numeric>Requests</Th><Th numeric>Cost</Th><Th numeric>Cache share</Th></tr></thead>
          <tbody>{series.map((p) => <tr><td>{time(p.t)}</td><td class="num">{int(p.requests)}</td><td class="num">{usd(p.cost_usd)}</td><td class="num">{pct(p.cache_share)}</td></tr>)}</tbody>
        </table>
      </details>
    </>
  );
}

type Row = Totals & { name: string; second?: string };

function TotalsTable({ rows, first, second, testid }: { rows: Row[]; first: string; second?: string; testid: string }) {
  if (rows.length === 0) return <p class="muted">No requests in this period.</p>;
  return (
    <div class="scroll">
      <table data-testid={testid}>
        <thead>
          <tr>
            <Th>{first}</Th>{second !== undefined && <Th>{second}</Th>}
            <Th numeric>Requests</Th><Th numeric>Prompt tokens</Th><Th numeric>Read from cache</Th><Th numeric>Cost</Th><Th numeric>Saved</Th>
            <Th>Sessions</Th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr data-testid={`${testid}-row`} data-name={r.name}>
              <th scope="row">{r.name}</th>{second !== undefined && <td>{r.second}</td>}
              <td class="num" data-testid="requests" data-value={r.requests}>{int(r.requests)}</td>
              <td class="num" data-testid="prompt-tokens" data-value={String(r.prompt_tokens)}>{int(r.prompt_tokens)}</td>
              <td class="num" data-testid="cache-share" data-value={String(r.cache_share)}>{pct(r.cache_share)}</td>
              <td class="num" data-testid="cost" data-value={String(r.cost_usd)}>{usd(r.cost_usd)}</td>
              <td class="num" data-testid="savings" data-value={String(r.savings_usd)}>{usd(r.savings_usd)}</td>
              <td><a href={href.sessions(second !== undefined ? { model: r.name } : { key: r.name })}>sessions<span class="sr-only"> of {r.name}</span></a></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
