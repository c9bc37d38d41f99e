import { lockWait, tryTimeoutMs } from '../../lib/core/runtime/migrate.js';

describe("a migration try's lock wait", () => {
  it("is ours, or the role's lock_timeout when shorter, or half its statement_timeout when shorter still", () => {
    expect(tryTimeoutMs(5000, 0, 0)).toBe(5000);
    expect(tryTimeoutMs(5000, 200, 0)).toBe(200);
    expect(tryTimeoutMs(5000, 60_000, 0)).toBe(5000);
    expect(tryTimeoutMs(5000, 1000, 300)).toBe(150);
    expect(tryTimeoutMs(5000, 0, 60_000)).toBe(5000);
    expect(tryTimeoutMs(5000, 0, 1)).toBe(1);
  });

  it('a lock timeout and a deadlock are tried again; any other failure is not', () => {
    const withState = (code: string) => Object.assign(new Error('x'), { code });
    expect(lockWait(withState('55P03'), 150)).toBe('waited more than 150 ms for a lock another session holds on its tables');
    expect(lockWait(withState('40P01'), 150)).toBe('was ended by the server to break a deadlock with another session');
    for (const other of [withState('57014'), withState('42P07'), new Error('no code'), 'text']) expect(lockWait(other, 150)).toBeNull();
  });
});
