import { Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { QueueMetrics, type QueueMetricsOptions } from '../metrics/queue-metrics.js';
import { QueueService } from './queue.service.js';

export { QueueMetrics, BUCKETS, type MetricsSource, type QueueMetricsOptions } from '../metrics/queue-metrics.js';

/**
 * Registers the queue's metrics (QueueMetrics) on a prom-client registry when the app starts, and takes them off when
 * it stops: at application shutdown, once the workers have drained (QueueService does that before), so the jobs
 * they finish while the app stops are counted and a scrape meanwhile still finds the metrics. Serving the registry
 * (a `/metrics` route) stays the app's: see docs/operations.md, "Metrics".
 */
@Module({})
export class QueueMetricsModule implements OnApplicationShutdown {
  constructor(private readonly metrics: QueueMetrics) {}

  static forRoot(options?: QueueMetricsOptions): DynamicModule {
    return {
      module: QueueMetricsModule,
      providers: [{ provide: QueueMetrics, useFactory: (queue: QueueService) => new QueueMetrics(queue, options), inject: [QueueService] }],
      exports: [QueueMetrics],
    };
  }

  onApplicationShutdown(): void {
    this.metrics.close();
  }
}
