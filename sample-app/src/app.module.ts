import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { QueueErrorFilter, QueueModule } from 'nestjs-pgqueue';
import { QueueAdminModule } from 'nestjs-pgqueue/admin';
import { QueueDashboardModule } from 'nestjs-pgqueue/dashboard';
import { QueueMetricsModule } from 'nestjs-pgqueue/prometheus';
import { QueueHealthIndicator } from 'nestjs-pgqueue/terminus';
import { AdminTokenGuard } from './admin-token.guard.js';
import { EmailHandlers } from './email.handlers.js';
import { HealthController } from './health.controller.js';
import { JobsController } from './jobs.controller.js';
import { MetricsController } from './metrics.controller.js';

@Module({})
export class AppModule {}

/**
 * The sample application, wired to the PostgreSQL at `connectionString`. The queue's tables live in
 * `schema` (default `pgqueue`); they are created or upgraded when the app starts. The admin API answers requests
 * that carry `adminToken` (default: the ADMIN_TOKEN environment variable; without one it refuses every request).
 */
export function createAppModule(connectionString: string, schema?: string, adminToken = process.env.ADMIN_TOKEN): DynamicModule {
  return {
    module: AppModule,
    imports: [
      QueueModule.forRoot({ connectionString, ...(schema === undefined ? {} : { schema }) }),
      TerminusModule,
      // the queue's metrics on prom-client's default registry, served at GET /metrics
      QueueMetricsModule.forRoot(),
      // the live dashboard at /queues: with no guard given, it answers this host only
      QueueDashboardModule.forRoot({ path: '/queues' }),
      // enqueue, look up, retry, delete, pause and resume over HTTP, for a caller with the token
      QueueAdminModule.forRoot({ prefix: '/api/queue', guards: [new AdminTokenGuard(adminToken)] }),
    ],
    controllers: [JobsController, HealthController, MetricsController],
    // the queue's typed errors as HTTP answers (400 naming the field, 404, 409, 503) in every controller
    providers: [EmailHandlers, QueueHealthIndicator, { provide: APP_FILTER, useClass: QueueErrorFilter }],
  };
}
