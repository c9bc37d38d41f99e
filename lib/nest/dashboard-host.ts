// The dashboard's host, one per app: the engine's sampler, the page's assets, the open event streams, and the turn
// its own reads wait for (lib/nest/dashboard.ts's controller serves them).
import { readFile } from 'node:fs/promises';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { DashboardSampler, type SamplerSource } from '../core/dashboard/sampler.js';
import { SnapshotRedactor } from '../core/dashboard/redacted.js';
import { SnapshotEncoder } from '../core/dashboard/stream.js';
import type { DashboardSnapshot } from '../core/dashboard/model.js';
import { runtimeOf } from '../core/pg-queue.js';
import { operatorGate, type ReadGate } from '../core/http/read-gate.js';
import type { Redact } from '../core/http/redact.js';
import { QueueService } from './queue.service.js';

/** The `redact` option, for the host and the job view. */
export const REDACT = Symbol('pgqueue:dashboard-redact');

/** The engine's sampler and the page's assets, one per app. */
@Injectable()
export class DashboardHost implements OnModuleDestroy {
  readonly sampler: DashboardSampler;
  private readonly assets = new Map<string, Promise<string>>();

  /** The engine's statements and connections, as the sampler and the job view read them. */
  readonly source: SamplerSource;

  /** The snapshots as `redact` lets them be seen: what every route and stream sends. */
  private readonly redactor: SnapshotRedactor;

  constructor(
    readonly queue: QueueService,
    @Inject(REDACT) redact: { fn: Redact | undefined },
  ) {
    this.redactor = new SnapshotRedactor(redact.fn);
    this.source = {
      get statements() {
        return runtimeOf(queue).statements;
      },
      connect: () => runtimeOf(queue).connect(),
      get prepared() {
        return runtimeOf(queue).namesStatements;
      },
      lost: (err) => runtimeOf(queue).lostPreparedStatement(err),
    };
    this.sampler = new DashboardSampler(this.source);
  }

  get schema(): string {
    return runtimeOf(this.queue).config.schema;
  }

  /** Whether this instance keeps a stats series (persistQueueStats): a queue's page draws its charts from it. */
  get persisted(): boolean {
    return runtimeOf(this.queue).config.persistQueueStats;
  }

  /** The stream's events, serialised once per snapshot whatever the number of viewers. */
  readonly encoder = new SnapshotEncoder();

  /** Open event streams, ended when the app closes (an open stream would hold the server's close). */
  readonly streams = new Set<{ complete(): void }>();

  /** The latest snapshot while the sampler runs, else a sample read now (the last one may be hours old); redacted. */
  async snapshot(): Promise<DashboardSnapshot> {
    return this.view(this.sampler.live && this.sampler.snapshot ? this.sampler.snapshot : await this.sampler.sampleNow());
  }

  /** A snapshot of the sampler's as it may be seen (redact applied once per snapshot, whatever the viewers). */
  view(s: DashboardSnapshot): DashboardSnapshot {
    return this.redactor.view(s);
  }

  /** The turn a request's own reads wait for: a flood of job views never takes the workers' connections. */
  get reads(): ReadGate {
    const max = (runtimeOf(this.queue).connectionOptions as { max?: number }).max;
    return operatorGate(runtimeOf(this.queue), typeof max === 'number' ? max : 10);
  }

  /** A file of the page, read once: app.js and app.css (assets/), render.js (compiled beside page.js). */
  asset(name: 'app.js' | 'app.css' | 'render.js'): Promise<string> {
    let text = this.assets.get(name);
    if (!text) {
      const url = new URL(name === 'render.js' ? '../dashboard/render.js' : `../dashboard/assets/${name}`, import.meta.url);
      text = readFile(url, 'utf8');
      // a read that failed is tried again by the next request
      text.catch(() => this.assets.delete(name));
      this.assets.set(name, text);
    }
    return text;
  }

  async onModuleDestroy(): Promise<void> {
    for (const stream of this.streams) stream.complete();
    this.streams.clear();
    await this.sampler.stop();
  }
}
