import { LocalGroups } from '../../lib/core/worker/intake/local-groups.js';
import { claimedRow } from './claimed-row.js';

const row = (id: string, group: string | null, tier: string | null = null) => claimedRow(id, { group_id: group, group_tier: tier });

describe('LocalGroups', () => {
  it('passes over the groups with room for no tier, and tells the claim how many jobs of the others run', () => {
    let freed = 0;
    const g = new LocalGroups({ default: 2, tiers: { pro: 3 } }, () => freed++);
    g.start(row('1', 'a'));
    g.start(row('2', 'a'));
    g.start(row('3', 'p', 'pro'));
    g.start(row('4', null));
    // group a runs 2: at the default limit, but a pro job of it would still have room (3)
    expect(g.claimArgs()).toEqual({ saturated: [], busy: ['a', 'p'], counts: [2, 1], default: 2, tiers: ['pro'], limits: [3] });
    g.start(row('5', 'a', 'pro'));
    expect(g.claimArgs()).toMatchObject({ saturated: ['a'], busy: ['p'], counts: [1] });
    g.end(row('1', 'a'));
    expect(freed).toBe(1);
    g.end(row('3', 'p', 'pro'));
    expect(freed).toBe(1);
    expect(g.claimArgs()).toMatchObject({ saturated: [], busy: ['a'], counts: [2] });
    g.end(row('2', 'a'));
    g.end(row('5', 'a', 'pro'));
    g.end(row('4', null));
    expect(g.count('a')).toBe(0);
    expect(g.claimArgs()).toMatchObject({ saturated: [], busy: [], counts: [] });
  });

  it('a group is never saturated while some tier (or the groups of no listed tier) has no limit', () => {
    const g = new LocalGroups({ default: null, tiers: { pro: 1 } }, () => undefined);
    g.start(row('1', 'x', 'free'));
    g.start(row('2', 'x', 'free'));
    expect(g.count('x')).toBe(2);
    expect(g.claimArgs()).toMatchObject({ saturated: [], busy: ['x'], counts: [2] });
    expect(g.limitOf('pro')).toBe(1);
    expect(g.limitOf(null)).toBeNull();
  });
});
