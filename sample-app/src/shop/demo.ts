import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { OrdersService } from './orders.service.js';

export const DEMO_INTERVAL_MS = Symbol('demo interval');

/**
 * Demo mode (`DEMO=1 npm start`): places an order every interval for one of twenty customers, one in ten with a card
 * that is declined, so the dashboard has something to show on first look: throughput, retries, dead letters.
 */
@Injectable()
export class DemoTrickle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Demo');
  private timer: NodeJS.Timeout | null = null;
  private placed = 0;

  constructor(
    @Inject(DEMO_INTERVAL_MS) private readonly intervalMs: number | null,
    private readonly orders: OrdersService,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.intervalMs) return;
    this.logger.log(`placing an order every ${this.intervalMs} ms, one in ten declined`);
    this.timer = setInterval(() => void this.placeOne(), this.intervalMs);
  }

  // before the queue drains: no demo order is placed while the app shuts down
  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async placeOne(): Promise<void> {
    const n = ++this.placed;
    try {
      await this.orders.place({
        customerId: `customer-${1 + Math.floor(Math.random() * 20)}`,
        totalCents: 500 + Math.floor(Math.random() * 20_000),
        card: n % 10 === 0 ? 'declined' : '4242',
      });
    } catch (err) {
      // the database away for a moment: the next tick tries again
      this.logger.warn(`demo order ${n} not placed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
