import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';
import { ledgerTableSql, startWorkerChild, stopWorkerChildren } from '../reliability/children.js';

const f = queueFixture('registry');
afterAll(async () => {
  await stopWorkerChildren();
  await f.cleanup();
});

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('the cluster registry', () => {
  it('lists every running instance with where it runs, its version and its loops; a clean close removes it', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await a.createQueue('reg.mail');
    await a.createQueue('reg.pdf');
    await a.work('reg.mail', { concurrency: 3 }, () => undefined);
    await a.work('reg.mail', { concurrency: 2 }, () => undefined);
    const loop = await b.work('reg.pdf', { concurrency: 4 }, () => undefined);
    const seen = await until(async () => {
      const workers = await b.getWorkers();
      const [ofA, ofB] = [
        workers.find((w) => w.loops.some((l) => l.queue === 'reg.mail')),
        workers.find((w) => w.loops.some((l) => l.id === loop)),
      ];
      return ofA && ofB && ofA.loops.length === 2 ? { ofA, ofB } : null;
    }, 'both instances and their loops registered');
    expect(seen.ofA).toMatchObject({
      host: hostname(),
      pid: process.pid,
      version: VERSION,
      queues: [{ name: 'reg.mail', concurrency: 5, active: 0 }],
    });
    expect(seen.ofB.queues).toEqual([{ name: 'reg.pdf', concurrency: 4, active: 0 }]);
    expect(seen.ofA.id).not.toBe(seen.ofB.id);
    expect(seen.ofA.heartbeatOn.getTime()).toBeGreaterThanOrEqual(seen.ofA.startedOn.getTime());
    await a.close();
    expect((await b.getWorkers()).map((w) => w.id)).not.toContain(seen.ofA.id);
  });

  it('counts the active jobs of each loop', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('reg.busy');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await q.work('reg.busy', { concurrency: 2 }, () => held);
    await q.send('reg.busy', {});
    await until(async () => {
      const mine = (await q.getWorkers()).flatMap((w) => w.loops).find((l) => l.queue === 'reg.busy');
      return mine?.active === 1;
    }, 'the active job counted');
    release();
  });

  it("lists each loop's task and its group limits, in the database and in the process", async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('reg.groups');
    const both = await q.work(
      'reg.groups',
      { concurrency: 4, groupConcurrency: { pro: 3, default: 2 }, localGroupConcurrency: 1 },
      function mailer() {},
    );
    const plain = await q.work('reg.groups', {}, () => undefined);
    const loops = await until(async () => {
      const mine = (await q.getWorkers()).flatMap((w) => w.loops).filter((l) => l.queue === 'reg.groups');
      return mine.length === 2 ? mine : null;
    }, 'both loops registered');
    expect(loops.find((l) => l.id === both)).toMatchObject({
      task: 'mailer',
      groupConcurrency: { default: 2, tiers: { pro: 3 } },
      localGroupConcurrency: { default: 1, tiers: {} },
    });
    expect(loops.find((l) => l.id === plain)).toMatchObject({ groupConcurrency: null, localGroupConcurrency: null });
  });

  it('forgets an instance that was SIGKILLed once its heartbeat is older than the live window', async () => {
    await f.sql(ledgerTableSql(f.schema));
    const watcher = f.create({ supervise: false });
    await watcher.createQueue('reg.child');
    const child = startWorkerChild({ url: testUrl(), schema: f.schema, queue: 'reg.child', mode: 'ledger', work: {} });
    await child.ready();
    const row = await until(async () => (await watcher.getWorkers()).find((w) => w.pid === child.pid), 'the child registered');
    await child.kill('SIGKILL');
    // its row stays until its heartbeat is 30 s old: age it instead of waiting
    expect((await watcher.getWorkers()).map((w) => w.id)).toContain(row.id);
    await f.sql(`UPDATE $schema.workers SET heartbeat_on = now() - interval '31 seconds' WHERE id = $1`, [row.id]);
    expect((await watcher.getWorkers()).map((w) => w.id)).not.toContain(row.id);
    // and the next refresh of a live instance deletes it
    await until(async () => (await f.sql('SELECT 1 FROM $schema.workers WHERE id = $1', [row.id])).length === 0, 'the stale row deleted');
  });
});

describe('unworked queues', () => {
  it('a queue with ready jobs and no live loop on it is flagged, until a loop starts', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('reg.orphan');
    await q.createQueue('reg.idle');
    await q.send('reg.orphan', {}, { startAfter: 0 });
    await q.monitor({ force: true });
    expect((await q.getQueue('reg.orphan'))!.unworked).toBe(true);
    // nothing ready: nothing is waiting for a worker
    expect((await q.getQueue('reg.idle'))!.unworked).toBe(false);
    const other = f.create({ supervise: false });
    await other.work('reg.orphan', {}, () => undefined);
    // the cached count still says one ready job; the registry now shows a loop on the queue
    await until(async () => (await q.getQueue('reg.orphan'))!.unworked === false, 'the loop registered');
    await other.offWork('reg.orphan');
    await until(async () => (await q.getQueue('reg.orphan'))!.unworked, 'the loop gone from the registry');
  });
});
