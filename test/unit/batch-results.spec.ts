import { PermanentJobError } from '../../lib/core/errors.js';
import { readResults } from '../../lib/core/worker/attempt/batch-results.js';

const jobs = [
  { id: '1', retryCount: 0 },
  { id: '2', retryCount: 3 },
];

const outcome = (result: unknown, perJob: boolean, id: string) => readResults(result, jobs, perJob).outcomes.get(id)!;

describe('readResults', () => {
  it('gives every job the one output a plain return is', () => {
    const read = readResults({ n: 1 }, jobs, false);
    expect([...read.outcomes.values()]).toEqual([
      { output: '{"n":1}', failure: null },
      { output: '{"n":1}', failure: null },
    ]);
    expect(read.strays).toEqual([]);
    expect(outcome(undefined, false, '1')).toEqual({ output: null, failure: null });
    // an array is an output like any other unless perJobResults says otherwise
    expect(outcome([{ id: '1', status: 'failed' }], false, '1')).toEqual({ output: '[{"id":"1","status":"failed"}]', failure: null });
  });

  it('fails every job when the one output cannot be stored', () => {
    const read = readResults({ n: 1n }, jobs, false);
    for (const o of read.outcomes.values()) expect(o.failure!.error.message).toContain('a BigInt at n');
    expect(read.outcomes.get('2')!.failure!.error.retryCount).toBe(3);
  });

  it('reads a Map by job id: a value completes, an Error fails as a throw would, a job left out fails', () => {
    const read = readResults(
      new Map<unknown, unknown>([
        ['1', new PermanentJobError('never')],
        [2, 'a number key'],
      ]),
      jobs,
      false,
    );
    expect(read.outcomes.get('1')!.failure).toMatchObject({ permanent: true, error: { message: 'never' } });
    expect(read.outcomes.get('2')!.failure).toMatchObject({
      permanent: false,
      error: { name: 'QueueError', code: 'BATCH_RESULT_MISSING', retryCount: 3 },
    });
    expect(read.strays).toEqual(['number']);
    expect(outcome(new Map([['2', undefined]]), false, '2')).toEqual({ output: null, failure: null });
  });

  it('reads per-job results: each status, a later entry winning, strays, and a status it does not know', () => {
    const results = [
      { id: '1', status: 'failed', output: 'first' },
      { id: '1', status: 'deadletter', output: { reason: 'bad' } },
      { id: '9', status: 'completed' },
      null,
      { status: 'completed' },
    ];
    const read = readResults(results, jobs, true);
    expect(read.outcomes.get('1')!.failure).toMatchObject({ permanent: true, error: { reason: 'bad' } });
    expect(read.outcomes.get('2')!.failure).toMatchObject({ error: { code: 'BATCH_RESULT_MISSING' } });
    expect(read.strays).toEqual(['"9"', 'an entry whose id is missing', 'an entry whose id is missing']);
    expect(outcome([{ id: '2', status: 'completed', output: [1] }], true, '2')).toEqual({ output: '[1]', failure: null });
    expect(outcome([{ id: '2', status: 'failed' }], true, '2').failure).toMatchObject({
      permanent: false,
      error: { message: 'failed by its batch handler', retryCount: 3 },
    });
    expect(outcome([{ id: '2', status: 'failed', output: new PermanentJobError('x') }], true, '2').failure!.permanent).toBe(true);
    expect(outcome([{ id: '2', status: 42 }], true, '2').failure!.error).toMatchObject({
      code: 'BATCH_RESULT_INVALID',
      message: "the batch handler's result for job 2 has status number; a status is one of completed, failed, deadletter",
    });
    expect(outcome([{ id: '2', status: 'completed', output: { big: 1n } }], true, '2').failure!.error.message).toContain('a BigInt');
  });

  it('fails every job when per-job results are not an array', () => {
    for (const [result, got] of [
      [new Map([['1', 'x']]), 'a Map'],
      [null, 'null'],
      [undefined, 'undefined'],
      ['done', 'string'],
    ] as const) {
      const read = readResults(result, jobs, true);
      for (const o of read.outcomes.values()) {
        expect(o.failure!.error).toMatchObject({
          code: 'BATCH_RESULT_INVALID',
          message: `the batch handler resolved with ${got}; with perJobResults it must resolve with an array of { id, status, output }, one per job`,
        });
      }
    }
  });
});
