import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

@Controller('metrics')
export class MetricsController {
  /**
   * The Prometheus scrape: QueueMetricsModule put the queue's metrics on prom-client's default registry. The queue
   * gauges are the cluster's (aggregate them with max()); the job counters and histograms are this instance's.
   */
  @Get()
  @Header('Content-Type', register.contentType)
  scrape(): Promise<string> {
    return register.metrics();
  }
}
