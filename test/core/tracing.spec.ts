// OpenTelemetry tracing with the SDK's in-memory exporter: a send is a producer span, child of the request that
// made it, whose context the job stores; each attempt is a consumer span that links to it, with the queue, the
// job's id and the attempt as attributes; a failed attempt's span records the error. Without an SDK, or with
// `tracing: false`, nothing is stored.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ATTEMPT_ATTRIBUTE } from '../../lib/core/runtime/tracing.js';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('tracing');
const exporter = new InMemorySpanExporter();
const manager = new AsyncLocalStorageContextManager();

afterEach(() => f.closeMade());
afterAll(async () => {
  await f.cleanup();
  trace.disable();
  propagation.disable();
  context.disable();
});

const storedContext = async (id: string) =>
  (await f.pool.query<{ trace_context: string | null }>(`SELECT trace_context FROM "${f.schema}".jobs WHERE id = $1`, [id])).rows[0]!
    .trace_context;
const spans = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('tracing', () => {
  it('stores no trace context while no SDK is registered', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('tr.none');
    const id = (await q.send('tr.none', {}))!;
    expect(await storedContext(id)).toBeNull();
  });

  describe('with an SDK registered', () => {
    beforeAll(() => {
      context.setGlobalContextManager(manager.enable());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    });
    beforeEach(() => exporter.reset());

    it('links each attempt’s span to the send, child of the request that sent the job', async () => {
      const q = f.create({ supervise: false, logJobFailures: false });
      await q.createQueue('tr.work', { retryLimit: 1, deadLetter: null });
      const tracer = trace.getTracer('test');
      const [ok, bad] = await tracer.startActiveSpan('POST /orders', async (request) => {
        try {
          return [(await q.send('tr.work', { fail: false }))!, (await q.send('tr.work', { fail: true }))!] as const;
        } finally {
          request.end();
        }
      });
      await q.work<{ fail: boolean }>('tr.work', { pollingIntervalSeconds: 0.1 }, (job) =>
        tracer.startActiveSpan('charge card', (inner) => {
          inner.end();
          if (job.data.fail) throw new Error('card declined');
          return 'charged';
        }),
      );
      await until(() => spans('process tr.work').length === 3, 'one attempt of the good job and two of the bad one');
      const [request] = spans('POST /orders');
      const sends = spans('send tr.work');
      expect(sends).toHaveLength(2);
      for (const send of sends) {
        expect(send.kind).toBe(SpanKind.PRODUCER);
        expect(send.spanContext().traceId).toBe(request!.spanContext().traceId);
        expect(parentOf(send)).toBe(request!.spanContext().spanId);
      }
      const sendOf = (id: string) => sends.find((s) => s.attributes['messaging.message.id'] === id)!;
      expect(sendOf(ok).attributes).toMatchObject({ 'messaging.system': 'pgqueue', 'messaging.destination.name': 'tr.work' });
      // the job stores the send span's context, as W3C headers
      const stored = JSON.parse((await storedContext(ok))!) as { traceparent: string };
      expect(stored.traceparent).toContain(sendOf(ok).spanContext().spanId);

      const attempts = spans('process tr.work');
      const ofJob = (id: string) => attempts.filter((s) => s.attributes['messaging.message.id'] === id);
      const [good] = ofJob(ok);
      expect(good!.kind).toBe(SpanKind.CONSUMER);
      expect(good!.links.map((l) => l.context.spanId)).toEqual([sendOf(ok).spanContext().spanId]);
      expect(good!.attributes).toMatchObject({ 'messaging.destination.name': 'tr.work', [ATTEMPT_ATTRIBUTE]: 1 });
      expect(good!.status.code).not.toBe(SpanStatusCode.ERROR);
      // a root of its own (the attempt runs later than the request), with the handler's spans inside it
      expect(parentOf(good!)).toBeUndefined();
      const inner = spans('charge card').filter((s) => parentOf(s) === good!.spanContext().spanId);
      expect(inner).toHaveLength(1);

      const failures = ofJob(bad).sort((a, b) => Number(a.attributes[ATTEMPT_ATTRIBUTE]) - Number(b.attributes[ATTEMPT_ATTRIBUTE]));
      expect(failures.map((s) => s.attributes[ATTEMPT_ATTRIBUTE])).toEqual([1, 2]);
      for (const span of failures) {
        expect(span.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'card declined' });
        expect(span.events.map((e) => e.name)).toContain('exception');
        expect(span.links.map((l) => l.context.spanId)).toEqual([sendOf(bad).spanContext().spanId]);
      }
    });

    it('gives an insert of many jobs one span, and a batch call one span linked to each job’s send', async () => {
      const q = f.create({ supervise: false });
      await q.createQueue('tr.batch');
      const ids = await q.insert('tr.batch', [{ data: 1 }, { data: 2 }, { data: 3 }]);
      const [send] = spans('send tr.batch');
      expect(send!.attributes['messaging.batch.message_count']).toBe(3);
      await q.work('tr.batch', { batch: true, batchSize: 3, pollingIntervalSeconds: 0.1 }, () => 'ok');
      await until(async () => (await q.findJobs('tr.batch', { state: 'completed' })).jobs.length === 3, 'the batch completes');
      const calls = spans('process tr.batch');
      const linked = calls.flatMap((s) => s.links.map((l) => l.context.spanId));
      expect(linked).toEqual(ids.map(() => send!.spanContext().spanId));
      expect(calls.reduce((n, s) => n + ((s.attributes['messaging.batch.message_count'] as number | undefined) ?? 1), 0)).toBe(3);
    });

    it('gives a publish one span, named for its event, whose context every job it made stores', async () => {
      const q = f.create({ supervise: false });
      await q.createQueue('tr.pub.plain');
      await q.createQueue('tr.pub.part', { partition: true });
      await q.subscribe('tr.event', 'tr.pub.plain');
      await q.subscribe('tr.event', 'tr.pub.part');
      const made = await q.publish('tr.event', {});
      expect(made).toHaveLength(2);
      const [send] = spans('send tr.event');
      expect(send!.attributes).toMatchObject({ 'messaging.destination.name': 'tr.event' });
      for (const { id } of made) {
        const stored = JSON.parse((await storedContext(id))!) as { traceparent: string };
        expect(stored.traceparent).toContain(send!.spanContext().spanId);
      }
    });

    it('carries the trace context into a dead-letter copy', async () => {
      const q = f.create({ supervise: false, logJobFailures: false });
      await q.createQueue('tr.dlq');
      await q.createQueue('tr.dies', { retryLimit: 0, deadLetter: 'tr.dlq' });
      const id = (await q.send('tr.dies', {}))!;
      await q.work('tr.dies', { pollingIntervalSeconds: 0.1 }, () => {
        throw new Error('gone');
      });
      const copy = await until(async () => (await q.findJobs('tr.dlq')).jobs[0], 'the dead-letter copy');
      expect(await storedContext(copy.id)).toBe(await storedContext(id));
      expect(await storedContext(id)).not.toBeNull();
    });

    it('makes no span and stores nothing with tracing: false', async () => {
      const q = f.create({ supervise: false, tracing: false });
      await q.createQueue('tr.off');
      const id = (await q.send('tr.off', {}))!;
      await q.work('tr.off', { pollingIntervalSeconds: 0.1 }, () => 'ok');
      await until(async () => (await q.getJobById('tr.off', id))?.state === 'completed', 'the job completes');
      expect(await storedContext(id)).toBeNull();
      expect(exporter.getFinishedSpans().filter((s) => s.name.endsWith('tr.off'))).toEqual([]);
    });
  });
});
