// The dashboard's event stream without a server: a viewer's first event is the whole snapshot, later ones carry
// only the new depth points, each serialised once however many viewers read it, and the page's merge makes the
// snapshot whole again.
import { jest } from '@jest/globals';
import type { DashboardSnapshot } from '../../lib/core/dashboard/model.js';
import { emptySnapshot } from '../../lib/core/dashboard/sampler.js';
import { SnapshotEncoder } from '../../lib/core/dashboard/stream.js';
import { withDepth } from '../../lib/dashboard/render.js';

const t0 = 1_800_000_000_000;
const queues = Array.from({ length: 100 }, (_, i) => `queue-${i}`);

/** The sampler's snapshot after `n` samples, one a second: a depth point each, at most two minutes of them. */
function snapshotAt(n: number): DashboardSnapshot {
  const depth = [];
  for (let i = Math.max(0, n - 120); i <= n; i++)
    depth.push({ at: t0 + i * 1000, waiting: Object.fromEntries(queues.map((q, k) => [q, i + k])) });
  return { ...emptySnapshot(), at: t0 + n * 1000, depth };
}

describe('the dashboard stream', () => {
  it('serialises each snapshot once, whatever the number of viewers', () => {
    const encoder = new SnapshotEncoder();
    const s = snapshotAt(5);
    // fifty viewers, each asking for the first event and a later one: two serialisations in all
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      for (let viewer = 0; viewer < 50; viewer++) {
        encoder.full(s);
        encoder.delta(s);
      }
      expect(stringify).toHaveBeenCalledTimes(2);
    } finally {
      stringify.mockRestore();
    }
    expect(JSON.parse(encoder.full(s))).toEqual(JSON.parse(JSON.stringify(s)));
  });

  it('a later event carries only the depth points since the one before, and the page rebuilds the same snapshot', () => {
    const encoder = new SnapshotEncoder();
    let held: DashboardSnapshot['depth'] = [];
    const first = snapshotAt(150);
    held = withDepth(held, JSON.parse(encoder.full(first))).depth;
    expect(held).toEqual(first.depth);
    for (let n = 151; n < 160; n++) {
      const s = snapshotAt(n);
      const text = encoder.delta(s);
      const event = JSON.parse(text);
      expect(event.depth).toBeUndefined();
      expect(event.depthAppend).toHaveLength(1);
      // a hundred queues: the whole history is a hundred times more to send each second
      expect(text.length * 20).toBeLessThan(encoder.full(s).length);
      const whole = withDepth(held, event);
      expect(whole).toEqual(JSON.parse(JSON.stringify(s)));
      held = whole.depth;
    }
  });

  it('a failed sample repeats the last good one’s time and depth: nothing is appended', () => {
    const encoder = new SnapshotEncoder();
    const good = snapshotAt(10);
    const held = withDepth([], JSON.parse(encoder.full(good))).depth;
    const failed = { ...good, error: 'connect ECONNREFUSED' };
    const event = JSON.parse(encoder.delta(failed));
    expect(event.depthAppend).toEqual([]);
    expect(withDepth(held, event)).toMatchObject({ error: 'connect ECONNREFUSED', depth: good.depth });
  });
});
