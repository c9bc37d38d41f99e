import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { QueueService } from './queue.service.js';

/**
 * Terminus indicator: `up` with each queue's counts (as the last monitor pass cached them) while the database
 * answers, `down` (never a throw) when it does not. Provide it next to `TerminusModule`.
 */
@Injectable()
export class QueueHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly queue: QueueService,
  ) {}

  async isHealthy(key = 'queue') {
    const check = this.health.check(key);
    try {
      const queues = await this.queue.getQueues();
      const counts = Object.fromEntries(
        queues.map((q) => [
          q.name,
          {
            queued: q.queuedCount,
            ready: q.readyCount,
            active: q.activeCount,
            failed: q.failedCount,
            readyOldestSeconds: q.readyOldestSeconds,
          },
        ]),
      );
      return check.up({ queues: counts, workers: this.queue.workerCount });
    } catch (err) {
      return check.down({ message: err instanceof Error ? err.message : String(err) });
    }
  }
}
