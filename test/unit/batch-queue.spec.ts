// The batch queue: one handler call per claim, at most `concurrency` at once, and the loop told to claim a whole
// batch or nothing. Also the options a batch loop is parsed with.
import { BatchQueue } from '../../lib/core/worker/intake/batch-queue.js';
import { DEFAULT_BATCH_SIZE, parseWorkOptions } from '../../lib/core/config/options.js';
import { InvalidOptionError } from '../../lib/core/errors.js';
import { claimedRow } from './claimed-row.js';

/** A worker as the batch queue sees it: the batches it was asked to start, and how to free each. */
function owner() {
  const started: { ids: string[]; free: () => void }[] = [];
  return {
    started,
    startBatch(rows: { id: string }[], _claimedAt: number, free: () => void) {
      started.push({ ids: rows.map((r) => r.id), free });
    },
  };
}

const rows = (...ids: number[]) => ids.map((n) => claimedRow(String(n)));

describe('the batch queue', () => {
  it('starts each claim as one call, no more calls at once than its concurrency', () => {
    const o = owner();
    const q = new BatchQueue({ concurrency: 2, batchSize: 3 }, o);
    expect(q.room(false, 0, 0)).toBe(3);
    q.push(rows(1, 2, 3), 0);
    q.dispatch();
    q.push(rows(4, 5), 0);
    q.dispatch();
    expect(o.started.map((b) => b.ids)).toEqual([
      ['1', '2', '3'],
      ['4', '5'],
    ]);
    // both calls run: nothing more is claimed, and a claim made meanwhile waits
    expect(q.room(false, 5, 5)).toBe(0);
    q.push(rows(6), 0);
    q.dispatch();
    expect(o.started).toHaveLength(2);
    expect(q.length).toBe(1);
    o.started[0]!.free();
    // freeing twice counts once
    o.started[0]!.free();
    q.dispatch();
    expect(o.started.map((b) => b.ids)).toEqual([['1', '2', '3'], ['4', '5'], ['6']]);
    expect(q.room(false, 3, 6)).toBe(0);
  });

  it('claims a whole batch or none: results still being written never cut one short', () => {
    const q = new BatchQueue({ concurrency: 1, batchSize: 10 }, owner());
    // one batch's results are being written: there is room for another whole one
    expect(q.room(false, 0, 10)).toBe(10);
    // more than that: wait, rather than claim 9
    expect(q.room(false, 0, 11)).toBe(0);
  });

  it('an empty claim starts nothing; stop() hands back what waits and refuses more', () => {
    const o = owner();
    const q = new BatchQueue({ concurrency: 1, batchSize: 2 }, o);
    q.push([], 0);
    q.dispatch();
    expect(o.started).toHaveLength(0);
    q.push(rows(1, 2), 0);
    q.dispatch();
    q.push(rows(3, 4), 0);
    expect(q.stop().map((r) => r.id)).toEqual(['3', '4']);
    expect(q.room(false, 0, 0)).toBe(0);
    expect(() => q.push(rows(5), 0)).toThrow('the batch queue is stopped');
  });
});

describe('batch options', () => {
  it('a batch loop gets 10 jobs a call unless batchSize says otherwise; concurrency counts calls', () => {
    expect(parseWorkOptions({ batch: true })).toMatchObject({ batch: true, batchSize: DEFAULT_BATCH_SIZE, concurrency: 1 });
    expect(DEFAULT_BATCH_SIZE).toBe(10);
    expect(parseWorkOptions({ batch: true, batchSize: 50, concurrency: 2 })).toMatchObject({ batchSize: 50, concurrency: 2 });
    expect(parseWorkOptions({ concurrency: 4 })).toMatchObject({ batch: false, batchSize: 4 });
  });

  it('refuses a batch that is not a boolean, and batch with transactional, naming the field', () => {
    expect(() => parseWorkOptions({ batch: 'yes' })).toThrow(InvalidOptionError);
    expect(() => parseWorkOptions({ batch: 'yes' })).toThrow('options.batch');
    const err = (() => {
      try {
        parseWorkOptions({ batch: true, transactional: true });
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err!.message).toContain('options.transactional');
    expect(err!.message).toContain('false or unset with batch: true');
  });
});
