// OpenTelemetry tracing, through `@opentelemetry/api` when the app has it (an optional peer): a span for each send,
// one for each attempt (or batch), and the sender's trace context stored in the job so that the attempt's span
// links to the request that sent it. Without an SDK registered, the API's tracer makes no span that records and
// the job stores no context, so the queue pays only the calls into the API.
import { InvalidOptionError } from '../errors.js';
import { packageVersion } from './version.js';

// The part of @opentelemetry/api used here, written out so that the package's types do not need it installed.
interface TraceState {
  serialize(): string;
}
interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: TraceState;
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
    isSpanContextValid(spanContext: SpanContext): boolean;
  };
  context: { active(): Context; with<R>(context: Context, fn: () => R): R };
  /** Since API 1.1. */
  createTraceState?: (raw: string) => TraceState;
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
   * Runs `fn` outside any caller's trace: timers it sets (the scheduler's, maintenance's) keep no request's context,
   * so a cron job's send span does not join the request that happened to start the engine.
   */
  detached<T>(fn: () => T): T {
    return this.within(this.api.ROOT_CONTEXT, fn);
  }

  /**
   * Runs an insert of `count` jobs into `queue` inside a producer span, made the active context meanwhile (so a
   * pg instrumentation's span of the INSERT is its child). `insert` gets the trace context to store in each job:
   * the span's `traceparent` (and `tracestate`) as JSON, or null when there is no valid span.
   */
  send<T>(queue: string, count: number, insert: (context: string | null) => Promise<T>): Promise<T> {
    return this.sdk ? this.traceSend(queue, count, insert) : insert(null);
  }

  // Every call into the API below is guarded: a tracer, a span processor or a context manager that throws costs
  // the span, never the send or the attempt (an insert that committed must not reject; a handler must run once).
  private async traceSend<T>(queue: string, count: number, insert: (context: string | null) => Promise<T>): Promise<T> {
    const { api } = this;
    const attributes: Attributes = {
      'messaging.system': 'pgqueue',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': queue,
    };
    if (count !== 1) attributes['messaging.batch.message_count'] = count;
    const span = safely(() => this.tracer.startSpan(`send ${queue}`, { kind: api.SpanKind.PRODUCER, attributes }));
    if (!span) return insert(null);
    const stored = safely(() => this.headersOf(span.spanContext()));
    try {
      const result = await this.within(
        safely(() => api.trace.setSpan(api.context.active(), span)),
        () => insert(stored),
      );
      if (count === 1 && Array.isArray(result) && typeof result[0] === 'string')
        safely(() => span.setAttribute('messaging.message.id', result[0] as string));
      return result;
    } catch (err) {
      safely(() => this.failed(span, err));
      throw err;
    } finally {
      safely(() => span.end());
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
    const span = safely(() => this.startConsumer(queue, jobs));
    if (!span) return await run();
    try {
      return await this.within(
        safely(() => api.trace.setSpan(api.ROOT_CONTEXT, span)),
        run,
      );
    } catch (err) {
      safely(() => this.failed(span, err));
      throw err;
    } finally {
      safely(() => span.end());
    }
  }

  private startConsumer(queue: string, jobs: readonly TracedJob[]): Span {
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
    return this.tracer.startSpan(`process ${queue}`, { kind: this.api.SpanKind.CONSUMER, attributes, links }, this.api.ROOT_CONTEXT);
  }

  /** Runs `run` in `context`; outside it when there is none, or when the context manager fails before calling it. */
  private within<T>(context: Context | null, run: () => T): T {
    if (!context) return run();
    let called = false;
    try {
      return this.api.context.with(context, () => {
        called = true;
        return run();
      });
    } catch (err) {
      if (called) throw err;
      return run();
    }
  }

  /**
   * What a job stores of its send's span: W3C `traceparent` (and `tracestate`) written from the span itself, not
   * through the app's propagators, so that no baggage (which may carry user data) is stored with every job.
   */
  private headersOf(context: SpanContext): string | null {
    if (!this.api.trace.isSpanContextValid(context)) return null;
    const headers: Record<string, string> = {
      traceparent: `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`,
    };
    const state = context.traceState?.serialize();
    if (state) headers.tracestate = state;
    return JSON.stringify(headers);
  }

  /** The span context a job's stored headers name, or null (none stored, or not one we can read). */
  private senderOf(stored: string | null): SpanContext | null {
    if (!stored) return null;
    const headers = safely(() => JSON.parse(stored) as unknown);
    if (typeof headers !== 'object' || headers === null) return null;
    const { traceparent, tracestate } = headers as { traceparent?: unknown; tracestate?: unknown };
    const m = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent) : null;
    if (!m) return null;
    const context: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
    if (typeof tracestate === 'string' && this.api.createTraceState) {
      const state = safely(() => this.api.createTraceState!(tracestate));
      if (state) context.traceState = state;
    }
    return this.api.trace.isSpanContextValid(context) ? context : null;
  }

  private failed(span: Span, err: unknown): void {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
}

/** W3C traceparent, version 00: trace id, span id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** What `fn` returns, or null when it throws. */
function safely<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
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
