import { Module, type DynamicModule } from '@nestjs/common';
import { QueueModule } from 'nestjs-pgqueue';
import { DEMO_INTERVAL_MS, DemoTrickle } from './demo.js';
import { ChargeCard, ChargeFailed, OrderPlaced, RecomputeStats, SalesReport } from './jobs.js';
import { OrderHandlers } from './order.handlers.js';
import { OrdersController } from './orders.controller.js';
import { OrdersService } from './orders.service.js';

/** The shop: orders, their jobs, and (when `demoIntervalMs` is set) a steady trickle of demo orders. */
@Module({})
export class ShopModule {
  static forRoot(options: { demoIntervalMs?: number | null } = {}): DynamicModule {
    return {
      module: ShopModule,
      // the shop's queues, declared next to their handlers; the dead-letter queue has no handler of its own
      imports: [QueueModule.forFeature([ChargeFailed, ChargeCard, OrderPlaced, RecomputeStats, SalesReport])],
      controllers: [OrdersController],
      providers: [OrdersService, OrderHandlers, DemoTrickle, { provide: DEMO_INTERVAL_MS, useValue: options.demoIntervalMs ?? null }],
    };
  }
}
