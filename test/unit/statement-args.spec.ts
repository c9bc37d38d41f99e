// Each statement's arguments are built in one place (the ...Args builders next to the statements in
// lib/core/sql/): here, every builder gives exactly as many arguments as the statements it serves number.
import {
  buildStatements,
  claimArgs,
  createQueueArgs,
  claimGroupedArgs,
  completeArgs,
  completeLeafArgs,
  failArgs,
  fetchArgs,
  heartbeatArgs,
  insertArgs,
  releaseArgs,
  touchArgs,
  updateArgs,
} from '../../lib/core/sql/index.js';

const st = buildStatements('"s"');
const highest = (text: string) => Math.max(...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));

const request = { queue: 'q', limit: 10, workerId: 'w', minPriority: null, maxPriority: null, asyncCommit: true };
const target = { queue: 'q', ids: ['1'], retryCounts: null, workerId: 'w', claimCounts: [1], stamps: ['2'] };
// Every setting a value of its own, so that two settings swapped in the builder cannot go unnoticed.
const settings = {
  policy: 'stately',
  partition: true,
  deadLetter: 'dlq',
  warningQueueSize: 11,
  notify: false,
  retryLimit: 12,
  retryDelay: 13,
  retryBackoff: true,
  retryDelayMax: 14,
  expireInSeconds: 15,
  heartbeatSeconds: 16,
  deleteAfterSeconds: 17,
  retentionSeconds: 18,
  concurrencyLimit: 19,
  rateLimit: { count: 20, perSeconds: 21 },
  removeOnComplete: 'yes' as unknown as boolean,
  failedDeleteAfterSeconds: 22,
  failUnworkedAfterSeconds: 23,
};
const attempt = { id: '1', claim_count: 1, stamp: '2' };

describe('statement arguments', () => {
  it.each([
    ['claimJobs', claimArgs(request)],
    ['claimJobsOnePerKey', claimArgs(request)],
    ['claimJobsKeyFifo', claimArgs(request)],
    ['claimJobsGrouped', claimGroupedArgs(request, { default: 2, tiers: { pro: 5 } })],
    ['fetchJobs', fetchArgs(request, true)],
    ['fetchJobsByDue', fetchArgs(request, true)],
    ['fetchJobsOnePerKey', fetchArgs(request, true)],
    ['fetchJobsOnePerKeyByDue', fetchArgs(request, true)],
    ['fetchJobsKeyFifo', fetchArgs(request, true)],
    ['fetchJobsKeyFifoByDue', fetchArgs(request, true)],
    ['completeJobs', completeArgs(target, null, 'ch', null)],
    ['completeNonParentJobs', completeLeafArgs(target, null, null)],
    ['completeQueuedJobs', completeArgs(target, null, 'ch', null)],
    ['completeQueuedNonParentJobs', completeLeafArgs(target, null, null)],
    ['completeLeafJobs', completeLeafArgs(target, null, null)],
    ['removeLeafJobs', completeLeafArgs(target, null, null)],
    ['failJobs', failArgs(target, { errors: ['{}'], permanent: [false], retryAfterSeconds: [null] }, 'ch', null)],
    ['failLeafJobs', failArgs(target, { errors: ['{}'], permanent: [false], retryAfterSeconds: [null] }, 'ch', null)],
    ['heartbeatJobs', heartbeatArgs('q', [attempt], 'w')],
    ['releaseJobs', releaseArgs('q', [attempt], 'w', 'ch')],
    ['touchJobs', touchArgs('q', [{ id: '1', retryCount: null }])],
    ['insertJobs', insertArgs('q', '[null]', () => null, [0], null)],
    ['insertJobsUnchecked', insertArgs('q', '[null]', () => null, [0], null)],
    ['insertJobsKeyed', insertArgs('q', '[null]', () => null, [0], null)],
    ['insertJobsKeyedUnchecked', insertArgs('q', '[null]', () => null, [0], null)],
    // publish binds insertJobs' arguments, the event in place of the queue (pub-sub.ts)
    ['publishJobs', insertArgs('event', '[null]', () => null, [0], null)],
    ['createQueue', createQueueArgs('q', settings)],
    ['updateJobById', updateArgs('q', '1', 'ch', [], {})],
    ['updateJobsByKey', updateArgs('q', 'k', 'ch', [], {})],
    ['updateNewestByKey', updateArgs('q', 'k', 'ch', [], {})],
    ['updateOldestByKey', updateArgs('q', 'k', 'ch', [], {})],
  ] as const)('%s gets as many arguments as it numbers', (name, args) => {
    expect(args).toHaveLength(highest(st[name]));
  });

  it("fetch()'s claims order as they say; the workers' claims keep claim order and the due test", () => {
    for (const name of [
      'claimJobs',
      'claimJobsOnePerKey',
      'claimJobsKeyFifo',
      'fetchJobs',
      'fetchJobsOnePerKey',
      'fetchJobsKeyFifo',
    ] as const) {
      expect(st[name]).toContain('ORDER BY j.priority DESC, j.start_after, j.id');
    }
    for (const name of ['fetchJobsByDue', 'fetchJobsOnePerKeyByDue', 'fetchJobsKeyFifoByDue'] as const) {
      expect(st[name]).toContain('ORDER BY j.start_after, j.id');
      expect(st[name]).not.toContain('priority DESC');
    }
    for (const name of ['claimJobs', 'claimJobsOnePerKey', 'claimJobsKeyFifo'] as const) {
      expect(st[name]).toContain('j.start_after <= statement_timestamp()');
      expect(st[name]).not.toContain("'infinity'");
    }
  });

  it('puts each column of an insert where the statement reads it', () => {
    const args = insertArgs('q', '[1]', (c) => [c], [7], '{"traceparent":"t"}');
    expect(args.slice(0, 3)).toEqual(['q', '[1]', ['priority']]);
    expect(args[17]).toEqual([7]); // $18 slot offsets
    expect(args[20]).toEqual(['blockedBy']); // $21
    expect(args[21]).toEqual(['onParentFailure']); // $22
    expect(args[22]).toBe('{"traceparent":"t"}'); // $23 trace context
    expect(st.insertJobs).toContain('unnest($21::int[]), unnest($22::text[])');
    expect(st.insertJobs).toContain('fifo_wait, trace_context)');
  });

  it('puts each field of an update where the statement reads it', () => {
    const at = new Date(0);
    const values = {
      data: '{"d":1}',
      priority: 1,
      startAt: at,
      startIn: 2,
      retryLimit: 3,
      retryDelay: 4,
      retryBackoff: true,
      retryDelayMax: 5,
      expireInSeconds: 6,
      heartbeatSeconds: 7,
      deleteAfterSeconds: 8,
      retentionSeconds: 9,
      deadLetter: 'dlq',
      groupId: 'g',
      groupTier: 't',
    };
    expect(updateArgs('q', '10', 'ch', ['priority'], values)).toEqual([
      'q',
      '10',
      'ch',
      ['priority'],
      '{"d":1}',
      1,
      at,
      2,
      3,
      4,
      true,
      5,
      6,
      7,
      8,
      9,
      'dlq',
      'g',
      't',
    ]);
    // each value's $n sits in the SET of the column it names
    const text = st.updateJobById;
    for (const [column, n] of [
      ['priority', 6],
      ['retry_delay', 10],
      ['retry_backoff', 11],
      ['retry_delay_max', 12],
      ['expire_seconds', 13],
      ['heartbeat_seconds', 14],
      ['delete_after_seconds', 15],
      ['dead_letter', 17],
      ['group_id', 18],
      ['group_tier', 19],
    ] as const) {
      expect(text).toMatch(new RegExp(`\\n    ${column} = CASE WHEN [^\\n]*\\$${n}::`));
    }
  });

  it('puts the ids and the fence of a touch where touchJobs reads them', () => {
    const args = touchArgs('q', [
      { id: '7', retryCount: 2 },
      { id: '8', retryCount: null },
    ]);
    expect(args).toEqual(['q', ['7', '8'], [2, null]]);
    expect(st.touchJobs).toContain('unnest($2::bigint[], $3::int[]) AS a(id, retry_count)');
    expect(st.touchJobs).toContain('j.retry_count = u.retry_count');
  });

  it('puts the fence where the settle statements read it', () => {
    const args = completeArgs({ ...target, retryCounts: [0] }, ['"out"'], 'ch', 'wake');
    expect(args).toEqual(['q', ['1'], [0], ['"out"'], 'w', [1], 'ch', ['2'], 'wake']);
    expect(completeLeafArgs(target, null, 'wake')).toEqual(['q', ['1'], null, null, 'w', [1], ['2'], 'wake']);
    expect(failArgs(target, { errors: ['{}'], permanent: [true], retryAfterSeconds: [5] }, 'ch', 'wake')).toEqual([
      'q',
      ['1'],
      null,
      ['{}'],
      [true],
      [5],
      'w',
      [1],
      'ch',
      ['2'],
      'wake',
    ]);
  });

  it('puts each queue setting in the column createQueue names for it', () => {
    const columns = /INSERT INTO "s"\.queues \(([^)]*)\)/
      .exec(st.createQueue)![1]!
      .split(',')
      .map((c) => c.trim());
    const args = createQueueArgs('q', settings);
    expect(Object.fromEntries(columns.map((column, i) => [column, args[i]]))).toEqual({
      name: 'q',
      policy: 'stately',
      partition: true,
      dead_letter: 'dlq',
      warning_queue_size: 11,
      notify: false,
      retry_limit: 12,
      retry_delay: 13,
      retry_backoff: true,
      retry_delay_max: 14,
      expire_seconds: 15,
      heartbeat_seconds: 16,
      delete_after_seconds: 17,
      retention_seconds: 18,
      concurrency_limit: 19,
      rate_limit_count: 20,
      rate_limit_seconds: 21,
      remove_on_complete: 'yes',
      failed_delete_after_seconds: 22,
      fail_unworked_after_seconds: 23,
    });
    expect(args).toHaveLength(columns.length);
  });

  it('leaves the builders out of the statements', () => {
    expect(Object.keys(st).filter((k) => k.endsWith('Args'))).toEqual([]);
  });
});
