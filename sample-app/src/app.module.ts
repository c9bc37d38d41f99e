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
import { ShopDatabaseModule } from './shop/database.js';
import { ShopModule } from './shop/shop.module.js';

@Module({})
export class AppModule {}

/** How the sample app is wired. */
export interface SampleOptions {
  /** The PostgreSQL of the queue and of the shop's tables. */
  connectionString: string;
  /** The queue's schema (default `pgqueue`); its tables are created or upgraded when the app starts. */
  schema?: string;
  /** The shop's schema (default `shop`). */
  shopSchema?: string;
  /** The admin API answers requests that carry it; without one it refuses every request. */
  adminToken?: string;
  /** Demo mode: a demo order every this many milliseconds. */
  demoIntervalMs?: number | null;
}

/** The sample application: the welcome-email example, the shop, and the operating surface around them. */
export function createAppModule(options: SampleOptions): DynamicModule {
  const { connectionString, schema, adminToken } = options;
  return {
    module: AppModule,
    imports: [
      QueueModule.forRoot({ connectionString, ...(schema === undefined ? {} : { schema }) }),
      ShopDatabaseModule.forRoot({ connectionString, schema: options.shopSchema }),
      ShopModule.forRoot({ demoIntervalMs: options.demoIntervalMs }),
      TerminusModule,
      // the queue's metrics on prom-client's default registry, served at GET /metrics
      QueueMetricsModule.forRoot(),
      // the live dashboard at /queues, behind the token (a browser asks for it as a password). Without a token, this
      // host only, for a developer's machine: a proxy in front of the app (nginx's proxy_pass) would open it to all,
      // so outside development set ADMIN_TOKEN (localOnly is refused when NODE_ENV is production)
      QueueDashboardModule.forRoot(
        adminToken ? { path: '/queues', guards: [new AdminTokenGuard(adminToken)] } : { path: '/queues', localOnly: true },
      ),
      // enqueue, look up, retry, delete, pause and resume over HTTP, for a caller with the token
      QueueAdminModule.forRoot({ prefix: '/api/queue', guards: [new AdminTokenGuard(adminToken)] }),
    ],
    controllers: [JobsController, HealthController, MetricsController],
    // the queue's typed errors as HTTP answers (400 naming the field, 404, 409, 503) in every controller
    providers: [EmailHandlers, QueueHealthIndicator, { provide: APP_FILTER, useClass: QueueErrorFilter }],
  };
}
