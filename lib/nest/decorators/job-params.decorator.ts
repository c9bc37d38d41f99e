import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Job } from '../../core/types.js';

/** The argument a handler's context holds: the job, or a batch handler's jobs. */
const jobsOf = (context: ExecutionContext): Job | Job[] => context.getArgByIndex<Job | Job[]>(0);

/**
 * A `@QueueHandler` parameter that receives the job's payload (a batch handler's: the payloads, in order), or one
 * field of it, `@JobPayload('userId')`. Pipes run on it as on a controller's `@Body()`: those given here,
 * `@JobPayload(new ParseIntPipe())`, and the method's, its class's and the app's (`APP_PIPE`, `useGlobalPipes`), with
 * the parameter's declared type as the metatype (a DTO class for a ValidationPipe). A pipe that throws fails the
 * attempt. Once one parameter is decorated, every one must be: the job itself is `@CurrentJob()`.
 */
export const JobPayload = createParamDecorator((field: string | undefined, context: ExecutionContext): unknown => {
  const pick = (job: Job) => (field === undefined ? job.data : (job.data as Record<string, unknown> | null | undefined)?.[field]);
  const jobs = jobsOf(context);
  return Array.isArray(jobs) ? jobs.map(pick) : pick(jobs);
});

/** A `@QueueHandler` parameter that receives the job (a batch handler's: the jobs), beside `@JobPayload()` ones. */
export const CurrentJob = createParamDecorator((_: unknown, context: ExecutionContext) => jobsOf(context));
