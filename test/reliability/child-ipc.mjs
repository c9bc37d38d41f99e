// The test side of a worker child's life, shared by child-worker.mjs and campaign-worker.mjs: messages to
// the test over IPC (see children.ts for their types), a logger that sends the engine's lines there, and
// the stop protocol: on 'stop' the child closes what it opened, says 'stopped' and disconnects; if the test
// runner goes away first, the child exits rather than outlive it.

/** Sends a message to the test, when it still listens. */
export function tell(message) {
  if (process.connected) process.send(message, () => undefined);
}

/** A QueueLogger whose lines go to the test as { type: 'log', level, message }. */
export const logger = {
  log: (message) => tell({ type: 'log', level: 'log', message }),
  warn: (message) => tell({ type: 'log', level: 'warn', message }),
  error: (message) => tell({ type: 'log', level: 'error', message }),
};

/** On the test's 'stop', runs `close` (the queue first, then the child's own pools), then says 'stopped'. */
export function stopOnRequest(close) {
  let stopping = false;
  process.on('message', (message) => {
    if (message !== 'stop' || stopping) return;
    stopping = true;
    close().then(
      () => {
        tell({ type: 'stopped' });
        process.disconnect();
      },
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
  process.on('disconnect', () => {
    if (!stopping) process.exit(3);
  });
}
