import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { QueueHealthIndicator } from 'nestjs-pgqueue/terminus';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queue: QueueHealthIndicator,
  ) {}

  /** 200 `{ status: 'ok', ... }` while the database answers, 503 otherwise. */
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queue.isHealthy('queue')]);
  }
}
