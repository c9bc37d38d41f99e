import { QueueExistsError, QueueNotFoundError, InvalidOptionError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('queues');
const q = f.create();
afterAll(() => f.cleanup());

describe('queue management', () => {
  it('createQueue stores the settings that jobs will inherit, and getQueue returns them', async () => {
    await q.createQueue('q.settings', {
      retryLimit: 5,
      retryDelay: 3,
      retryBackoff: true,
      retryDelayMax: 60,
      expireInSeconds: 30,
      deleteAfterSeconds: 0,
      retentionSeconds: 100,
    });
    const info = await q.getQueue('q.settings');
    expect(info).toMatchObject({
      name: 'q.settings',
      policy: 'standard',
      retryLimit: 5,
      retryDelay: 3,
      retryBackoff: true,
      retryDelayMax: 60,
      expireInSeconds: 30,
      heartbeatSeconds: null,
      deleteAfterSeconds: 0,
      retentionSeconds: 100,
      queuedCount: 0,
      totalCount: 0,
    });
    expect(info!.createdOn).toBeInstanceOf(Date);
  });

  it('createQueue with defaults fills every documented default', async () => {
    await q.createQueue('q.defaults');
    expect(await q.getQueue('q.defaults')).toMatchObject({
      retryLimit: 2,
      retryDelay: 0,
      retryBackoff: false,
      retryDelayMax: null,
      expireInSeconds: 900,
      deleteAfterSeconds: 604800,
      retentionSeconds: 1209600,
      notify: true,
    });
  });

  it('createQueue again with the same options is a no-op; with other options it throws QueueExistsError', async () => {
    await q.createQueue('q.idem', { retryLimit: 1 });
    await expect(q.createQueue('q.idem', { retryLimit: 1 })).resolves.toBeUndefined();
    const err = await q.createQueue('q.idem', { retryLimit: 4 }).catch((e) => e);
    expect(err).toBeInstanceOf(QueueExistsError);
    expect(err.message).toContain('retryLimit');
    expect((await q.getQueue('q.idem'))!.retryLimit).toBe(1);
  });

  it('updateQueue changes only what is given, and null clears retryDelayMax', async () => {
    await q.createQueue('q.update', { retryLimit: 1, retryDelayMax: 10 });
    await q.updateQueue('q.update', { retryDelay: 7 });
    expect(await q.getQueue('q.update')).toMatchObject({ retryLimit: 1, retryDelay: 7, retryDelayMax: 10 });
    await q.updateQueue('q.update', { retryDelayMax: null });
    expect((await q.getQueue('q.update'))!.retryDelayMax).toBeNull();
  });

  it('updateQueue refuses policy and unknown queues', async () => {
    await expect(q.updateQueue('q.update', { policy: 'standard' } as never)).rejects.toThrow(InvalidOptionError);
    await expect(q.updateQueue('q.missing', { retryLimit: 1 })).rejects.toThrow(QueueNotFoundError);
  });

  it('a dead-letter queue must exist', async () => {
    await expect(q.createQueue('q.dl', { deadLetter: 'q.nowhere' })).rejects.toThrow(QueueNotFoundError);
    expect(await q.getQueue('q.dl')).toBeNull();
    await q.createQueue('q.dlq');
    await q.createQueue('q.dl', { deadLetter: 'q.dlq' });
    expect((await q.getQueue('q.dl'))!.deadLetter).toBe('q.dlq');
  });

  it('getQueue with force counts jobs by state, and getQueues filters by name', async () => {
    await q.createQueue('q.counts');
    await q.insert('q.counts', [{ data: 1 }, { data: 2 }, { data: 3, startAfter: 3600 }]);
    const [job] = await q.fetch('q.counts');
    await q.fail('q.counts', job!.id, new Error('x'));
    const info = (await q.getQueue('q.counts', { force: true }))!;
    expect(info).toMatchObject({ queuedCount: 3, deferredCount: 1, readyCount: 2, activeCount: 0, totalCount: 3 });
    const [, active] = await Promise.all([q.fetch('q.counts'), q.fetch('q.counts')]);
    expect(active).toHaveLength(1);
    expect((await q.getQueue('q.counts', { force: true }))!.activeCount).toBe(2);
    const some = await q.getQueues(['q.counts', 'q.defaults', 'q.absent']);
    expect(some.map((x) => x.name)).toEqual(['q.counts', 'q.defaults']);
    expect((await q.getQueues()).length).toBeGreaterThanOrEqual(6);
  });

  it('readyOldestSeconds is how long the oldest ready job has waited since it became due, and 0 when none waits', async () => {
    await q.createQueue('q.oldest');
    expect((await q.getQueue('q.oldest', { force: true }))!.readyOldestSeconds).toBe(0);
    const [due, deferred, retry] = await q.insert('q.oldest', [{ data: 1 }, { data: 2 }, { data: 3 }]);
    // Backdated: created two hours ago and due for ten minutes; created three hours ago and due in an hour; a
    // retry created four hours ago and due again for five minutes.
    await f.sql(
      `UPDATE $schema.jobs SET created_on = now() - interval '2 hours', start_after = now() - interval '10 minutes' WHERE id = $1`,
      [due],
    );
    await f.sql(`UPDATE $schema.jobs SET created_on = now() - interval '3 hours', start_after = now() + interval '1 hour' WHERE id = $1`, [
      deferred,
    ]);
    await f.sql(
      `UPDATE $schema.jobs SET state = 'retry', retry_count = 1, created_on = now() - interval '4 hours', start_after = now() - interval '5 minutes' WHERE id = $1`,
      [retry],
    );
    const oldest = (await q.getQueue('q.oldest', { force: true }))!.readyOldestSeconds;
    expect(oldest).toBeGreaterThanOrEqual(600);
    expect(oldest).toBeLessThan(660);
  });

  it('purgeQueue deletes waiting jobs only', async () => {
    await q.createQueue('q.purge');
    await q.insert('q.purge', [{ data: 1 }, { data: 2 }, { data: 3 }]);
    const [active] = await q.fetch('q.purge');
    expect(await q.purgeQueue('q.purge')).toBe(2);
    expect((await q.getJobById('q.purge', active!.id))!.state).toBe('active');
  });

  it('deleteQueue removes the queue and its jobs; an unknown queue throws', async () => {
    await q.createQueue('q.delete');
    const id = await q.send('q.delete', { a: 1 });
    await q.deleteQueue('q.delete');
    expect(await q.getQueue('q.delete')).toBeNull();
    expect(await f.sql('SELECT 1 FROM $schema.jobs WHERE id = $1', [id])).toHaveLength(0);
    await expect(q.deleteQueue('q.delete')).rejects.toThrow(QueueNotFoundError);
  });
});
