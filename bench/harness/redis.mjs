// Redis for BullMQ, only when something answers on 127.0.0.1:6379. The bench owns one database index
// (BULLMQ.redisDb) and flushes it before and after each BullMQ run; it touches no other.
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { BULLMQ } from '../settings.mjs';

/** True when a Redis server answers PING within `timeoutMs`. */
function answersPing(host, port, timeoutMs = 1_000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let reply = '';
    const done = (ok) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.on('error', () => done(false));
  });
}

/** The bench's Redis, or null when none answers. */
export async function openRedis() {
  const { redisHost: host, redisPort: port, redisDb: db } = BULLMQ;
  if (!(await answersPing(host, port))) return null;
  const client = new Redis({ host, port, db, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined);
  await client.connect();
  const info = await client.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  const persistence = {};
  for (const key of ['save', 'appendonly']) {
    try {
      const [, value] = await client.config('GET', key);
      persistence[key] = value === '' ? '""' : value;
    } catch {
      persistence[key] = 'unknown';
    }
  }
  return {
    description: `Redis ${version} at ${host}:${port}, database ${db} (save ${persistence.save}, appendonly ${persistence.appendonly})`,
    flush: () => client.flushdb(),
    close: () => client.quit().catch(() => client.disconnect()),
  };
}
