// The `tracing` option (lib/core/tracing.ts): true needs @opentelemetry/api, false never loads it, unset traces when
// it can be imported.
import { InvalidOptionError } from '../../lib/core/errors.js';
import { loadTracing, Tracing } from '../../lib/core/tracing.js';

const missing = () =>
  Promise.reject(Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' }));

describe('loadTracing', () => {
  it('refuses tracing: true without the API, naming the option and what to install', async () => {
    const err = await loadTracing(true, missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as Error).message).toMatch(/tracing.*@opentelemetry\/api/);
  });

  it('turns tracing off, quietly, when the option is unset and the API is missing', async () => {
    await expect(loadTracing(undefined, missing)).resolves.toBeNull();
  });

  it('never imports the API with tracing: false', async () => {
    let imported = false;
    const api = () => ((imported = true), import('@opentelemetry/api'));
    await expect(loadTracing(false, api)).resolves.toBeNull();
    expect(imported).toBe(false);
  });

  it('traces through the API when it is installed', async () => {
    await expect(loadTracing(undefined)).resolves.toBeInstanceOf(Tracing);
    await expect(loadTracing(true)).resolves.toBeInstanceOf(Tracing);
  });
});

describe('Tracing without an SDK registered', () => {
  it('calls straight through: no span, no stored context, the handler’s own value', async () => {
    const tracing = (await loadTracing(true))!;
    const job = {
      id: '1',
      queue: 'q',
      retry_count: 0,
      trace_context: '{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}',
    };
    expect(tracing.attempt(job, () => 5)).toBe(5);
    expect(tracing.batch('q', [job], () => 6)).toBe(6);
    let stored: string | null | undefined;
    await tracing.send('q', 1, (context) => Promise.resolve((stored = context)));
    expect(stored).toBeNull();
  });
});
