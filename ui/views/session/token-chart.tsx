/**
 * One stacked bar per request (read from cache / written to cache / uncached input / output), in
 * order, with each break drawn as a red rule and the window's timeline marks as ticks under the
 * bars. uPlot's bars path builder draws 2,000 bars in a few milliseconds; the marks are a draw hook.
 */
import { useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { RequestRow } from '../../contract.js';
import { cause, int } from '../../format.js';
import { href } from '../../router.js';
import { barScale, REQUEST_AXIS, UPlotChart, VALUE_AXIS_SIZE } from '../../parts/uplot-chart.js';
import { tokenBars, uncachedOf, type Mark } from './data.js';

export const LAYERS = [
  { label: 'Read from cache', color: '#2e7d4f' },
  { label: 'Written to cache', color: '#c9a227' },
  { label: 'Uncached input', color: '#c8553d' },
  { label: 'Output', color: '#5b6abf' },
] as const;

const BREAK = '#b00020';
const MARK_COLOR: Record<string, string> = { elide: '#6d4c41', fold: '#00838f', cap: '#8e24aa', summary: '#283593', rewrite: '#b00020', side: '#546e7a', fork: '#546e7a' };

export function TokenChart({ session, rows, breaks, marks }: { session: string; rows: readonly RequestRow[]; breaks: Mark[]; marks: Mark[] }) {
  const data = useMemo(() => tokenBars(rows), [rows]);
  const [hover, setHover] = useState<number | null>(null);
  // The draw hook and click handler read the latest marks and rows without making a new chart.
  const state = useRef({ rows, breaks, marks, session });
  state.current = { rows, breaks, marks, session };

  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => ({
    legend: { show: false },
    cursor: { drag: { x: true, y: false }, points: { show: false } },
    scales: { x: barScale(false) },
    axes: [
      REQUEST_AXIS,
      { stroke: '#444', size: VALUE_AXIS_SIZE, values: (_u, vals) => vals.map((v) => compact(v)) },
    ],
    series: [
      {},
      ...[...LAYERS].reverse().map((layer) => ({
        label: layer.label, fill: layer.color, stroke: layer.color, width: 0, points: { show: false },
        paths: uPlot.paths.bars!({ size: [0.92, 48, 1], gap: 0 }),
      })),
    ],
    hooks: {
      setCursor: [(u: uPlot) => setHover(u.cursor.idx ?? null)],
      draw: [(u: uPlot) => drawMarks(u, state.current.breaks, state.current.marks)],
      ready: [(u: uPlot) => {
        u.over.addEventListener('click', () => {
          const i = u.cursor.idx;
          const row = i === null || i === undefined ? undefined : state.current.rows[i];
          if (row !== undefined) location.hash = href.request(state.current.session, row.seq);
        });
      }],
    },
  }), []);

  const row = hover === null ? undefined : rows[hover];
  return (
    <figure class="token-chart">
      <UPlotChart options={options} data={data} height={280} testid="token-chart"
        label={`Input and output tokens of ${rows.length} requests, stacked; ${breaks.length} breaks marked in red`}
        extra={{ 'data-bars': rows.length, 'data-breaks': breaks.length, 'data-marks': marks.length }} />
      <figcaption>
        <ul class="legend" aria-label="Legend">
          {LAYERS.map((l) => <li><span class="swatch" style={{ background: l.color }} aria-hidden="true" />{l.label}</li>)}
          <li><span class="swatch rule" style={{ background: BREAK }} aria-hidden="true" />Break</li>
          <li><span class="swatch tick" aria-hidden="true" />Window change (elision, fold, cap, summary, rewrite)</li>
        </ul>
        <p class="readout" data-testid="chart-readout">
          {row === undefined ? 'Point at a bar to read it; click it to open the request.' : (
            <>Request {hover! + 1} (seq {row.seq}): {int(row.cached_tokens)} read from cache, {int(row.cache_write_tokens)} written, {int(uncachedOf(row))} uncached, {int(row.completion_tokens)} output{row.cause !== null && row.cause !== 'none' ? `; cause: ${cause(row.cause)}` : ''}</>
          )}
        </p>
      </figcaption>
    </figure>
  );
}

function drawMarks(u: uPlot, breaks: readonly Mark[], marks: readonly Mark[]): void {
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  const px = devicePixelRatio;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  ctx.lineWidth = Math.max(1, px);
  ctx.strokeStyle = BREAK;
  ctx.fillStyle = BREAK;
  for (const b of breaks) {
    const x = Math.round(u.valToPos(b.index + 1, 'x', true));
    ctx.setLineDash([4 * px, 3 * px]);
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.moveTo(x - 5 * px, top);
    ctx.lineTo(x + 5 * px, top);
    ctx.lineTo(x, top + 7 * px);
    ctx.fill();
  }
  for (const m of marks) {
    const x = Math.round(u.valToPos(m.index + 1, 'x', true));
    ctx.fillStyle = MARK_COLOR[m.kind] ?? '#444';
    ctx.fillRect(x - px, top + height - 8 * px, 3 * px, 8 * px);
  }
  ctx.restore();
}

function compact(v: number): string {
  if (v >= 1e6) return `${(v / 1e6).toFixed(v >= 1e7 ? 0 : 1)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(v >= 1e4 ? 0 : 1)}k`;
  return String(v);
}
