import type { Migration } from './index.js';

/**
 * Pausing without a restart: `queues.paused` (pauseQueue/resumeQueue) stops every instance's claims of the queue
 * (the claim statements read it), and `workers.stopped` lists the queues whose loops an instance holds stopped
 * (stopWorking). Held loops are not in `loops`, so they do not count as working their queue.
 */
export const pause: Migration = {
  version: 9,
  name: 'pause',
  up: (s) => `
ALTER TABLE ${s}.queues ADD COLUMN paused boolean NOT NULL DEFAULT false;
ALTER TABLE ${s}.workers ADD COLUMN stopped jsonb NOT NULL DEFAULT '[]';
`,
};
