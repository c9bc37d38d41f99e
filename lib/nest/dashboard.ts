// The dashboard inside the user's Nest app: QueueDashboardModule.forRoot({ path, guards }) mounts a read-only page
// at `path`, its assets, and a Server-Sent Events stream that every open page shares (one sampler per instance:
// lib/core/dashboard/sampler.ts); a job's view (`jobs/:id`), a queue's page (`queues/:name`) and a search (`search`),
// each read on request (lib/core/dashboard/job-view.ts, queue-view.ts, search.ts). GET routes only; every response carries a Content-Security-Policy without
// 'unsafe-inline' and X-Frame-Options DENY, and a request from another site's page is refused before any work. It is
// never mounted open by accident: without guards it refuses to start, unless `localOnly: true` asks for this host
// only (never in production). Every job's data, output and error goes through `redact` before it leaves.
import {
  Controller,
  Get,
  Header,
  Inject,
  Optional,
  Module,
  Param,
  Query,
  Req,
  Res,
  ServiceUnavailableException,
  Sse,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type MessageEvent,
  type MiddlewareConsumer,
  type NestModule,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import type { DashboardSnapshot } from '../core/dashboard/model.js';
import { InvalidOptionError } from '../core/errors.js';
import { readJobView, type JobView } from '../core/dashboard/job-view.js';
import { parseQueuePageQuery, readQueueView, type QueuePageQuery, type QueueView } from '../core/dashboard/queue-view.js';
import { parseSearchQuery, searchJobs, type SearchQuery, type SearchResult } from '../core/dashboard/search.js';
import { withDeadline } from '../core/runtime/deadline.js';
import { publicError } from '../core/http/public-error.js';
import { redactOption, type Redact } from '../core/http/redact.js';
import { packageVersion } from '../core/runtime/version.js';
import { renderJobPage, renderMissingJobPage, renderUnreadableJobPage } from '../dashboard/job-page.js';
import { renderPage } from '../dashboard/page.js';
import { renderMissingQueuePage, renderProblemPage, renderQueuePage } from '../dashboard/queue-page.js';
import { renderSearchPage } from '../dashboard/search-page.js';
import { DashboardHost, REDACT } from './dashboard-host.js';
import { LoopbackOnlyGuard, refuseLocalOnlyInProduction } from './dashboard-local.js';
import { headersMiddleware, knownKeys, MOUNTED_CONTROLLER, pathOf, routePath, SameOriginOnly } from './mount.js';

export { DashboardHost } from './dashboard-host.js';
export { isLocalHost, isLoopback, LoopbackOnlyGuard } from './dashboard-local.js';
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
   * What may be shown of a job, wherever the dashboard shows one (the job view and each of its attempts' errors, the
   * rows of the queue pages and the search, the feed's and the problems' error messages): called synchronously with a
   * copy of the job, its answer's `data` and `output` are shown in their place (a field it leaves out is not shown; a
   * throw hides all), and its `lastError`, if it has one, in place of the stored error's name, message and stack (null
   * hides them); an attempt's error is shown as the job's `lastError` would be, redact called with it in that place.
   * The feed and problems know a job's id, queue and error only: there `job.data` and `job.output` are undefined.
   * Keys are shown as stored. Without it, all is shown as stored. An async function is refused.
   */
  redact?: Redact;
}

/** How long a job view, a queue's page or a search waits for its turn and its reads before it answers 503. */
const READ_DEADLINE_MS = 10_000;

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
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** Sets DASHBOARD_HEADERS on every response of the dashboard's routes, a guard's refusal included. */
const DashboardHeaders = headersMiddleware(DASHBOARD_HEADERS);

/** The `localOnly` option, for the module's check at start. */
const LOCAL_ONLY = Symbol('pgqueue:dashboard-local-only');

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
          READ_DEADLINE_MS,
          `the job could not be read within ${READ_DEADLINE_MS / 1000} s`,
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

    @Get('queues/:name')
    @Header('Content-Type', 'text/html; charset=utf-8')
    async queuePage(
      @Param('name') name: string,
      @Query() query: Record<string, unknown>,
      @Req() req: { originalUrl?: string; url: string },
      @Res({ passthrough: true }) res: { status(code: number): unknown },
    ): Promise<string> {
      const base = pathOf(req).replace(/\/queues\/[^/]*$/, '');
      const problem = (code: number, title: string, message: string) => {
        res.status(code);
        return renderProblemPage(title, message, packageVersion(), base);
      };
      let q: QueuePageQuery;
      try {
        q = parseQueuePageQuery(query);
      } catch (err) {
        if (err instanceof InvalidOptionError) return problem(400, 'Bad request', err.message);
        throw err;
      }
      let view: QueueView | null;
      try {
        view = await this.read(() => readQueueView(this.host.queue, this.host.source, name, q, this.host.persisted), 'the queue');
      } catch (err) {
        // a name no queue can have, or a cursor past what the browser gave
        if (err instanceof InvalidOptionError) return problem(400, 'Bad request', err.message);
        // the database is away, or a statement ran past its bound (DASHBOARD_PAGE_STATEMENT_TIMEOUT_MS)
        return problem(503, `Queue ${name}`, `The database cannot be read: ${publicError(err)}.`);
      }
      if (view) return renderQueuePage(view, packageVersion(), base, this.redact.fn);
      res.status(404);
      return renderMissingQueuePage(name, packageVersion(), base);
    }

    @Get('search')
    @Header('Content-Type', 'text/html; charset=utf-8')
    async search(
      @Query() query: Record<string, unknown>,
      @Req() req: { originalUrl?: string; url: string },
      @Res({ passthrough: true }) res: { status(code: number): unknown; header(name: string, value: string): unknown },
    ): Promise<string> {
      const base = pathOf(req).replace(/\/search$/, '');
      let q: SearchQuery;
      try {
        q = parseSearchQuery(query);
      } catch (err) {
        if (err instanceof InvalidOptionError) {
          res.status(400);
          return renderProblemPage('Bad request', err.message, packageVersion(), base);
        }
        throw err;
      }
      let result: SearchResult;
      try {
        result = await this.read(() => searchJobs(this.host.queue, this.host.source, q), 'the search');
      } catch (err) {
        res.status(503);
        return renderProblemPage('Search', `The database cannot be read: ${publicError(err)}.`, packageVersion(), base);
      }
      if (result.kind === 'list') return renderSearchPage(q, result, packageVersion(), base, this.redact.fn);
      // one job found: straight to its view
      const to = `${base}/jobs/${encodeURIComponent(result.id)}`;
      res.status(302);
      res.header('Location', to);
      return renderProblemPage('Found', `Job ${result.id}: ${to}`, packageVersion(), base);
    }

    /** `fn` in the dashboard's turn (reads), answered within READ_DEADLINE_MS; the turn is held until it ends. */
    private read<T>(fn: () => Promise<T>, what: string): Promise<T> {
      return withDeadline(this.host.reads.run(fn), READ_DEADLINE_MS, `${what} could not be read within ${READ_DEADLINE_MS / 1000} s`);
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
