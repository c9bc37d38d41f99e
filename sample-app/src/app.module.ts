import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { QueueModule } from 'nestjs-pgqueue';
import { QueueMetricsModule } from 'nestjs-pgqueue/prometheus';
import { QueueHealthIndicator } from 'nestjs-pgqueue/terminus';
import { EmailHandlers } from './email.handlers.js';
import { HealthController } from './health.controller.js';
import { JobsController } from './jobs.controller.js';
import { MetricsController } from './metrics.controller.js';

@Module({})
export class AppModule {}

/**
 * The sample application, wired to the PostgreSQL at `connectionString`. The queue's tables live in
 * `schema` (default `pgqueue`); they are created or upgraded when the app starts.
 */
export function createAppModule(connectionString: string, schema?: string): DynamicModule {
  return {
    module: AppModule,
    imports: [
      QueueModule.forRoot({ connectionString, ...(schema === undefined ? {} : { schema }) }),
      TerminusModule,
      // the queue's metrics on prom-client's default registry, served at GET /metrics
      QueueMetricsModule.forRoot(),
    ],
    controllers: [JobsController, HealthController, MetricsController],
    providers: [EmailHandlers, QueueHealthIndicator],
  };
}
