// OpenTelemetry tracing, through `@opentelemetry/api` when the app has it (an optional peer): a span for each send,
// one for each attempt (or batch), and the sender's trace context stored in the job so that the attempt's span
// links to the request that sent it. Without an SDK registered, the API's tracer makes no span that records and
// the job stores no context, so the queue pays only the calls into the API.
import { InvalidOptionError } from './errors.js';
import { packageVersion } from './version.js';

// The part of @opentelemetry/api used here, written out so that the package's types do not need it installed.
interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}
interface Span {
  spanContext(): SpanContext;
  setAttribute(key: string, value: string | number | boolean): unknown;
  recordException(exception: unknown): void;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}
type Context = object;
type Attributes = Record<string, string | number | boolean>;
interface Tracer {
  startSpan(name: string, options: { kind: number; attributes: Attributes; links?: { context: SpanContext }[] }, context?: Context): Span;
}
interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): Tracer;
    getTracerProvider(): unknown;
    setSpan(context: Context, span: Span): Context;
    getSpanContext(context: Context): SpanContext | undefined;
    isSpanContextValid(spanContext: SpanContext): boolean;
  };
  context: { active(): Context; with<R>(context: Context, fn: () => R): R };
  propagation: {
    inject(context: Context, carrier: Record<string, string>): void;
    extract(context: Context, carrier: Record<string, string>): Context;
  };
  ROOT_CONTEXT: Context;
  ProxyTracerProvider: new () => { getDelegate(): unknown };
  SpanKind: { PRODUCER: number; CONSUMER: number };
  SpanStatusCode: { ERROR: number };
}

/** The attribute naming the attempt: 1 for a job's first run, and one more for each retry. */
export const ATTEMPT_ATTRIBUTE = 'pgqueue.job.attempt';

/** What the tracing needs of a claimed job. */
export interface TracedJob {
  id: string;
  queue: string;
  retry_count: number;
  trace_context: string | null;
}

/** Spans around sends and attempts; made by loadTracing when tracing is on and the API is installed. */
export class Tracing {
  private readonly tracer: Tracer;
  /** The API's no-op provider, which its global provider delegates to until an SDK registers one. */
  private readonly noop: unknown;

  constructor(private readonly api: OtelApi) {
    this.tracer = api.trace.getTracer('nestjs-pgqueue', packageVersion());
    this.noop = new api.ProxyTracerProvider().getDelegate();
  }

  /**
   * Whether an SDK is registered, asked at each call (an app may register it after the queue started). Without
   * one every span is a no-op: the calls go straight through, as making the no-op spans cost 0.5 µs an attempt
   * and 1 µs a send (`node bench/tracing-overhead.mjs`; docs/performance.md).
   */
  private get sdk(): boolean {
    const provider = this.api.trace.getTracerProvider();
    return !(provider instanceof this.api.ProxyTracerProvider) || provider.getDelegate() !== this.noop;
  }

  /**
   * Runs an insert of `count` jobs into `queue` inside a producer span, made the active context meanwhile (so a
   * pg instrumentation's span of the INSERT is its child). `insert` gets the trace context to store in each job:
   * the span's, as W3C headers in JSON, or null when no span records and none is being propagated.
   */
  send<T>(queue: string, count: number, insert: (context: string | null) => Promise<T>): Promise<T> {
    return this.sdk ? this.traceSend(queue, count, insert) : insert(null);
  }

  private async traceSend<T>(queue: string, count: number, insert: (context: string | null) => Promise<T>): Promise<T> {
    const { api } = this;
    const attributes: Attributes = {
      'messaging.system': 'pgqueue',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': queue,
    };
    if (count !== 1) attributes['messaging.batch.message_count'] = count;
    const span = this.tracer.startSpan(`send ${queue}`, { kind: api.SpanKind.PRODUCER, attributes });
    const active = api.trace.setSpan(api.context.active(), span);
    let stored: string | null = null;
    if (api.trace.isSpanContextValid(span.spanContext())) {
      const carrier: Record<string, string> = {};
      api.propagation.inject(active, carrier);
      if (Object.keys(carrier).length > 0) stored = JSON.stringify(carrier);
    }
    try {
      const result = await api.context.with(active, () => insert(stored));
      if (count === 1 && Array.isArray(result) && typeof result[0] === 'string') span.setAttribute('messaging.message.id', result[0]);
      return result;
    } catch (err) {
      this.failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /**
   * Runs one attempt's handler inside a consumer span, linked to the span that sent the job; the handler's own
   * spans are its children. A throw is recorded on the span and goes on.
   */
  attempt<T>(job: TracedJob, run: () => T): T | Promise<Awaited<T>> {
    return this.sdk ? this.consume(job.queue, [job], run) : run();
  }

  /** Runs a batch handler inside one consumer span, linked to the span that sent each of its jobs. */
  batch<T>(queue: string, jobs: readonly TracedJob[], run: () => T): T | Promise<Awaited<T>> {
    return this.sdk ? this.consume(queue, jobs, run) : run();
  }

  private async consume<T>(queue: string, jobs: readonly TracedJob[], run: () => T): Promise<Awaited<T>> {
    const { api } = this;
    const attributes: Attributes = {
      'messaging.system': 'pgqueue',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': queue,
    };
    if (jobs.length === 1) {
      attributes['messaging.message.id'] = jobs[0]!.id;
      attributes[ATTEMPT_ATTRIBUTE] = jobs[0]!.retry_count + 1;
    } else {
      attributes['messaging.batch.message_count'] = jobs.length;
    }
    const links: { context: SpanContext }[] = [];
    for (const job of jobs) {
      const sender = this.senderOf(job.trace_context);
      if (sender) links.push({ context: sender });
    }
    // a root of its own: the attempt runs later than the request that sent it, maybe many times
    const span = this.tracer.startSpan(`process ${queue}`, { kind: api.SpanKind.CONSUMER, attributes, links }, api.ROOT_CONTEXT);
    try {
      return await api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), run);
    } catch (err) {
      this.failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** The span context a job's stored trace context names, or null (none stored, or not one we can read). */
  private senderOf(stored: string | null): SpanContext | null {
    if (!stored) return null;
    let carrier: unknown;
    try {
      carrier = JSON.parse(stored);
    } catch {
      return null;
    }
    if (typeof carrier !== 'object' || carrier === null) return null;
    const found = this.api.trace.getSpanContext(this.api.propagation.extract(this.api.ROOT_CONTEXT, carrier as Record<string, string>));
    return found && this.api.trace.isSpanContextValid(found) ? found : null;
  }

  private failed(span: Span, err: unknown): void {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * The module option `tracing`: `true` needs `@opentelemetry/api` and refuses to start without it, `false` turns
 * tracing off, and unset traces when the API can be imported.
 */
export async function loadTracing(
  option: boolean | undefined,
  importApi: () => Promise<unknown> = () => import('@opentelemetry/api'),
): Promise<Tracing | null> {
  if (option === false) return null;
  let api: OtelApi;
  try {
    api = (await importApi()) as OtelApi;
  } catch (err) {
    if (option === true)
      throw Object.assign(
        new InvalidOptionError('tracing', 'true only with @opentelemetry/api installed (npm install @opentelemetry/api)', true),
        {
          cause: err,
        },
      );
    return null;
  }
  return new Tracing(api);
}
