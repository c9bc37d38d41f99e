// Each statement's arguments are built in one place (the ...Args builders next to the statements in
// lib/core/sql/): here, every builder gives exactly as many arguments as the statements it serves number.
import { buildStatements, claimArgs, createQueueArgs, claimGroupedArgs, completeArgs, completeLeafArgs, failArgs, heartbeatArgs, insertArgs, releaseArgs } from '../../lib/core/sql/index.js';

const st = buildStatements('"s"');
const highest = (text: string) => Math.max(...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));

const request = { queue: 'q', limit: 10, workerId: 'w', minPriority: null, maxPriority: null, asyncCommit: true };
const target = { queue: 'q', ids: ['1'], retryCounts: null, workerId: 'w', claimCounts: [1], stamps: ['2'] };
const settings = {
  policy: 'standard',
  partition: false,
  deadLetter: null,
  warningQueueSize: null,
  notify: true,
  retryLimit: 2,
  retryDelay: 0,
  retryBackoff: false,
  retryDelayMax: null,
  expireInSeconds: 900,
  heartbeatSeconds: null,
  deleteAfterSeconds: 60,
  retentionSeconds: 60,
  concurrencyLimit: null,
  rateLimit: { count: 3, perSeconds: 7 },
  removeOnComplete: true,
};
const attempt = { id: '1', claim_count: 1, stamp: '2' };

describe('statement arguments', () => {
  it.each([
    ['claimJobs', claimArgs(request)],
    ['claimJobsOnePerKey', claimArgs(request)],
    ['claimJobsKeyFifo', claimArgs(request)],
    ['claimJobsGrouped', claimGroupedArgs(request, { default: 2, tiers: { pro: 5 } })],
    ['completeJobs', completeArgs(target, null, 'ch')],
    ['completeNonParentJobs', completeLeafArgs(target, null)],
    ['completeLeafJobs', completeLeafArgs(target, null)],
    ['removeLeafJobs', completeLeafArgs(target, null)],
    ['failJobs', failArgs(target, { errors: ['{}'], permanent: [false], retryAfterSeconds: [null] }, 'ch')],
    ['failLeafJobs', failArgs(target, { errors: ['{}'], permanent: [false], retryAfterSeconds: [null] }, 'ch')],
    ['heartbeatJobs', heartbeatArgs('q', [attempt], 'w')],
    ['releaseJobs', releaseArgs('q', [attempt], 'w', 'ch')],
    ['insertJobs', insertArgs('q', '[null]', () => null, [0])],
    ['insertJobsUnchecked', insertArgs('q', '[null]', () => null, [0])],
    ['insertJobsKeyed', insertArgs('q', '[null]', () => null, [0])],
    ['insertJobsKeyedUnchecked', insertArgs('q', '[null]', () => null, [0])],
    ['createQueue', createQueueArgs('q', settings)],
  ] as const)('%s gets as many arguments as it numbers', (name, args) => {
    expect(args).toHaveLength(highest(st[name]));
  });

  it('puts each column of an insert where the statement reads it', () => {
    const args = insertArgs('q', '[1]', (c) => [c], [7]);
    expect(args.slice(0, 3)).toEqual(['q', '[1]', ['priority']]);
    expect(args[17]).toEqual([7]); // $18 slot offsets
    expect(args[20]).toEqual(['blockedBy']); // $21
    expect(args[21]).toEqual(['onParentFailure']); // $22
    expect(st.insertJobs).toContain('unnest($21::int[]), unnest($22::text[])');
  });

  it('puts the fence where the settle statements read it', () => {
    const args = completeArgs({ ...target, retryCounts: [0] }, ['"out"'], 'ch');
    expect(args).toEqual(['q', ['1'], [0], ['"out"'], 'w', [1], 'ch', ['2']]);
    expect(failArgs(target, { errors: ['{}'], permanent: [true], retryAfterSeconds: [5] }, 'ch')).toEqual(['q', ['1'], null, ['{}'], [true], [5], 'w', [1], 'ch', ['2']]);
  });

  it('puts each queue setting in the column createQueue names for it', () => {
    const columns = /INSERT INTO "s"\.queues \(([^)]*)\)/.exec(st.createQueue)![1]!.split(',').map((c) => c.trim());
    const args = createQueueArgs('q', settings);
    const at = (column: string) => args[columns.indexOf(column)];
    expect(columns).toHaveLength(args.length);
    expect([at('name'), at('expire_seconds'), at('rate_limit_count'), at('rate_limit_seconds'), at('remove_on_complete')]).toEqual(['q', 900, 3, 7, true]);
  });

  it('leaves the builders out of the statements', () => {
    expect(Object.keys(st).filter((k) => k.endsWith('Args'))).toEqual([]);
  });
});
