import { defineJob } from 'nestjs-pgqueue';

// The shop's jobs, declared once: send() and the handlers are checked against each payload's type, and
// ShopModule declares the queues with these settings (QueueModule.forFeature).

/** Each customer's orders, strictly one after another in the order they were placed (key: the customer). */
export const OrderPlaced = defineJob<{ orderId: number; customerId: string }>('order-placed', {
  policy: 'key_strict_fifo',
  retryLimit: 5,
  retryBackoff: true,
});

/** Charging the card: retried twice, then copied to the dead-letter queue for a person to look at. */
export const ChargeCard = defineJob<{ orderId: number; card: string; totalCents: number }>('charge-card', {
  retryLimit: 2,
  retryDelay: 1,
  deadLetter: 'charge-card.dead',
});

/** Where cards that could not be charged end up (no handler: the dashboard and the admin API show them). */
export const ChargeFailed = defineJob<{ orderId: number; card: string; totalCents: number }>('charge-card.dead', {
  retentionSeconds: 7 * 86_400,
});

/** Recomputing the shop's figures: `exclusive`, so a burst of orders queues one recompute, not one per order. */
export const RecomputeStats = defineJob<Record<string, never>>('recompute-stats', { policy: 'exclusive' });

/** The sales report: `singleton`, so two instances never build it at once; fired by a cron schedule. */
export const SalesReport = defineJob<Record<string, never>>('sales-report', { policy: 'singleton' });
