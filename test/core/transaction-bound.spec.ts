// The bound on the engine's own transactions (lib/core/sql/transaction.ts) against a real PostgreSQL: it ends
// a session left idle in such a transaction, and it never loosens a stricter setting of the session.
import pg from 'pg';
import { beginEngineTransaction, ENGINE_TRANSACTION_IDLE_SECONDS } from '../../lib/core/sql/transaction.js';
import { testUrl } from '../helpers/db.js';

/** The session's idle_in_transaction_session_timeout inside an engine transaction begun with `session` set beforehand. */
async function boundWith(session: string): Promise<string> {
  const client = new pg.Client({ connectionString: testUrl() });
  await client.connect();
  try {
    await client.query(`SET idle_in_transaction_session_timeout = '${session}'`);
    await client.query(beginEngineTransaction);
    const { rows } = await client.query<{ bound: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS bound");
    await client.query('ROLLBACK');
    // Only for the transaction: the session's own setting is back after it.
    const after = (await client.query<{ s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS s")).rows[0]!.s;
    return `${rows[0]!.bound} (after: ${after})`;
  } finally {
    await client.end();
  }
}

describe('the bound on the engine transactions', () => {
  it(`sets ${ENGINE_TRANSACTION_IDLE_SECONDS} s where the session has none or a looser one, and keeps a stricter one`, async () => {
    expect(await boundWith('0')).toBe(`${ENGINE_TRANSACTION_IDLE_SECONDS}s (after: 0)`);
    expect(await boundWith('1min')).toBe(`${ENGINE_TRANSACTION_IDLE_SECONDS}s (after: 1min)`);
    expect(await boundWith('2s')).toBe('2s (after: 2s)');
    expect(await boundWith('500ms')).toBe('500ms (after: 500ms)');
  });
});
