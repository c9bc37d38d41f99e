import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { QueueHealthIndicator } from 'nestjs-pgqueue/terminus';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queue: QueueHealthIndicator,
  ) {}

  /**
   * 200 `{ status: 'ok', ... }` with each queue's counts and the cluster's live workers; 503 with the reasons when
   * the database does not answer within 3 s, a queue's oldest ready job has waited 5 minutes, more than 1,000 jobs
   * wait, or a queue with ready jobs has no live worker. The counts are the monitor pass's (every minute).
   */
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([
      () => this.queue.isHealthy('queue', { maxReadyAgeSeconds: 300, maxQueued: 1000, requireWorkers: true, timeoutMs: 3000 }),
    ]);
  }
}
