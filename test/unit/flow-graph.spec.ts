import { assertAcyclic } from '../../lib/core/flow-graph.js';

const flow = (edges: Record<string, string[]>) => new Map(Object.entries(edges).map(([ref, parents], index) => [ref, { index, parents }]));

describe("a flow's order", () => {
  it('accepts chains, fan-out and fan-in', () => {
    expect(() => assertAcyclic(flow({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'] }))).not.toThrow();
  });

  it('refuses a cycle, naming the job where it closes and the path around it', () => {
    expect(() => assertAcyclic(flow({ a: ['c'], b: ['a'], c: ['b'] }))).toThrow(/^jobs\[0\]\.dependsOn must be refs that do not form a cycle, got "a -> c -> b -> a"$/);
  });

  it('refuses a job that waits for itself', () => {
    expect(() => assertAcyclic(flow({ a: [], b: ['b'] }))).toThrow(/^jobs\[1\]\.dependsOn .* got "b -> b"$/);
  });
});
