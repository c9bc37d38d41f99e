// The admin HTTP API inside the user's Nest app: QueueAdminModule.forRoot({ prefix, guards }) mounts the few actions
// an operator needs (enqueue, look a job up, page through a queue's jobs, retry, delete, pause, resume), in seed
// 002's wire format (its curl lines work as written) with the engine's fields beside it. It refuses to start without
// a guard: these routes change jobs. A request from another site's page is refused before any work (SameOriginOnly);
// a body, when there is one, must be JSON. Every route waits its turn for the engine's connections (operatorGate),
// and every job it answers goes through `redact`. The work is in lib/core/http/admin.ts; the one table that turns the
// engine's typed errors into HTTP answers is lib/core/http/errors.ts, which AdminErrors applies to every route.
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpException,
  Inject,
  Injectable,
  Optional,
  Module,
  Param,
  Post,
  Query,
  Res,
  UnsupportedMediaTypeException,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type MiddlewareConsumer,
  type NestInterceptor,
  type NestModule,
  type Type,
} from '@nestjs/common';
import { catchError, defer, from, lastValueFrom, Observable, throwError } from 'rxjs';
import { InvalidOptionError, JobNotFoundError } from '../core/errors.js';
import { adminJob, enqueueAnswer, findJobsByQuery, parseEnqueueBody, queueOfJob, type AdminJob } from '../core/http/admin.js';
import { httpErrorOf } from '../core/http/errors.js';
import { runtimeOf } from '../core/pg-queue.js';
import { operatorGate } from '../core/http/read-gate.js';
import { redactOption, type Redact } from '../core/http/redact.js';
import { headersMiddleware, knownKeys, MOUNTED_CONTROLLER, routePath, SameOriginOnly } from './mount.js';
import { QueueService } from './queue.service.js';

export type { Redact, RedactedError } from '../core/http/redact.js';

export interface QueueAdminOptions {
  /** Where the routes are mounted (default `/api/queue`). */
  prefix?: string;
  /**
   * Nest guards every route runs, as classes (made in this module: their dependencies must be global providers) or
   * instances. Required: the module refuses to start without one.
   */
  guards: (Type<CanActivate> | CanActivate)[];
  /**
   * What may be answered of a job (GET jobs/:id, the pages, retry's answer), as the dashboard's `redact`: called
   * synchronously with a copy of the job, its answer's `data` (also answered as `payload`) and `output` replace the
   * stored ones (a field it leaves out is not answered), its `lastError` the stored error (null hides it). A throw
   * hides all three. An async function is refused.
   */
  redact?: Redact;
}

interface HttpRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A media type that is JSON: application/json, with parameters (charset) or not. */
export function isJsonContentType(value: string | string[] | undefined): boolean {
  return typeof value === 'string' && /^application\/json\s*(;|$)/i.test(value.trim());
}

/** Every admin answer, a guard's refusal included: never cached, never sniffed. */
const AdminHeaders = headersMiddleware({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });

/** Retrying a job that is not failed answers 400, as the admin API this one follows does (elsewhere 409). */
const ADMIN_STATUSES = { JOB_STATE: 400 };

/** Whether a request carries a body: a length above 0, or one sent in chunks. */
function hasBody(headers: HttpRequest['headers']): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (typeof length === 'string' && length.trim() !== '0');
}

/**
 * Every admin route's errors, its turn for the engine's connections, and the JSON-only rule of bodies: a body must
 * say `Content-Type: application/json` (415 otherwise). A request without a body (seed 002's retry and delete) needs
 * no type: another site's page is stopped by SameOriginOnly, not by the type. Runs after the guards: an unknown
 * caller gets 401/403 first, and waits for no turn.
 */
@Injectable()
class AdminErrors implements NestInterceptor {
  constructor(private readonly queue: QueueService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    if (hasBody(req.headers) && !isJsonContentType(req.headers['content-type']))
      throw new UnsupportedMediaTypeException({
        statusCode: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'a body must be Content-Type: application/json',
      });
    return defer(() => from(this.turn(() => lastValueFrom(next.handle(), { defaultValue: undefined })))).pipe(
      catchError((err: unknown) => {
        const mapped = httpErrorOf(err, ADMIN_STATUSES);
        return throwError(() => (mapped ? new HttpException(mapped.body, mapped.status, { cause: err }) : err));
      }),
    );
  }

  /** `fn` in its turn: at most a quarter of the engine's pool serves the admin API and the dashboard at once. */
  private async turn<T>(fn: () => Promise<T>): Promise<T> {
    const rt = runtimeOf(this.queue);
    await rt.start();
    const max = (rt.connectionOptions as { max?: number }).max;
    return operatorGate(rt, typeof max === 'number' ? max : 10).run(fn);
  }
}

/** The `redact` option, for the controller. */
const REDACT = Symbol('pgqueue:admin-redact');

function adminController(prefix: string, guards: (Type<CanActivate> | CanActivate)[]): Type<unknown> {
  @Controller(prefix)
  @UseGuards(...guards)
  @UseInterceptors(AdminErrors)
  class QueueAdminController {
    constructor(
      private readonly queue: QueueService,
      @Inject(REDACT) private readonly redact: { fn: Redact | undefined },
    ) {}

    /**
     * Seed 002's `{ queue, payload, maxAttempts?, runAt?, delay?, dedupeKey?, priority? }`, or `{ queue, data, options }`
     * → enqueue()'s answer with seed 002's `status` and `runAfter`; 201 when a job was made, 200 when deduped or refused.
     */
    @Post('enqueue')
    async enqueue(@Body() body: unknown, @Res({ passthrough: true }) res: { status(code: number): unknown }) {
      const { queue, data, options } = parseEnqueueBody(body);
      const result = await this.queue.enqueue(queue, data, options);
      res.status(result.id !== null && !result.deduped ? 201 : 200);
      return enqueueAnswer(result);
    }

    @Get('jobs/:id')
    async job(@Param('id') id: string): Promise<AdminJob> {
      return this.read(await queueOfJob(this.queue, id), id);
    }

    @Get('queues/:name/jobs')
    async jobs(@Param('name') name: string, @Query() query: Record<string, unknown>): Promise<{ jobs: AdminJob[]; next: string | null }> {
      const page = await findJobsByQuery(this.queue, name, query);
      return { jobs: page.jobs.map((job) => adminJob(job, this.redact.fn)), next: page.next };
    }

    /** A failed job back to the queue with a fresh attempt budget; 400 unless it is failed. Answers the job. */
    @Post('jobs/:id/retry')
    @HttpCode(200)
    async retry(@Param('id') id: string): Promise<AdminJob> {
      const name = await queueOfJob(this.queue, id);
      await this.queue.retry(name, id);
      return this.read(name, id);
    }

    /** Deletes a job whatever its state (a running one's result is then refused). */
    @Delete('jobs/:id')
    async remove(@Param('id') id: string): Promise<{ id: string; queue: string; deleted: true }> {
      const name = await queueOfJob(this.queue, id);
      const { updated } = await this.queue.deleteJob(name, id);
      if (updated === 0) throw new JobNotFoundError(null, id);
      return { id, queue: name, deleted: true };
    }

    @Post('queues/:name/pause')
    @HttpCode(200)
    async pause(@Param('name') name: string): Promise<{ queue: string; paused: boolean }> {
      await this.queue.pauseQueue(name);
      return { queue: name, paused: true };
    }

    @Post('queues/:name/resume')
    @HttpCode(200)
    async resume(@Param('name') name: string): Promise<{ queue: string; paused: boolean }> {
      await this.queue.resumeQueue(name);
      return { queue: name, paused: false };
    }

    private async read(name: string, id: string): Promise<AdminJob> {
      const job = await this.queue.getJobById(name, id);
      if (!job) throw new JobNotFoundError(null, id);
      return adminJob(job, this.redact.fn);
    }
  }
  return QueueAdminController;
}

/** Mounts the admin API: `QueueAdminModule.forRoot({ prefix: '/api/queue', guards: [AdminGuard] })`. */
@Module({})
export class QueueAdminModule implements NestModule {
  // optional: a module imported without forRoot() mounts nothing, and needs no middleware
  constructor(@Optional() @Inject(MOUNTED_CONTROLLER) private readonly controller: Type<unknown> | null) {}

  configure(consumer: MiddlewareConsumer): void {
    if (this.controller) consumer.apply(AdminHeaders, SameOriginOnly).forRoutes(this.controller);
  }

  static forRoot(options: QueueAdminOptions): DynamicModule {
    if (options === undefined || options === null || typeof options !== 'object')
      throw new InvalidOptionError('options', 'an object { prefix?, guards, redact? }', options);
    const o = options as Partial<QueueAdminOptions>;
    knownKeys('QueueAdminModule', o, ['prefix', 'guards', 'redact']);
    const redact = redactOption(o.redact);
    const prefix = routePath('prefix', o.prefix ?? '/api/queue', '/api/queue');
    if (!Array.isArray(o.guards) || o.guards.length === 0)
      throw new InvalidOptionError(
        'guards',
        'at least one guard (a class or an instance): the admin API changes jobs and is never mounted open',
        o.guards,
      );
    const controller = adminController(prefix, o.guards);
    return {
      module: QueueAdminModule,
      controllers: [controller],
      providers: [AdminErrors, { provide: REDACT, useValue: { fn: redact } }, { provide: MOUNTED_CONTROLLER, useValue: controller }],
    };
  }
}
