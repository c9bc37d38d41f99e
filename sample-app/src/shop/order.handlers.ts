import { Injectable, Logger } from '@nestjs/common';
import { count, eq, sum } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { OnQueueEvent, QueueHandler, QueueService, type Job, type JobEvent } from 'nestjs-pgqueue';
import { Shop } from './database.js';
import { ChargeCard, OrderPlaced, RecomputeStats, SalesReport } from './jobs.js';

/** A card the charge refuses: the attempt fails, is retried, and the job ends in the dead-letter queue. */
export class PaymentDeclined extends Error {
  override name = 'PaymentDeclined';
}

/** The worker side of the shop: one handler per queue, each with its queue's policy. */
@Injectable()
export class OrderHandlers {
  private readonly logger = new Logger('Shop');

  constructor(
    private readonly queue: QueueService,
    private readonly shop: Shop,
  ) {}

  /**
   * A customer's orders one after another (key_strict_fifo): confirmed, then sent on to be charged. Transactional:
   * the charge is sent in the job's own transaction, so an attempt that is retried (a crash, a lost lease) never
   * leaves a second charge behind.
   */
  @QueueHandler(OrderPlaced, { concurrency: 5, transactional: true })
  async placed(job: Job<{ orderId: number; customerId: string }>) {
    const { orders } = this.shop.tables;
    const [order] = await drizzle(job.db!).select().from(orders).where(eq(orders.id, job.data.orderId));
    if (!order) return { skipped: `order ${job.data.orderId} is gone` };
    await this.queue.send(ChargeCard, { orderId: order.id, card: order.card, totalCents: order.totalCents }, { db: job.db });
    return { confirmed: order.id };
  }

  /** Runs in the job's transaction: the order is marked paid if, and only if, the job completes. */
  @QueueHandler(ChargeCard, { transactional: true, concurrency: 5 })
  async charge(job: Job<{ orderId: number; card: string; totalCents: number }>) {
    if (job.data.card === 'declined') throw new PaymentDeclined(`card declined for order ${job.data.orderId}`);
    const { orders } = this.shop.tables;
    await drizzle(job.db!).update(orders).set({ status: 'paid' }).where(eq(orders.id, job.data.orderId));
    return { charged: job.data.totalCents };
  }

  /**
   * Once a charge has committed, the figures are recomputed. The queue is exclusive: while one recompute waits or
   * runs, this send is refused (null), so a burst of orders costs one recompute; an order paid while one runs waits
   * for the next order's (`stately` would queue one more instead).
   */
  @OnQueueEvent('completed', { queue: ChargeCard })
  async charged(_event: JobEvent): Promise<void> {
    await this.queue.send(RecomputeStats, {});
  }

  @QueueHandler(RecomputeStats)
  async recompute() {
    const { orders } = this.shop.tables;
    const [stats] = await this.shop.db
      .select({ paid: count(), revenueCents: sum(orders.totalCents) })
      .from(orders)
      .where(eq(orders.status, 'paid'));
    return { paid: stats!.paid, revenueCents: Number(stats!.revenueCents ?? 0) };
  }

  /** Every minute, at second 0, on one instance of the cluster (the schedule is kept in step at boot). */
  @QueueHandler(SalesReport, { schedule: '0 * * * * *' })
  async report() {
    const { orders } = this.shop.tables;
    const rows = await this.shop.db.select({ status: orders.status, n: count() }).from(orders).groupBy(orders.status);
    this.logger.log(`sales report: ${rows.map((r) => `${r.n} ${r.status}`).join(', ') || 'no orders yet'}`);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }
}
