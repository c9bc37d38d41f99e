// One app instance of an earlier build (test/package/rolling-deploy.spec.ts forks it): it starts the engine of
// PGQUEUE_DIST on PGQUEUE_SCHEMA (migrating what that build knows), works the queue "shared" and sends to it one job
// at a time until told to stop, and reports over IPC what it sent, handled and was told: its engine's `error` events
// and the lines its logger wrote at the error level (warnings are counted apart: a schema newer than the build is one).
const { PgQueue } = await import(`${process.env.PGQUEUE_DIST}/lib/core/index.js`);

const tag = process.env.PGQUEUE_TAG;
const errors = [];
const warnings = [];
const q = new PgQueue({
  connectionString: process.env.PGQUEUE_URL,
  schema: process.env.PGQUEUE_SCHEMA,
  poolSize: 3,
  logger: { log() {}, warn: (m) => warnings.push(String(m)), error: (m) => errors.push(String(m)) },
});
q.on('error', (err) => errors.push(`${err.context ?? ''}: ${err.message}`));

let sent = 0;
let handled = 0;
let sending = true;
let closing = null;

const report = (type) => new Promise((resolve) => process.send({ type, tag, sent, handled, errors, warnings }, resolve));

// the test that forked it ended (or failed) without closing it: nothing is left running
process.on('disconnect', () => {
  if (!closing) process.exit(0);
});
process.on('message', (message) => {
  if (message === 'stop-sending') sending = false;
  if (message === 'close')
    closing ??= (async () => {
      sending = false;
      await q.close();
      await report('closed');
      process.disconnect();
    })();
});

await q.createQueue('shared');
await q.work('shared', { concurrency: 4, pollingIntervalSeconds: 0.1 }, async (job) => {
  if (job.data?.from === undefined) throw new Error('a job without its sender');
  handled++;
});
await report('ready');
const progress = setInterval(() => void report('progress'), 50);
// a steady producer: one send every few milliseconds, as an app's requests send them
while (sending) {
  await q.send('shared', { from: tag, n: sent });
  sent++;
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await report('stopped-sending');
clearInterval(progress);
