// The charts of a queue's page, from its stats series (getQueueStats, downsampled): throughput (jobs created, completed
// and failed for good per minute) and the wait and run times' p50 and p95, each drawn as the page's own SVG. The
// model (chartOf) is plain numbers, so that its values are tested without a browser; the drawing only scales them.
import type { QueueStats } from '../core/types.js';
import { count, duration, esc } from './render.js';

/** One line of a chart: its label, colour index, and a value per point (null: nothing measured there). */
export interface ChartLine {
  label: string;
  values: (number | null)[];
}

/** A chart: its points' times (ms since the epoch, each the start of its bucket) and its lines. */
export interface Chart {
  title: string;
  unit: 'per minute' | 'seconds';
  at: number[];
  lines: ChartLine[];
}

/** A rate per minute from a delta over `seconds`, null where no window was measured. */
function perMinute(delta: number | null, seconds: number | null): number | null {
  return delta === null || seconds === null || seconds <= 0 ? null : (delta / seconds) * 60;
}

/** The percentile `p` of a point's wait or run time, as getQueueStats read it; null where no job finished. */
function percentileOf(point: QueueStats, p: number, kind: 'waitSeconds' | 'runSeconds'): number | null {
  return point.percentiles?.find((x) => x.p === p)?.[kind] ?? null;
}

/** The three charts of a series (oldest first, as getQueueStats' points reversed). */
export function chartsOf(series: readonly QueueStats[]): Chart[] {
  const at = series.map((s) => s.capturedOn.getTime());
  return [
    {
      title: 'Throughput',
      unit: 'per minute',
      at,
      lines: [
        { label: 'created', values: series.map((s) => perMinute(s.createdDelta, s.deltaSeconds)) },
        { label: 'completed', values: series.map((s) => perMinute(s.completedDelta, s.deltaSeconds)) },
        { label: 'failed', values: series.map((s) => perMinute(s.failedDelta, s.deltaSeconds)) },
      ],
    },
    {
      title: 'Wait time (due to claimed)',
      unit: 'seconds',
      at,
      lines: [
        { label: 'p50', values: series.map((s) => percentileOf(s, 50, 'waitSeconds')) },
        { label: 'p95', values: series.map((s) => percentileOf(s, 95, 'waitSeconds')) },
      ],
    },
    {
      title: 'Run time',
      unit: 'seconds',
      at,
      lines: [
        { label: 'p50', values: series.map((s) => percentileOf(s, 50, 'runSeconds')) },
        { label: 'p95', values: series.map((s) => percentileOf(s, 95, 'runSeconds')) },
      ],
    },
  ];
}

const W = 600;
const H = 140;
/** Lines are coloured by their place (app.css, `.line0` to `.line2`): blue, then green, then red. */
const LINE_CLASSES = 3;

/** The polylines of one line: one per run of measured points (a gap breaks the line), as SVG coordinates. */
export function segmentsOf(line: ChartLine, at: readonly number[], from: number, to: number, max: number): string[] {
  const out: string[] = [];
  let run: string[] = [];
  // a bucket aligned to the epoch may start before the range does: it is drawn at the range's start
  const x = (t: number) => (Math.min(1, Math.max(0, (t - from) / Math.max(1, to - from))) * W).toFixed(1);
  const y = (v: number) => (H - (v / max) * H).toFixed(1);
  line.values.forEach((v, i) => {
    if (v === null) {
      if (run.length) out.push(run.join(' '));
      run = [];
    } else run.push(`${x(at[i]!)},${y(v)}`);
  });
  if (run.length) out.push(run.join(' '));
  return out;
}

/** A chart as SVG, with its legend and scale; from `from` to `to` (ms since the epoch). */
export function renderChart(chart: Chart, from: number, to: number): string {
  const measured = chart.lines.flatMap((l) => l.values.filter((v): v is number => v !== null));
  const peak = measured.length ? Math.max(...measured) : 0;
  const max = peak > 0 ? peak : 1;
  const lines = chart.lines.flatMap((line, i) =>
    segmentsOf(line, chart.at, from, to, max).map(
      // a single point is a line of no length: a dot says it is there
      (points) =>
        `<polyline class="line${i % LINE_CLASSES}" data-line="${esc(line.label)}" points="${points.includes(' ') ? points : `${points} ${points}`}"/>`,
    ),
  );
  const scale =
    measured.length === 0
      ? 'no data in this range'
      : chart.unit === 'seconds'
        ? `peak ${duration(peak)}`
        : `peak ${peak < 10 ? peak.toFixed(1) : count(Math.round(peak))}/min`;
  const legend = chart.lines.map((l, i) => `<span class="key line${i % LINE_CLASSES}"></span>${esc(l.label)}`).join(' ');
  const label = `${chart.title}, ${chart.unit}`;
  return `<figure class="chart"><figcaption>${esc(chart.title)}</figcaption><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(label)}"><line class="axis" x1="0" y1="${H}" x2="${W}" y2="${H}"/>${lines.join('')}</svg>
<p class="legend">${legend} <span class="scale">${esc(scale)}</span></p></figure>`;
}
