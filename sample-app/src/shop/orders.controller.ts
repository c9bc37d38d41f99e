import { Body, Controller, Get, NotFoundException, Param, ParseIntPipe, Post } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { Shop } from './database.js';
import { OrdersService } from './orders.service.js';

@Controller('orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly shop: Shop,
  ) {}

  /** Places an order and sends its job in one transaction. 201 `{ orderId, jobId }`. */
  @Post()
  place(@Body() body: unknown) {
    return this.orders.place(body);
  }

  /** The order as the handlers left it: `pending`, then `paid` once its card was charged. */
  @Get(':id')
  async get(@Param('id', ParseIntPipe) id: number) {
    const { orders } = this.shop.tables;
    const [order] = await this.shop.db.select().from(orders).where(eq(orders.id, id));
    if (!order) throw new NotFoundException(`order ${id} not found`);
    return order;
  }
}
