/**
 * uPlot inside a preact component: made once per options object, fed new data with setData, sized
 * to its box. The canvas is an image to assistive technology; each view gives a text figure or a
 * table beside it that holds the same numbers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/**
 * The x axis of a chart by request number: whole steps only (uPlot's default steps for a plain
 * number scale include 0.05, so a session of two requests was labelled 1, 1.05, 1.1, ...).
 */
export const REQUEST_AXIS: uPlot.Axis = {
  stroke: '#444', label: 'request', labelSize: 20, size: 36,
  incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000],
};

/** The width of a chart's value axis: the session page's two charts share it, so their x positions match. */
export const VALUE_AXIS_SIZE = 70;

/**
 * The x scale of a bar chart: half a bar's step of room on each side. uPlot's default range is the
 * data's first and last x, which puts the first and last bars' centres on the plot's edges and
 * draws half of each.
 */
export function barScale(time: boolean): uPlot.Scale {
  return {
    time,
    range: (u, min, max) => {
      const xs = u.data[0];
      const step = xs.length > 1 ? xs[1]! - xs[0]! : 1;
      return [min - step / 2, max + step / 2];
    },
  };
}

export function UPlotChart({ options, data, label, testid, height, extra }: {
  options: Omit<uPlot.Options, 'width' | 'height'>;
  data: uPlot.AlignedData;
  label: string;
  testid: string;
  height: number;
  /** Attributes the tests read (what the chart was given). */
  extra?: Record<string, string | number>;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const u = new uPlot({ ...options, width: Math.max(el.clientWidth, 200), height }, latest.current, el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(el.clientWidth, 200), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = undefined;
    };
  }, [options, height]);

  useEffect(() => {
    const u = plot.current;
    if (u !== undefined && u.data !== data) u.setData(data);
  }, [data]);

  return <div ref={box} class="chart" role="img" aria-label={label} data-testid={testid} {...extra} />;
}
