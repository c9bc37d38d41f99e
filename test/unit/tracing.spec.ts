// The `tracing` option (lib/core/runtime/tracing.ts): true needs @opentelemetry/api, false never loads it, unset traces when
// it can be imported.
import { InvalidOptionError } from '../../lib/core/errors.js';
import { loadTracing, Tracing } from '../../lib/core/runtime/tracing.js';

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

describe('Tracing when the SDK misbehaves', () => {
  /** An API whose SDK throws where `where` says: an app's span processor or context manager gone wrong. */
  const failingApi = (where: 'start' | 'end' | 'with') => {
    class Proxy {
      getDelegate() {
        return null;
      }
    }
    const span = {
      spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 }),
      setAttribute: () => undefined,
      recordException: () => undefined,
      setStatus: () => undefined,
      end: () => {
        if (where === 'end') throw new Error('processor failed');
      },
    };
    return {
      trace: {
        getTracer: () => ({
          startSpan: () => {
            if (where === 'start') throw new Error('sampler failed');
            return span;
          },
        }),
        getTracerProvider: () => ({}), // not the API's proxy: an SDK is registered
        setSpan: (c: object) => c,
        isSpanContextValid: () => true,
      },
      context: {
        active: () => ({}),
        with: (_c: object, fn: () => unknown) => {
          if (where === 'with') throw new Error('context manager failed');
          return fn();
        },
      },
      ROOT_CONTEXT: {},
      ProxyTracerProvider: Proxy,
      SpanKind: { PRODUCER: 3, CONSUMER: 4 },
      SpanStatusCode: { ERROR: 2 },
    };
  };
  const job = { id: '1', queue: 'q', retry_count: 0, trace_context: null };

  it.each(['start', 'end', 'with'] as const)('costs the span, never the send or the attempt, when %s throws', async (where) => {
    const tracing = new Tracing(failingApi(where) as never);
    let runs = 0;
    await expect(tracing.attempt(job, () => (runs++, 'out'))).resolves.toBe('out');
    await expect(tracing.send('q', 1, () => (runs++, Promise.resolve(['7'])))).resolves.toEqual(['7']);
    expect(runs).toBe(2);
    // a handler's own throw still goes on as it is
    const err = new Error('handler failed');
    await expect(
      tracing.attempt(job, () => {
        throw err;
      }),
    ).rejects.toBe(err);
  });
});
