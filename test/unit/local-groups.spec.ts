import { LocalGroups } from '../../lib/core/worker/intake/local-groups.js';
import { claimedRow } from './claimed-row.js';

const row = (id: string, group: string | null, tier: string | null = null) => claimedRow(id, { group_id: group, group_tier: tier });

describe('LocalGroups', () => {
  it('passes over the groups at their limit and gives the others their room', () => {
    let freed = 0;
    const g = new LocalGroups({ default: 2, tiers: { pro: 3 } }, () => freed++);
    g.start(row('1', 'a'));
    g.start(row('2', 'a'));
    g.start(row('3', 'p', 'pro'));
    g.start(row('4', null));
    expect(g.claimArgs()).toEqual({ saturated: ['a'], busy: ['p'], rooms: [2], default: 2, tiers: ['pro'], limits: [3] });
    g.end(row('1', 'a'));
    expect(freed).toBe(1);
    g.end(row('3', 'p', 'pro'));
    expect(freed).toBe(1);
    expect(g.claimArgs()).toMatchObject({ saturated: [], busy: ['a'], rooms: [1] });
    g.end(row('2', 'a'));
    g.end(row('4', null));
    expect(g.count('a')).toBe(0);
    expect(g.claimArgs()).toMatchObject({ saturated: [], busy: [], rooms: [] });
  });

  it('a group of a tier with no limit and no default is neither saturated nor given a room', () => {
    const g = new LocalGroups({ default: null, tiers: { pro: 1 } }, () => undefined);
    g.start(row('1', 'x', 'free'));
    g.start(row('2', 'x', 'free'));
    expect(g.count('x')).toBe(2);
    expect(g.claimArgs()).toMatchObject({ saturated: [], busy: [], rooms: [] });
    expect(g.limitOf('pro')).toBe(1);
    expect(g.limitOf(null)).toBeNull();
  });
});
