// Attack: a handler's HTTP client fails, and its error carries the request's credentials and the response's body;
// whoever may read jobs (dashboard, admin API, CLI) would read them. Answer: the stored error keeps its message, code
// and status, and none of the secrets. Attack: a job fails without end; answer: its output keeps the most recent
// MAX_KEPT_ERRORS errors, each within MAX_ERROR_BYTES.
import { Socket } from 'node:net';
import { MAX_KEPT_ERRORS } from '../../lib/core/sql/fragments.js';
import { MAX_ERROR_BYTES } from '../../lib/core/worker/attempt/error-size.js';
import { until } from '../helpers/db.js';
import { axiosLikeError, SECRETS } from '../helpers/axios-like.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('storederr');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

interface Stored {
  text: string;
  errors: { message: string }[];
}

/** Every stored column of the job as one JSON text (the row, not only what getJobById maps), and output.errors. */
async function stored(id: string): Promise<Stored> {
  const [row] = await f.sql<{ text: string; errors: { message: string }[] }>(
    `SELECT to_jsonb(j)::text AS text, j.output -> 'errors' AS errors FROM $schema.jobs j WHERE j.id = $1`,
    [id],
  );
  return row!;
}

describe('what a failed attempt stores', () => {
  it('an axios-like error thrown by a handler is stored with its message, code and status, and none of its secrets', async () => {
    const socket = new Socket();
    try {
      const q = f.create();
      await q.createQueue('se.http', { retryLimit: 1 });
      const id = (await q.send('se.http', { order: 7 }))!;
      await q.work('se.http', { pollingIntervalSeconds: 0.1 }, () => {
        throw axiosLikeError(socket);
      });
      const job = await until(async () => {
        const j = await q.getJobById('se.http', id);
        return j?.state === 'failed' ? j : null;
      }, 'the job failed twice, for good');

      const served = JSON.stringify(job);
      const { text, errors } = await stored(id);
      for (const [what, secret] of Object.entries(SECRETS)) {
        expect({ what, served: served.includes(secret), stored: text.includes(secret) }).toEqual({ what, served: false, stored: false });
      }
      expect(errors).toHaveLength(2);
      for (const error of [job.lastError, ...errors]) {
        expect(error).toMatchObject({ name: 'AxiosError', message: 'Request failed with status code 401' });
      }
      expect((job.output as { error: Record<string, unknown> }).error).toMatchObject({ code: 'ERR_BAD_REQUEST', status: 401 });
    } finally {
      socket.destroy();
    }
  });

  it(`a job that fails again and again keeps its ${MAX_KEPT_ERRORS} most recent errors, the newest last`, async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('se.many', { retryLimit: 1_000 });
    const id = (await q.send('se.many', {}))!;
    const failures = MAX_KEPT_ERRORS + 7;
    for (let i = 0; i < failures; i++) await q.fail('se.many', id, new Error(`attempt ${i}`));
    const { errors } = await stored(id);
    expect(errors.map((e) => e.message)).toEqual(Array.from({ length: MAX_KEPT_ERRORS }, (_, i) => `attempt ${i + 7}`));
    const job = (await q.getJobById('se.many', id))!;
    expect(job.lastError?.message).toBe(`attempt ${failures - 1}`);
  });

  it('a job written with 10,000 errors (before the cap existed) keeps only the most recent at its next failure', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('se.legacy', { retryLimit: 100_000 });
    const id = (await q.send('se.legacy', {}))!;
    await f.sql(
      `UPDATE $schema.jobs SET output = jsonb_build_object('errors',
         (SELECT jsonb_agg(jsonb_build_object('message', 'old ' || n) ORDER BY n) FROM generate_series(1, 10000) n))
       WHERE id = $1`,
      [id],
    );
    await q.fail('se.legacy', id, new Error('new'));
    const { errors } = await stored(id);
    expect(errors).toHaveLength(MAX_KEPT_ERRORS);
    expect(errors[0]!.message).toBe(`old ${10_000 - MAX_KEPT_ERRORS + 2}`);
    expect(errors.at(-1)!.message).toBe('new');
  });

  it('an error of several hundred KB is stored in at most MAX_ERROR_BYTES, its message and code kept', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('se.big', { retryLimit: 5 });
    const id = (await q.send('se.big', {}))!;
    const big = Object.assign(new Error('界'.repeat(100_000)), { code: 'E_BIG', blob: 'x'.repeat(500_000), list: Array(1e5).fill('y') });
    // each kept part within its count of characters, but three bytes a character: 8,000 of message, 20 × 500 of stack
    big.stack = Array.from({ length: 40 }, () => '字'.repeat(1_000)).join('\n');
    await q.fail('se.big', id, big);
    const [row] = await f.sql<{ bytes: number }>(
      `SELECT octet_length((output -> 'errors' -> 0)::text) AS bytes FROM $schema.jobs WHERE id = $1`,
      [id],
    );
    // jsonb's text form spaces its punctuation: allow for it over the JSON the engine sent
    expect(row!.bytes).toBeLessThanOrEqual(MAX_ERROR_BYTES * 1.05);
    const job = (await q.getJobById('se.big', id))!;
    expect(job.lastError?.message.startsWith('界界界')).toBe(true);
    expect((job.output as { error: Record<string, unknown> }).error.code).toBe('E_BIG');
  });
});
