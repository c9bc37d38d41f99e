// The dashboard inside the user's Nest app: QueueDashboardModule.forRoot({ path, guards }) mounts a read-only page
// at `path`, its assets, and a Server-Sent Events stream that every open page shares (one sampler per instance:
// lib/core/dashboard/sampler.ts). GET routes only; every response carries a Content-Security-Policy without
// 'unsafe-inline' and X-Frame-Options DENY. With no guard, only requests from this host (loopback, not proxied) are
// answered.
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
  Sse,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type MessageEvent,
  type MiddlewareConsumer,
  type NestModule,
  type OnModuleDestroy,
  type Type,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import { DashboardSampler, type SamplerSource } from '../core/dashboard/sampler.js';
import { SnapshotEncoder } from '../core/dashboard/stream.js';
import type { DashboardSnapshot } from '../core/dashboard/model.js';
import { InvalidOptionError } from '../core/errors.js';
import { runtimeOf } from '../core/pg-queue.js';
import { readJobView, type JobView } from '../core/dashboard/job-view.js';
import { packageVersion } from '../core/version.js';
import { renderJobPage, renderMissingJobPage, renderUnreadableJobPage, type Redact } from '../dashboard/job-page.js';
import { renderPage } from '../dashboard/page.js';
import { headersMiddleware, MOUNTED_CONTROLLER, routePath } from './mount.js';
import { QueueService } from './queue.service.js';

export interface QueueDashboardOptions {
  /** The path the dashboard is served at (default `/queues`). */
  path?: string;
  /**
   * Nest guards every route of the dashboard runs, as classes (made in this module: their dependencies must be global
   * providers) or instances. Without any, only requests from this host that came through no proxy are answered.
   */
  guards?: (Type<CanActivate> | CanActivate)[];
  /**
   * What the job view may show of a job: called with a copy of the job, its answer's `data` and `output` are shown
   * in their place (a field it leaves out is not shown; a throw hides both), and its `lastError`, if it has one, in
   * place of the stored error's message and stack (null hides them). Without it, all are shown as stored.
   */
  redact?: Redact;
}

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

/**
 * The guard when none is configured: this host only. A request that came through a proxy (which may well run on
 * this host) says so in its headers and is refused, so that a proxy does not open the dashboard to the network; a
 * Host that is not this host's name (a page elsewhere whose name was rebound to 127.0.0.1) is refused too. A proxy
 * that adds no forwarding header cannot be told from a local client: behind one, configure guards.
 */
@Injectable()
export class LoopbackOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const proxied = ['x-forwarded-for', 'forwarded', 'x-real-ip'].some((h) => req.headers[h] !== undefined);
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

/** The engine's sampler and the page's assets, one per app. */
@Injectable()
export class DashboardHost implements OnModuleDestroy {
  readonly sampler: DashboardSampler;
  private readonly assets = new Map<string, Promise<string>>();

  /** The engine's statements and connections, as the sampler and the job view read them. */
  readonly source: SamplerSource;

  constructor(private readonly queue: QueueService) {
    this.source = {
      get statements() {
        return runtimeOf(queue).statements;
      },
      connect: () => runtimeOf(queue).connect(),
      get prepared() {
        return runtimeOf(queue).namesStatements;
      },
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

  /** The latest snapshot while the sampler runs, else a sample read now (the last one may be hours old). */
  async snapshot(): Promise<DashboardSnapshot> {
    return this.sampler.live && this.sampler.snapshot ? this.sampler.snapshot : this.sampler.sampleNow();
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

const REDACT = Symbol('pgqueue:dashboard-redact');

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
        view = await readJobView(this.host.source, id);
      } catch (err) {
        // the database is away or too slow (the read's statement_timeout): say so, as the main page does
        res.status(503);
        return renderUnreadableJobPage(id, packageVersion(), base, err instanceof Error ? err.message : String(err));
      }
      if (view) return renderJobPage(view, packageVersion(), base, this.redact.fn);
      res.status(404);
      return renderMissingJobPage(id, packageVersion(), base);
    }

    @Get('snapshot')
    snapshot(): Promise<DashboardSnapshot> {
      return this.host.snapshot();
    }

    @Sse('events')
    events(): Observable<MessageEvent> {
      return new Observable<MessageEvent>((subscriber) => {
        // the first event is the whole snapshot, the later ones its changes, each serialised once for every viewer
        let first = true;
        const send = (s: DashboardSnapshot) => {
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
export class QueueDashboardModule implements NestModule {
  // optional: a module imported without forRoot() mounts nothing, and needs no middleware
  constructor(@Optional() @Inject(MOUNTED_CONTROLLER) private readonly controller: Type<unknown> | null) {}

  configure(consumer: MiddlewareConsumer): void {
    if (this.controller) consumer.apply(DashboardHeaders).forRoutes(this.controller);
  }

  static forRoot(options: QueueDashboardOptions = {}): DynamicModule {
    const path = routePath('path', options.path ?? '/queues', '/queues');
    if (options.guards !== undefined && !Array.isArray(options.guards))
      throw new InvalidOptionError('guards', 'an array of guards (classes or instances)', options.guards);
    const guards = options.guards?.length ? options.guards : [LoopbackOnlyGuard];
    if (options.redact !== undefined && typeof options.redact !== 'function')
      throw new InvalidOptionError(
        'redact',
        'a function (job) => ({ data, output, lastError? }) whose answer the job view shows',
        options.redact,
      );
    const controller = dashboardController(path, guards);
    return {
      module: QueueDashboardModule,
      controllers: [controller],
      providers: [
        DashboardHost,
        { provide: REDACT, useValue: { fn: options.redact } },
        { provide: MOUNTED_CONTROLLER, useValue: controller },
      ],
    };
  }
}
