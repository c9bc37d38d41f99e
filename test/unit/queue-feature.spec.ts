// One declaration per queue (lib/nest/queue-feature.ts): a queue's settings come from one place.
import { oneDeclarationPerQueue } from '../../lib/nest/queue-feature.js';

const d = (queue: string, where: string, queueOptions: Record<string, unknown> = {}) => ({ queue, where, queueOptions });

describe('oneDeclarationPerQueue', () => {
  it('keeps one declaration per queue, the one that gives settings, in first-seen order', () => {
    const chosen = oneDeclarationPerQueue([
      d('a', 'handler a'),
      d('b', 'feature b', { retryLimit: 1 }),
      d('a', 'feature a', { retryLimit: 3 }),
    ]);
    expect(chosen).toEqual([d('a', 'feature a', { retryLimit: 3 }), d('b', 'feature b', { retryLimit: 1 })]);
  });

  it('accepts a queue declared alike in several places, however the settings are spelled', () => {
    const chosen = oneDeclarationPerQueue([
      d('a', 'one', { retryLimit: 3, retryBackoff: true }),
      d('a', 'two', { retryBackoff: true, retryLimit: 3 }),
    ]);
    expect(chosen).toHaveLength(1);
  });

  it('refuses a queue declared differently, naming every place that gives settings', () => {
    expect(() => oneDeclarationPerQueue([d('a', 'one', { retryLimit: 3 }), d('a', 'bare'), d('a', 'two', { retryLimit: 4 })])).toThrow(
      `queue "a" is declared with different settings by one and two`,
    );
  });
});
