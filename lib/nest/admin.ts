// The admin HTTP API inside the user's Nest app: QueueAdminModule.forRoot({ prefix, guards }) mounts the few actions
// an operator needs (enqueue, look a job up, page through a queue's jobs, retry, delete, pause, resume). It refuses
// to start without a guard: these routes change jobs. State-changing routes take only application/json, which a
// form on another site cannot send. The work is in lib/core/http-admin.ts; the one table that turns the engine's
// typed errors into HTTP answers is lib/core/http-errors.ts, which AdminErrors applies to every route.
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
import { catchError, Observable, throwError } from 'rxjs';
import { InvalidOptionError, JobNotFoundError } from '../core/errors.js';
import { findJobsByQuery, parseEnqueueBody, queueOfJob } from '../core/http-admin.js';
import { httpErrorOf } from '../core/http-errors.js';
import type { JobPage } from '../core/job-finder.js';
import type { EnqueueResult, JobWithMetadata } from '../core/types.js';
import { headersMiddleware, MOUNTED_CONTROLLER, routePath } from './mount.js';
import { QueueService } from './queue.service.js';

export interface QueueAdminOptions {
  /** Where the routes are mounted (default `/api/queue`). */
  prefix?: string;
  /**
   * Nest guards every route runs, as classes (made in this module: their dependencies must be global providers) or
   * instances. Required: the module refuses to start without one.
   */
  guards: (Type<CanActivate> | CanActivate)[];
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

/**
 * Every admin route's errors, and the JSON-only rule of state-changing ones: a request that changes
 * something must say `Content-Type: application/json` (415 otherwise), so a form or a no-cors fetch from another
 * site, which cannot send that type, changes nothing. Runs after the guards: an unknown caller gets 401/403 first.
 */
@Injectable()
class AdminErrors implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    if (req.method !== 'GET' && req.method !== 'HEAD' && !isJsonContentType(req.headers['content-type']))
      throw new UnsupportedMediaTypeException({
        statusCode: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'this route takes only Content-Type: application/json (send {} when there is nothing to say)',
      });
    return next.handle().pipe(
      catchError((err: unknown) => {
        const mapped = httpErrorOf(err, ADMIN_STATUSES);
        return throwError(() => (mapped ? new HttpException(mapped.body, mapped.status, { cause: err }) : err));
      }),
    );
  }
}

function adminController(prefix: string, guards: (Type<CanActivate> | CanActivate)[]): Type<unknown> {
  @Controller(prefix)
  @UseGuards(...guards)
  @UseInterceptors(AdminErrors)
  class QueueAdminController {
    constructor(private readonly queue: QueueService) {}

    /** `{ queue, data, options }` → enqueue()'s answer; 201 when a job was made, 200 when deduped or refused. */
    @Post('enqueue')
    async enqueue(@Body() body: unknown, @Res({ passthrough: true }) res: { status(code: number): unknown }): Promise<EnqueueResult> {
      const { queue, data, options } = parseEnqueueBody(body);
      const result = await this.queue.enqueue(queue, data, options);
      res.status(result.id !== null && !result.deduped ? 201 : 200);
      return result;
    }

    @Get('jobs/:id')
    async job(@Param('id') id: string): Promise<JobWithMetadata> {
      const name = await queueOfJob(this.queue, id);
      const job = await this.queue.getJobById(name, id);
      if (!job) throw new JobNotFoundError(null, id);
      return job;
    }

    @Get('queues/:name/jobs')
    jobs(@Param('name') name: string, @Query() query: Record<string, unknown>): Promise<JobPage> {
      return findJobsByQuery(this.queue, name, query);
    }

    /** A failed job back to the queue with a fresh attempt budget; 400 unless it is failed. Answers the job. */
    @Post('jobs/:id/retry')
    @HttpCode(200)
    async retry(@Param('id') id: string): Promise<JobWithMetadata> {
      const name = await queueOfJob(this.queue, id);
      await this.queue.retry(name, id);
      const job = await this.queue.getJobById(name, id);
      if (!job) throw new JobNotFoundError(null, id);
      return job;
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
  }
  return QueueAdminController;
}

/** Mounts the admin API: `QueueAdminModule.forRoot({ prefix: '/api/queue', guards: [AdminGuard] })`. */
@Module({})
export class QueueAdminModule implements NestModule {
  // optional: a module imported without forRoot() mounts nothing, and needs no middleware
  constructor(@Optional() @Inject(MOUNTED_CONTROLLER) private readonly controller: Type<unknown> | null) {}

  configure(consumer: MiddlewareConsumer): void {
    if (this.controller) consumer.apply(AdminHeaders).forRoutes(this.controller);
  }

  static forRoot(options: QueueAdminOptions): DynamicModule {
    const o = (options ?? {}) as Partial<QueueAdminOptions>;
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
      providers: [AdminErrors, { provide: MOUNTED_CONTROLLER, useValue: controller }],
    };
  }
}
