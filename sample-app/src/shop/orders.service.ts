import { BadRequestException, Injectable } from '@nestjs/common';
import { QueueService } from 'nestjs-pgqueue';
import { Shop } from './database.js';
import { OrderPlaced } from './jobs.js';

/** What POST /orders takes. */
export interface NewOrder {
  customerId: string;
  totalCents: number;
  /** A card number; `declined` is a card the charge always refuses (the demo's failures). */
  card?: string;
}

/** Places orders: the order's row and its job commit together, or neither does. */
@Injectable()
export class OrdersService {
  constructor(
    private readonly queue: QueueService,
    private readonly shop: Shop,
  ) {}

  async place(input: unknown): Promise<{ orderId: number; jobId: string | null }> {
    const order = parseOrder(input);
    const { orders } = this.shop.tables;
    return this.shop.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(orders)
        .values({ customerId: order.customerId, totalCents: order.totalCents, card: order.card ?? '4242' })
        .returning({ id: orders.id });
      // in the same transaction: if the insert rolls back, no job was ever sent (and none runs before the commit)
      const jobId = await this.queue.send(
        OrderPlaced,
        { orderId: row!.id, customerId: order.customerId },
        { db: tx, singletonKey: order.customerId },
      );
      return { orderId: row!.id, jobId };
    });
  }
}

function parseOrder(input: unknown): NewOrder {
  const o = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (typeof o.customerId !== 'string' || !/^[\w.-]{1,64}$/.test(o.customerId))
    throw new BadRequestException(`customerId must be 1 to 64 letters, digits, '.', '_' or '-', got ${JSON.stringify(o.customerId)}`);
  if (!Number.isInteger(o.totalCents) || (o.totalCents as number) < 1 || (o.totalCents as number) > 10_000_000)
    throw new BadRequestException(`totalCents must be an integer from 1 to 10000000, got ${JSON.stringify(o.totalCents)}`);
  if (o.card !== undefined && (typeof o.card !== 'string' || o.card.length > 32))
    throw new BadRequestException(`card must be a string of up to 32 characters, got ${JSON.stringify(o.card)}`);
  return { customerId: o.customerId, totalCents: o.totalCents as number, card: o.card };
}
