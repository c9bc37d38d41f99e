import { assertAcyclic, flowByQueue, flowEdges, parseFlow } from '../../lib/core/jobs/flow-graph.js';

const flow = (edges: Record<string, string[]>) => new Map(Object.entries(edges).map(([ref, parents], index) => [ref, { index, parents }]));

describe("a flow's order", () => {
  it('accepts chains, fan-out and fan-in', () => {
    expect(() => assertAcyclic(flow({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'] }))).not.toThrow();
  });

  it('refuses a cycle, naming the job where it closes and the path around it', () => {
    expect(() => assertAcyclic(flow({ a: ['c'], b: ['a'], c: ['b'] }))).toThrow(
      /^jobs\[0\]\.dependsOn must be refs that do not form a cycle, got "a -> c -> b -> a"$/,
    );
  });

  it('refuses a job that waits for itself', () => {
    expect(() => assertAcyclic(flow({ a: [], b: ['b'] }))).toThrow(/^jobs\[1\]\.dependsOn .* got "b -> b"$/);
  });
});

describe("parsing a flow's jobs", () => {
  const MAX = 1024;

  it('gives each job its queue, data and parents, waiting for all of them, failing with them by default', () => {
    const byRef = parseFlow(
      [
        { name: 'q.a', ref: 'a', data: { n: 1 } },
        { name: 'q.b', ref: 'b', dependsOn: ['a', 'a'], onParentFailure: 'cancel' },
        { name: 'q.b', ref: 'c', dependsOn: ['a', 'b'], priority: 5 },
      ],
      MAX,
    );
    expect([...byRef.keys()]).toEqual(['a', 'b', 'c']);
    expect(byRef.get('a')).toMatchObject({
      index: 0,
      queue: 'q.a',
      data: '{"n":1}',
      parents: [],
      parsed: { blockedBy: 0, onParentFailure: 'fail' },
    });
    expect(byRef.get('b')).toMatchObject({ queue: 'q.b', data: null, parents: ['a'], parsed: { blockedBy: 1, onParentFailure: 'cancel' } });
    expect(byRef.get('c')).toMatchObject({ parents: ['a', 'b'], parsed: { blockedBy: 2, priority: 5 } });
    expect([...flowByQueue(byRef)].map(([queue, group]) => [queue, group.map((g) => g.ref)])).toEqual([
      ['q.a', ['a']],
      ['q.b', ['b', 'c']],
    ]);
    expect(flowEdges(byRef, { a: '1', b: '2', c: '3' })).toEqual([
      ['q.a', '1', 'q.b', '2'],
      ['q.a', '1', 'q.b', '3'],
      ['q.b', '2', 'q.b', '3'],
    ]);
  });

  it.each([
    [[], /^jobs must be a non-empty array of flow jobs/],
    [[{ name: 'q', ref: '' }], /^jobs\[0\]\.ref must be a string of 1 to 255 characters/],
    [
      [
        { name: 'q', ref: 'a' },
        { name: 'q', ref: 'a' },
      ],
      /^jobs\[1\]\.ref must be a ref no other job of the flow uses, got "a"$/,
    ],
    [[{ name: 'q', ref: 'a', dependsOn: 'b' }], /^jobs\[0\]\.dependsOn must be an array of refs, got "b"$/],
    [[{ name: 'q', ref: 'a', dependsOn: ['z'] }], /^jobs\[0\]\.dependsOn must be refs of jobs in this flow \(a\), got "z"$/],
    [[{ name: 'q', ref: 'a', onParentFailure: 'ignore' }], /^jobs\[0\]\.onParentFailure must be one of "fail", "cancel", got "ignore"$/],
    [
      [
        { name: 'q', ref: 'a' },
        { name: 'q', ref: 'b', dependsOn: ['a'], startAfter: 5 },
      ],
      /^jobs\[1\]\.startAfter must be left out: a job with dependsOn starts when its parents complete, got 5$/,
    ],
    [[{ name: 'Not a queue name!', ref: 'a' }], /^jobs\[0\]\.name must be/],
    [[{ name: 'q', ref: 'a', data: 'x'.repeat(2000) }], /jobs\[0\]\.data/],
  ])('refuses %j', (jobs, message) => {
    expect(() => parseFlow(jobs, MAX)).toThrow(message);
  });
});
