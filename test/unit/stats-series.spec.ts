import { downsample, widthFor, withPercentiles, type Snapshot } from '../../lib/core/stats/series.js';
import { binLowerEdge } from '../../lib/core/stats/bins.js';

const at = (seconds: number) => new Date(seconds * 1000);

function snap(
  captured: number,
  queued: number,
  delta?: { on: number; seconds: number | null; created: number; wait?: number[] },
): Snapshot {
  return {
    name: 'q',
    queuedCount: queued,
    deferredCount: 0,
    blockedCount: 0,
    readyCount: queued,
    activeCount: 1,
    failedCount: 0,
    totalCount: queued + 1,
    readyOldestSeconds: queued / 10,
    createdDelta: delta ? delta.created : null,
    completedDelta: delta ? delta.created * 2 : null,
    failedDelta: delta ? 1 : null,
    deltaSeconds: delta ? delta.seconds : null,
    deltaOn: delta ? at(delta.on) : null,
    waitBins: delta?.wait ?? null,
    runBins: null,
    capturedOn: at(captured),
  };
}

// Buckets of 60 s: [960, 1020), [1020, 1080), [1080, 1140), [1140, 1200).
const series = [
  snap(1000, 5, { on: 990, seconds: 60, created: 3, wait: [1, 0, 2] }), // bucket 960, deltas 960
  snap(1010, 9, { on: 1000, seconds: 10, created: 1, wait: [0, 4, 0] }), // bucket 960, deltas 960
  snap(1085, 2, { on: 1075, seconds: 75, created: 5 }), // bucket 1080; deltas land in 1020, which has no snapshot: into 960
  snap(1150, 4, { on: 1140, seconds: null, created: 0 }), // bucket 1140; no window measured: no deltas
];

describe('downsampling a stats series', () => {
  it('aggregates counts by capture, sums deltas by window end, folds orphan deltas back, newest first', () => {
    expect(downsample(series, 60, 'max', 10)).toEqual([
      { ...snap(1140, 4), capturedOn: at(1140) },
      { ...snap(1080, 2), capturedOn: at(1080) },
      {
        ...snap(960, 9),
        readyOldestSeconds: 0.9,
        totalCount: 10,
        createdDelta: 3 + 1 + 5,
        completedDelta: 6 + 2 + 10,
        failedDelta: 3,
        deltaSeconds: 60 + 10 + 75,
        deltaOn: at(1075),
        waitBins: [1, 4, 2],
        runBins: null,
        capturedOn: at(960),
      },
    ]);
  });

  it('aggregates counts as min or as the rounded mean when asked', () => {
    const [, , first] = downsample(series, 60, 'min', 10);
    expect(first).toMatchObject({ queuedCount: 5, totalCount: 6, readyOldestSeconds: 0.9 });
    expect(downsample(series, 60, 'avg', 10)[2]).toMatchObject({ queuedCount: 7, totalCount: 8 });
  });

  it('keeps the most recent buckets up to the limit', () => {
    expect(downsample(series, 60, 'max', 2).map((s) => s.capturedOn)).toEqual([at(1140), at(1080)]);
  });

  it('folds deltas that precede every snapshot into the earliest bucket', () => {
    const [only] = downsample([snap(1030, 1, { on: 1010, seconds: 30, created: 2 })], 60, 'max', 10);
    expect(only).toMatchObject({ capturedOn: at(1020), createdDelta: 2, deltaSeconds: 30 });
  });

  it('one wide bucket holds everything', () => {
    const [all] = downsample(series, 3600, 'max', 10);
    expect(all).toMatchObject({ capturedOn: at(0), queuedCount: 9, createdDelta: 9, deltaSeconds: 145 });
  });
});

describe('the width for a number of points', () => {
  it('spans the window given, else the data', () => {
    expect(widthFor(10, series, at(0), at(600))).toBe(60);
    expect(widthFor(3, series)).toBe(50); // 1000 to 1150: 150 s in 3
    expect(widthFor(1000, series, at(0), at(1))).toBe(1);
    expect(widthFor(10, [])).toBe(1);
  });
});

describe('percentiles of a series', () => {
  it('reads each percent asked from each point, in order', () => {
    const wait = new Array<number>(48).fill(0);
    wait[10] = 4;
    const [point] = withPercentiles([{ ...snap(0, 0), waitBins: wait }], [100, 50]);
    expect(point!.percentiles).toEqual([
      { p: 100, waitSeconds: binLowerEdge(11), runSeconds: null },
      { p: 50, waitSeconds: binLowerEdge(10) + 0.5 * (binLowerEdge(11) - binLowerEdge(10)), runSeconds: null },
    ]);
  });
});

describe('a long series', () => {
  it('downsamples 150,000 snapshots into as many buckets, and spans them for maxDataPoints, without spreading them', () => {
    const long = Array.from({ length: 150_000 }, (_, i) => snap(10 * i + 5, i % 7, { on: 10 * i - 5, seconds: 10, created: 1 }));
    const buckets = downsample(long, 10, 'max', 200_000);
    expect(buckets).toHaveLength(150_000);
    expect(buckets.reduce((sum, b) => sum + (b.createdDelta ?? 0), 0)).toBe(150_000);
    expect(widthFor(100, long)).toBe(15_000);
  });
});
