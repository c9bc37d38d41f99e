// findJobs (pages of a queue's jobs, newest first, through an index) and getJobById's lastError.
import { InvalidOptionError, QueueNotFoundError } from '../../lib/core/index.js';
import { until } from '../helpers/db.js';
import { engineExec, engineStatements, queueFixture } from '../helpers/queue.js';

const f = queueFixture('find');
afterAll(() => f.cleanup());
afterEach(() => f.closeMade());

describe('findJobs', () => {
  it('pages through 10,000 failed jobs among 30,000, newest first, each once, while more fail', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('find.many');
    // 30,000 jobs, every third one failed, the rest completed
    for (let i = 0; i < 6; i++)
      await q.insert(
        'find.many',
        Array.from({ length: 5000 }, (_, n) => ({ data: { n: i * 5000 + n } })),
      );
    await f.sql(`UPDATE $schema.jobs SET state = CASE WHEN id % 3 = 0 THEN 'failed' ELSE 'completed' END::$schema.job_state,
      completed_on = now() WHERE queue = 'find.many'`);
    await f.sql(`ANALYZE $schema.jobs_default`);
    const failed = (
      await f.sql<{ id: string }>(
        `SELECT j.id::text AS id FROM $schema.jobs j WHERE j.queue = 'find.many' AND j.state = 'failed' ORDER BY j.id DESC`,
      )
    ).map((r) => r.id);
    expect(failed).toHaveLength(10_000);

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; ; page++) {
      const { jobs, next } = await q.findJobs('find.many', { state: 'failed', limit: 1000, ...(after ? { after } : {}) });
      expect(jobs.every((j) => j.state === 'failed')).toBe(true);
      seen.push(...jobs.map((j) => j.id));
      // a job failing meanwhile is newer than every page: it never shows up in a later one
      if (page === 3) {
        const [late] = await q.insert('find.many', [{ data: { late: true } }]);
        await f.sql(`UPDATE $schema.jobs SET state = 'failed', completed_on = now() WHERE id = $1`, [late]);
      }
      if (!next) break;
      after = next;
    }
    expect(seen).toEqual(failed);
  });

  it('reads an index for each shape, with the plans the engine makes (generic): never the whole history', async () => {
    const q = f.create({ supervise: false, poolSize: 1 });
    await q.createQueue('find.plan');
    for (let i = 0; i < 4; i++)
      await q.insert(
        'find.plan',
        Array.from({ length: 5000 }, (_, n) => ({ data: {}, singletonKey: `k${n % 500}`, dedupeKey: `d${i * 5000 + n}` })),
      );
    // finished history, and a few keyed jobs waiting and running
    await f.sql(`UPDATE $schema.jobs SET state = CASE WHEN id % 50 = 0 THEN 'failed' ELSE 'completed' END::$schema.job_state
      WHERE queue = 'find.plan' AND id % 100 <> 7`);
    await f.sql(
      `UPDATE $schema.jobs SET state = 'active', worker_id = 'w', lease_until = now() + interval '1 hour' WHERE queue = 'find.plan' AND id % 1000 = 7`,
    );
    await f.sql(`ANALYZE $schema.jobs_default`);
    const st = await engineStatements(q, 'find.plan');
    const exec = engineExec(q);
    /** The executed plan of `text` with `values`, prepared and run on the engine's own session, as it runs them. */
    const plan = async (text: string, values: string) => {
      await exec.query(`PREPARE find_page AS ${text}`);
      try {
        // planned for any values first, as the engine's sessions always do (force_generic_plan)
        const rows = await exec.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE find_page(${values})`);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await exec.query('DEALLOCATE find_page');
      }
    };
    /** Rows a plan read and threw away (filters and rechecks), in all. */
    const removed = (text: string) =>
      [...text.matchAll(/Rows Removed by (?:Filter|Index Recheck): (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);

    const all = await plan(st.findJobs, `'find.plan', NULL, NULL, NULL, NULL, 101, 1048576`);
    expect(all).toMatch(/Index Scan Backward using jobs_default_pkey[\s\S]*Index Cond: .*id < /);
    expect(removed(all)).toBe(0);
    const failed = await plan(st.findFailedJobs, `'find.plan', '{failed}', NULL, NULL, NULL, 101, 1048576`);
    expect(failed).toMatch(/Index Scan Backward using jobs_default_queue_id_idx[\s\S]*Index Cond: .*id < /);
    expect(failed).not.toMatch(/Seq Scan|Sort/);
    expect(removed(failed)).toBe(0);
    const byKey = await plan(st.findJobsBySingletonKey, `'find.plan', NULL, 'k7', NULL, NULL, 101, 1048576, NULL`);
    expect(byKey).toMatch(/jobs_default_queue_singleton_key_id_idx/);
    expect(byKey).not.toMatch(/Seq Scan|jobs_default_pkey/);
    const byDedupe = await plan(st.findJobsByDedupeKey, `'find.plan', NULL, NULL, 'd77', NULL, 101, 1048576, NULL`);
    expect(byDedupe).toMatch(/jobs_default_queue_dedupe_key_id_idx/);
    expect(byDedupe).not.toMatch(/Seq Scan|jobs_default_pkey/);
    expect(removed(byDedupe)).toBe(0);
    // a part the states asked leave out reads nothing
    const failedOfKey = await plan(st.findJobsBySingletonKey, `'find.plan', '{failed}', 'k7', NULL, NULL, 101, 1048576, NULL`);
    expect(failedOfKey.match(/never executed/g)?.length).toBeGreaterThanOrEqual(2);
  });

  it('filters by state (one or several), singleton key and dedupe key, and refuses bad options naming them', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('find.filters');
    const [a, b, c] = await q.insert('find.filters', [
      { data: 1, singletonKey: 'x', dedupeKey: 'one' },
      { data: 2, singletonKey: 'x' },
      { data: 3, singletonKey: 'y' },
    ]);
    await q.cancel('find.filters', c!);
    const ids = async (options: object) => (await q.findJobs('find.filters', options)).jobs.map((j) => j.id);
    expect(await ids({})).toEqual([c, b, a]);
    expect(await ids({ singletonKey: 'x' })).toEqual([b, a]);
    expect(await ids({ dedupeKey: 'one' })).toEqual([a]);
    expect(await ids({ state: ['created', 'cancelled'], limit: 2 })).toEqual([c, b]);
    expect(await ids({ state: 'cancelled' })).toEqual([c]);
    expect(await q.findJobs('find.filters', { limit: 2 })).toMatchObject({ next: b });
    expect((await q.findJobs('find.filters', { limit: 2, after: b! })).next).toBeNull();
    for (const [options, field] of [
      [{ state: 'done' }, 'options.state'],
      [{ state: ['failed', 'nope'] }, 'options.state[1]'],
      [{ state: [] }, 'options.state'],
      [{ limit: 0 }, 'options.limit'],
      [{ limit: 1001 }, 'options.limit'],
      [{ after: 'abc' }, 'options.after'],
      [{ after: '99999999999999999999' }, 'options.after'],
      [{ sort: 'asc' }, 'options.sort'],
      [{ maxBytes: 1023 }, 'options.maxBytes'],
      [{ maxBytes: 64 * 1024 * 1024 + 1 }, 'options.maxBytes'],
    ] as const) {
      await expect(q.findJobs('find.filters', options as object)).rejects.toThrow(InvalidOptionError);
      await expect(q.findJobs('find.filters', options as object)).rejects.toThrow(field);
    }
    await expect(q.findJobs('find.none')).rejects.toThrow(QueueNotFoundError);
  });
});

describe('findJobs pages by bytes as well as rows', () => {
  it('cuts 30 MB of jobs into pages of at most 1 MB past their first job, and pages on through each once', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('find.bytes');
    // 300 jobs of 100 kB each: 30 MB in a queue whose page of 100 rows would hold 10 MB
    const blob = 'b'.repeat(100_000);
    for (let i = 0; i < 3; i++)
      await q.insert(
        'find.bytes',
        Array.from({ length: 100 }, (_, n) => ({ data: { n: i * 100 + n, blob } })),
      );
    const all = (await f.sql<{ id: string }>(`SELECT id::text AS id FROM $schema.jobs WHERE queue = 'find.bytes' ORDER BY id DESC`)).map(
      (r) => r.id,
    );
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const { jobs, next } = await q.findJobs('find.bytes', { limit: 1000, ...(after ? { after } : {}) });
      const bytes = jobs.reduce((n, j) => n + JSON.stringify(j.data).length, 0);
      // every job but the last of the page began within the bound
      expect(bytes - JSON.stringify(jobs.at(-1)!.data).length).toBeLessThan(1024 * 1024);
      if (next) expect(jobs.length).toBeLessThan(12);
      seen.push(...jobs.map((j) => j.id));
      if (!next) break;
      expect(next).toBe(jobs.at(-1)!.id);
      after = next;
    }
    expect(seen).toEqual(all);
    // a bound of its own; one job larger than the bound is its page alone, and the next page goes on after it
    const small = await q.findJobs('find.bytes', { maxBytes: 1024 });
    expect(small.jobs).toHaveLength(1);
    expect(small.next).toBe(all[0]);
    expect((await q.findJobs('find.bytes', { maxBytes: 250_000 })).jobs).toHaveLength(3);
    // a page that holds every row asked for has no next
    const last = await q.findJobs('find.bytes', { after: all[2]!, maxBytes: 64 * 1024 * 1024 });
    expect(last.jobs.map((j) => j.id)).toEqual(all.slice(3, 103));
    expect(last.next).toBe(all[102]);
    expect((await q.findJobs('find.bytes', { after: all[290]!, maxBytes: 64 * 1024 * 1024 })).next).toBeNull();
  });
});

describe('lastError', () => {
  it('is the last failed attempt: its error, when, which attempt; kept once a retry completes', async () => {
    const q = f.create({ supervise: false, logJobFailures: false });
    await q.createQueue('find.errors', { retryLimit: 2 });
    const id = (await q.send('find.errors', {}))!;
    expect((await q.getJobById('find.errors', id))!.lastError).toBeNull();
    let attempts = 0;
    await q.work('find.errors', { pollingIntervalSeconds: 0.2 }, () => {
      attempts++;
      if (attempts === 1) throw Object.assign(new Error('the mail server said no'), { code: 'E_SMTP' });
      return { sent: true };
    });
    const done = await until(async () => {
      const job = await q.getJobById('find.errors', id);
      return job?.state === 'completed' ? job : null;
    }, 'the retry completed');
    await q.offWork('find.errors');
    expect(done.output).toEqual({ sent: true }); // the handler's output: output.errors are gone
    expect(done.lastError).toMatchObject({ name: 'Error', message: 'the mail server said no', code: 'E_SMTP', attempt: 1 });
    expect(done.lastError!.stack).toContain('the mail server said no');
    expect(done.lastError!.on).toBeInstanceOf(Date);
    expect(Math.abs(done.lastError!.on.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('is set when maintenance fails a job: a lease that ran out, a retention that expired', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('find.maint', { retryLimit: 0 });
    const held = (await q.send('find.maint', {}))!;
    await q.fetch('find.maint');
    const waiting = (await q.send('find.maint', {}))!;
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [held]);
    await f.sql(`UPDATE $schema.jobs SET keep_until = now() - interval '1 second' WHERE id = $1`, [waiting]);
    await q.maintain({ force: true });
    expect((await q.getJobById('find.maint', held))!.lastError).toMatchObject({ name: 'LeaseExpiredError', attempt: 1 });
    expect((await q.getJobById('find.maint', waiting))!.lastError).toMatchObject({ name: 'RetentionExpiredError', attempt: 1 });
    expect((await q.findJobs('find.maint', { state: 'failed' })).jobs.map((j) => j.id)).toEqual([waiting, held]);
  });

  it('is set on a flow child failed with its parent, and by fail() by hand', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('find.flow', { retryLimit: 0 });
    const ids = await q.flow([
      { name: 'find.flow', ref: 'parent' },
      { name: 'find.flow', ref: 'child', dependsOn: ['parent'] },
    ]);
    await q.fetch('find.flow');
    await q.fail('find.flow', ids.parent!, { reason: 'declined' });
    expect((await q.getJobById('find.flow', ids.parent!))!.lastError).toMatchObject({ attempt: 1, on: expect.any(Date) });
    expect((await q.getJobById('find.flow', ids.child!))!.lastError).toMatchObject({ name: 'ParentFailedError', attempt: 1 });
  });
});

describe('findJobs by payload (data)', () => {
  it('finds the jobs whose payload contains the object, with state and keys, page by page, and refuses other values', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('find.data');
    const ids = await q.insert(
      'find.data',
      Array.from({ length: 30 }, (_, i) => ({
        data: { type: i % 3 === 0 ? 'email' : 'sms', to: { region: i % 2 === 0 ? 'eu' : 'us' }, n: i },
        singletonKey: `k${i % 5}`,
      })),
    );
    await q.cancel('find.data', ids.slice(0, 6));
    const found = async (options: object) => {
      const all: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await q.findJobs('find.data', { limit: 4, ...options, ...(after ? { after } : {}) });
        all.push(...page.jobs.map((j) => j.id));
        if (!page.next) return all;
        after = page.next;
      }
    };
    const newestFirst = (keep: (i: number) => boolean) =>
      ids
        .map((id, i) => [id, i] as const)
        .filter(([, i]) => keep(i))
        .map(([id]) => id)
        .reverse();
    expect(await found({ data: { type: 'email' } })).toEqual(newestFirst((i) => i % 3 === 0));
    // containment reaches into nested objects, and every key given must match
    expect(await found({ data: { type: 'email', to: { region: 'eu' } } })).toEqual(newestFirst((i) => i % 6 === 0));
    expect(await found({ data: { type: 'email' }, state: 'cancelled' })).toEqual(newestFirst((i) => i % 3 === 0 && i < 6));
    expect(await found({ data: { type: 'sms' }, singletonKey: 'k1' })).toEqual(newestFirst((i) => i % 3 !== 0 && i % 5 === 1));
    expect(await found({ data: { n: 7 }, dedupeKey: 'none' })).toEqual([]);
    expect(await found({ data: {} })).toEqual(newestFirst(() => true));
    expect(await found({ data: { type: 'fax' } })).toEqual([]);
    for (const data of ['email', ['email'], 42, { big: 1n }]) {
      const err = await q.findJobs('find.data', { data: data as never }).catch((e) => e);
      expect(err.message).toContain('options.data');
    }
  });

  it('reads the primary key from the cursor without an index of the user’s, and the user’s GIN index when there is one', async () => {
    const q = f.create({ supervise: false, poolSize: 1 });
    await q.createQueue('find.gin');
    for (let i = 0; i < 4; i++)
      await q.insert(
        'find.gin',
        Array.from({ length: 5000 }, (_, n) => ({ data: { tenant: `t${(i * 5000 + n) % 1000}`, n } })),
      );
    await f.sql(`ANALYZE $schema.jobs_default`);
    const st = await engineStatements(q, 'find.gin');
    const exec = engineExec(q);
    const plan = async (text: string) => {
      await exec.query(`PREPARE find_data AS ${text}`);
      try {
        const rows = await exec.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE find_data('find.gin', NULL, NULL, NULL, NULL, 101, 1048576, '{"tenant": "t7"}')`,
        );
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await exec.query('DEALLOCATE find_data');
      }
    };
    const probe = async () => (await exec.query<{ indexed: boolean }>(st.payloadIndexed))[0]!.indexed;
    expect(await probe()).toBe(false);
    expect(await plan(st.findJobsByData)).toMatch(/Index Scan Backward using jobs_default_pkey/);
    const without = await q.findJobs('find.gin', { data: { tenant: 't7' }, limit: 5 });
    // a partial index on the payload, or one on a part of it, is not one findJobs can read
    await f.sql(`CREATE INDEX jobs_default_data_part ON $schema.jobs_default USING gin (data) WHERE state = 'failed'`);
    await f.sql(`CREATE INDEX jobs_default_data_tenant ON $schema.jobs_default USING gin ((data -> 'tenant'))`);
    expect(await probe()).toBe(false);
    await f.sql(`CREATE INDEX jobs_default_data_gin ON $schema.jobs_default USING gin (data jsonb_path_ops)`);
    await f.sql(`ANALYZE $schema.jobs_default`);
    expect(await probe()).toBe(true);
    const indexed = await plan(st.findJobsByDataIndexed);
    expect(indexed).toMatch(/Bitmap Index Scan on jobs_default_data_gin/);
    expect(indexed).not.toMatch(/Seq Scan|jobs_default_pkey on jobs_default j_1/);
    // a new engine reads the index at its first findJobs with data (an engine that ran one reads it again within a minute)
    const fresh = f.create({ supervise: false });
    const pages = [await fresh.findJobs('find.gin', { data: { tenant: 't7' }, limit: 5 })];
    pages.push(await fresh.findJobs('find.gin', { data: { tenant: 't7' }, limit: 5, after: pages[0]!.next! }));
    expect(pages[0]!.jobs.map((j) => j.id)).toEqual(without.jobs.map((j) => j.id));
    expect(pages.flatMap((p) => p.jobs).map((j) => (j.data as { tenant: string }).tenant)).toEqual(Array(10).fill('t7'));
    expect(BigInt(pages[1]!.jobs[0]!.id)).toBeLessThan(BigInt(pages[0]!.jobs[4]!.id));
  });
});
