import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { HealthThresholds } from '../core/stats/health.js';
import { QueueService } from './queue.service.js';

/**
 * Terminus indicator: `up` with each queue's counts (as the last monitor pass cached them) and the live workers of
 * the cluster; `down`, with its reasons, when the database does not answer within `timeoutMs` or a threshold is
 * breached (PgQueue.checkHealth). Never throws. Provide it next to `TerminusModule`.
 */
@Injectable()
export class QueueHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly queue: QueueService,
  ) {}

  async isHealthy(key = 'queue', thresholds?: HealthThresholds) {
    const check = this.health.check(key);
    const report = await this.queue.checkHealth(thresholds);
    const details = { queues: report.queues, workers: report.workers };
    return report.healthy ? check.up(details) : check.down({ reasons: report.reasons, ...details });
  }
}
