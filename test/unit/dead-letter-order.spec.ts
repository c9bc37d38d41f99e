import { QueueError } from '../../lib/core/errors.js';
import { inDeadLetterOrder } from '../../lib/nest/queue-handler.explorer.js';

const handler = (queue: string, deadLetter?: string) => ({ queue, where: `H.${queue}`, queueOptions: deadLetter ? { deadLetter } : {} });

describe('the order @QueueHandler queues are made in', () => {
  it('puts a dead-letter queue another handler declares before the queue that names it, whatever the methods order', () => {
    const order = inDeadLetterOrder([handler('orders', 'orders.dlq'), handler('mail'), handler('orders.dlq', 'last'), handler('last')]);
    const at = (q: string) => order.findIndex((h) => h.queue === q);
    expect(order).toHaveLength(4);
    expect(at('last')).toBeLessThan(at('orders.dlq'));
    expect(at('orders.dlq')).toBeLessThan(at('orders'));
  });

  it('keeps the given order where nothing depends, and leaves a target no handler declares to the database', () => {
    expect(inDeadLetterOrder([handler('b'), handler('a', 'elsewhere'), handler('c')]).map((h) => h.queue)).toEqual(['b', 'a', 'c']);
  });

  it('refuses a queue that names itself as its dead-letter queue, a loop of one', () => {
    expect(() => inDeadLetterOrder([handler('a', 'a')])).toThrow('H.a ("a") → H.a ("a")');
  });

  it('refuses a loop of deadLetter options, naming its handlers', () => {
    expect(() => inDeadLetterOrder([handler('a', 'b'), handler('b', 'a')])).toThrow(QueueError);
    expect(() => inDeadLetterOrder([handler('a', 'b'), handler('b', 'a')])).toThrow('H.a ("a") → H.b ("b") → H.a ("a")');
  });
});
