// The dashboard inside the user's Nest app: QueueDashboardModule.forRoot({ path, guards }) mounts a read-only page
// at `path`, its assets, and a Server-Sent Events stream that every open page shares (one sampler per instance:
// lib/core/dashboard/sampler.ts). GET routes only; every response carries a Content-Security-Policy without
// 'unsafe-inline' and X-Frame-Options DENY, and a request from another site's page is refused before any work. It is
// never mounted open by accident: without guards it refuses to start, unless `localOnly: true` asks for this host
// only (never in production). Every job's data, output and error goes through `redact` before it leaves.
import { readFile } from 'node:fs/promises';
import {
  Controller,
  Get,
  Header,
  Inject,
  Injectable,
  Optional,
  Module,
  Param,
  Req,
  Res,
  ServiceUnavailableException,
  Sse,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type MessageEvent,
  type MiddlewareConsumer,
  type NestModule,
  type OnModuleDestroy,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import { DashboardSampler, type SamplerSource } from '../core/dashboard/sampler.js';
import { SnapshotRedactor } from '../core/dashboard/redacted.js';
import { SnapshotEncoder } from '../core/dashboard/stream.js';
import type { DashboardSnapshot } from '../core/dashboard/model.js';
import { InvalidOptionError } from '../core/errors.js';
import { runtimeOf } from '../core/pg-queue.js';
import { readJobView, type JobView } from '../core/dashboard/job-view.js';
import { withDeadline } from '../core/runtime/deadline.js';
import { publicError } from '../core/http/public-error.js';
import { operatorGate, type ReadGate } from '../core/http/read-gate.js';
import { redactOption, type Redact } from '../core/http/redact.js';
import { packageVersion } from '../core/runtime/version.js';
import { renderJobPage, renderMissingJobPage, renderUnreadableJobPage } from '../dashboard/job-page.js';
import { renderPage } from '../dashboard/page.js';
import { headersMiddleware, knownKeys, MOUNTED_CONTROLLER, routePath, SameOriginOnly } from './mount.js';
import { QueueService } from './queue.service.js';

export type { Redact, RedactedError } from '../core/http/redact.js';

export interface QueueDashboardOptions {
  /** The path the dashboard is served at (default `/queues`). */
  path?: string;
  /**
   * Nest guards every route of the dashboard runs, as classes (made in this module: their dependencies must be global
   * providers) or instances. Required, unless `localOnly: true`: the dashboard shows every job's data and errors.
   */
  guards?: (Type<CanActivate> | CanActivate)[];
  /**
   * Answer only requests from this host that came through no proxy (no Forwarded, X-Forwarded-*, X-Real-IP or Via
   * header), before any guard: for a dashboard on a developer's machine. Refused when NODE_ENV is `production`: a
   * proxy on the same host that adds no forwarding header (nginx's plain `proxy_pass`) cannot be told from a local
   * client.
   */
  localOnly?: boolean;
  /**
   * What may be shown of a job, wherever the dashboard shows one (the job view, the feed's and the problems' error
   * messages): called synchronously with a copy of the job, its answer's `data` and `output` are shown in their place
   * (a field it leaves out is not shown; a throw hides all), and its `lastError`, if it has one, in place of the stored
   * error's name, message and stack (null hides them). The feed and problems know a job's id, queue and error only:
   * there `job.data` and `job.output` are undefined. Without it, all is shown as stored. An async function is refused.
   */
  redact?: Redact;
}

/** How long a job view waits for its turn and its read before it answers 503. */
const JOB_VIEW_DEADLINE_MS = 10_000;

/** Event streams one app serves at once; the next page is answered 503 (it falls back to reloading). */
export const MAX_EVENT_STREAMS = 100;

/**
 * Characters of events that may wait for a viewer that does not read them (its socket's buffers full) before its
 * stream is dropped; its page reconnects and starts again from a whole snapshot.
 */
export const MAX_PENDING_EVENT_CHARS = 1024 * 1024;

/** The security headers of every response of the dashboard. */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

interface HttpRequest {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string };
  raw?: { socket?: { remoteAddress?: string } };
}

/** An address of this host: IPv4 127/8, IPv6 ::1, or either mapped. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** A Host header that names this host: localhost, 127/8 or [::1], with any port. */
export function isLocalHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Headers by which a proxy says it forwarded a request. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via'];

/**
 * The guard of `localOnly`: this host only. A request that came through a proxy (which may well run on
 * this host) says so in its headers and is refused, so that a proxy does not open the dashboard to the network; a
 * Host that is not this host's name (a page elsewhere whose name was rebound to 127.0.0.1) is refused too. A proxy
 * that adds no forwarding header cannot be told from a local client: behind one, configure guards.
 */
@Injectable()
export class LoopbackOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const proxied = PROXY_HEADERS.some((h) => req.headers[h] !== undefined);
    const host = req.headers.host;
    return (
      !proxied &&
      isLocalHost(typeof host === 'string' ? host : undefined) &&
      isLoopback(req.socket?.remoteAddress ?? req.raw?.socket?.remoteAddress)
    );
  }
}

/** Sets DASHBOARD_HEADERS on every response of the dashboard's routes, a guard's refusal included. */
const DashboardHeaders = headersMiddleware(DASHBOARD_HEADERS);

/** The `localOnly` option, for the module's check at start. */
const LOCAL_ONLY = Symbol('pgqueue:dashboard-local-only');

/** localOnly's refusal in production: a proxy on this host that adds no forwarding header looks local. */
function refuseLocalOnlyInProduction(): void {
  if (process.env.NODE_ENV === 'production')
    throw new InvalidOptionError(
      'localOnly',
      'absent when NODE_ENV is production: give guards (a proxy on this host without forwarding headers looks local)',
      true,
    );
}

/** The `redact` option, for the host and the job view. */
const REDACT = Symbol('pgqueue:dashboard-redact');

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
    private readonly queue: QueueService,
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

/** The request's path without its query, and without a trailing slash. */
function pathOf(req: { originalUrl?: string; url: string }): string {
  return (req.originalUrl ?? req.url).split('?')[0]!.replace(/\/+$/, '');
}

/** The dashboard's controller for `path`, behind `guards`. */
function dashboardController(path: string, guards: (Type<CanActivate> | CanActivate)[]): Type<unknown> {
  @Controller(path)
  @UseGuards(...guards)
  class QueueDashboardController {
    constructor(
      private readonly host: DashboardHost,
      @Inject(REDACT) private readonly redact: { fn: Redact | undefined },
    ) {}

    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    async page(@Req() req: { originalUrl?: string; url: string }): Promise<string> {
      // the page's own path, so that its links hold under a global prefix or a mount point
      return renderPage(await this.host.snapshot(), pathOf(req), this.host.schema);
    }

    @Get('jobs/:id')
    @Header('Content-Type', 'text/html; charset=utf-8')
    async job(
      @Param('id') id: string,
      @Req() req: { originalUrl?: string; url: string },
      @Res({ passthrough: true }) res: { status(code: number): unknown },
    ): Promise<string> {
      const base = pathOf(req).replace(/\/jobs\/[^/]*$/, '');
      let view: JobView | null;
      try {
        // the turn stays held until the read ends, however late, so that views given up on cannot pile up
        view = await withDeadline(
          this.host.reads.run(() => readJobView(this.host.source, id)),
          JOB_VIEW_DEADLINE_MS,
          `the job could not be read within ${JOB_VIEW_DEADLINE_MS / 1000} s`,
        );
      } catch (err) {
        // the database is away or too slow (the read's statement_timeout): say so, as the main page does
        res.status(503);
        return renderUnreadableJobPage(id, packageVersion(), base, publicError(err));
      }
      if (view) return renderJobPage(view, packageVersion(), base, this.redact.fn);
      res.status(404);
      return renderMissingJobPage(id, packageVersion(), base);
    }

    @Get('snapshot')
    snapshot(): Promise<DashboardSnapshot> {
      return this.host.snapshot();
    }

    @Sse('events', { maxPendingDataLength: MAX_PENDING_EVENT_CHARS })
    events(): Observable<MessageEvent> {
      if (this.host.streams.size >= MAX_EVENT_STREAMS)
        throw new ServiceUnavailableException({
          statusCode: 503,
          code: 'TOO_MANY_STREAMS',
          message: `${MAX_EVENT_STREAMS} dashboard pages are open on this instance already: close one, or reload later`,
        });
      return new Observable<MessageEvent>((subscriber) => {
        // the first event is the whole snapshot, the later ones its changes, each serialised once for every viewer
        let first = true;
        const send = (sample: DashboardSnapshot) => {
          const s = this.host.view(sample);
          subscriber.next({ data: first ? this.host.encoder.full(s) : this.host.encoder.delta(s) });
          first = false;
        };
        if (this.host.sampler.live && this.host.sampler.snapshot) send(this.host.sampler.snapshot);
        this.host.streams.add(subscriber);
        const unsubscribe = this.host.sampler.subscribe(send);
        return () => {
          this.host.streams.delete(subscriber);
          unsubscribe();
        };
      });
    }

    @Get('app.js')
    @Header('Content-Type', 'text/javascript; charset=utf-8')
    script(): Promise<string> {
      return this.host.asset('app.js');
    }

    @Get('render.js')
    @Header('Content-Type', 'text/javascript; charset=utf-8')
    renderer(): Promise<string> {
      return this.host.asset('render.js');
    }

    @Get('app.css')
    @Header('Content-Type', 'text/css; charset=utf-8')
    styles(): Promise<string> {
      return this.host.asset('app.css');
    }
  }
  return QueueDashboardController;
}

/** Mounts the dashboard: `QueueDashboardModule.forRoot({ path: '/queues', guards: [AdminGuard] })`. */
@Module({})
export class QueueDashboardModule implements NestModule, OnModuleInit {
  // optional: a module imported without forRoot() mounts nothing, and needs no middleware
  constructor(
    @Optional() @Inject(MOUNTED_CONTROLLER) private readonly controller: Type<unknown> | null,
    @Optional() @Inject(LOCAL_ONLY) private readonly localOnly: boolean | null,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    if (this.controller) consumer.apply(DashboardHeaders, SameOriginOnly).forRoutes(this.controller);
  }

  /** localOnly checked again as the app starts: an env file loaded after the module was defined may say production. */
  onModuleInit(): void {
    if (this.localOnly) refuseLocalOnlyInProduction();
  }

  static forRoot(options: QueueDashboardOptions = {}): DynamicModule {
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionError('options', 'an object { path?, guards?, localOnly?, redact? }', options);
    knownKeys('QueueDashboardModule', options, ['path', 'guards', 'localOnly', 'redact']);
    const path = routePath('path', options.path ?? '/queues', '/queues');
    if (options.guards !== undefined && !Array.isArray(options.guards))
      throw new InvalidOptionError('guards', 'an array of guards (classes or instances)', options.guards);
    if (options.localOnly !== undefined && typeof options.localOnly !== 'boolean')
      throw new InvalidOptionError('localOnly', 'true or false', options.localOnly);
    const localOnly = options.localOnly === true;
    if (localOnly) refuseLocalOnlyInProduction();
    if (!localOnly && !options.guards?.length)
      throw new InvalidOptionError(
        'guards',
        'at least one guard (a class or an instance): the dashboard shows every job; or localOnly: true for this host only, outside production',
        options.guards,
      );
    const guards = [...(localOnly ? [LoopbackOnlyGuard] : []), ...(options.guards ?? [])];
    const redact = redactOption(options.redact);
    const controller = dashboardController(path, guards);
    return {
      module: QueueDashboardModule,
      controllers: [controller],
      providers: [
        DashboardHost,
        { provide: REDACT, useValue: { fn: redact } },
        { provide: LOCAL_ONLY, useValue: localOnly },
        { provide: MOUNTED_CONTROLLER, useValue: controller },
      ],
    };
  }
}
