import type { ExceptionFilter } from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, FILTER_CATCH_EXCEPTIONS } from '@nestjs/common/constants.js';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { isObservable, lastValueFrom } from 'rxjs';
import { QueueError } from '../core/errors.js';

type Constructor = abstract new (...args: never[]) => unknown;

/** One `@UseFilters` entry of a handler, made: the filter and the exceptions its `@Catch` names (none: all). */
export interface BoundFilter {
  readonly filter: ExceptionFilter;
  readonly catches: readonly Constructor[];
}

/**
 * The exception filters bound to a handler (`@UseFilters` on its method and on its class), in the order Nest
 * tries them around a controller's method: the method's before the class's, the last listed first. The app's
 * global filters are not among them, as Nest leaves them off a microservice that does not inherit the app's
 * configuration: they are written for HTTP answers, and one that reaches for the response fails on a job.
 * A filter given as a class is the instance Nest made for the handler's module (`resolve`); one Nest did not
 * make (on a handler provided by `useFactory` or `useValue`) is refused here, at boot, rather than skipped.
 */
export function boundFilters(
  instance: object,
  method: string,
  resolve: (type: Constructor) => ExceptionFilter | undefined,
  where: string,
): BoundFilter[] {
  const fn = (instance as Record<string, unknown>)[method] as object;
  const listed = [
    ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, instance.constructor) as unknown[] | undefined) ?? []),
    ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, fn) as unknown[] | undefined) ?? []),
  ].reverse();
  return listed.map((entry) => {
    const filter = typeof entry === 'function' ? resolve(entry as Constructor) : (entry as ExceptionFilter);
    if (!filter || typeof filter.catch !== 'function') {
      const name = typeof entry === 'function' ? (entry as { name: string }).name : String(entry);
      throw new QueueError(
        `invalid @QueueHandler registration: ${where} binds the exception filter ${name}, which Nest did not make for it as a singleton (a handler provided by useFactory, useValue or { provide, useClass } gets no class-bound enhancers, and a request-scoped or transient filter has no instance for a job); bind an instance: @UseFilters(new ${name}())`,
        'INVALID_HANDLER',
      );
    }
    const catches = (Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, filter.constructor) as Constructor[] | undefined) ?? [];
    return { filter, catches };
  });
}

/**
 * Wraps a handler's run with its filters. On a throw, the first filter whose `@Catch` takes the error gets it,
 * in an ArgumentsHost of the job's own context type:
 * - what the filter throws (or its Observable errors with) fails the attempt in the error's place;
 * - a value it returns (or its Observable's last value) handles the error: the job completes with that output;
 * - returning nothing (or a promise of nothing) leaves the error as it was.
 * An error thrown once the job's signal was aborted (shutdown handing the job back, or its lease cut off) goes on
 * as it is, unfiltered: a filter that answers with a value must not complete a job that was stopped halfway.
 * No filter logs here: the worker already reports each failed attempt once.
 */
export function withFilters<A extends unknown[]>(
  run: (...args: A) => Promise<unknown>,
  filters: readonly BoundFilter[],
  contextType: string,
): (...args: A) => Promise<unknown> {
  if (filters.length === 0) return run;
  return async (...args: A) => {
    try {
      return await run(...args);
    } catch (err) {
      if (stopped(args[0])) throw err;
      const chosen = filters.find((f) => f.catches.length === 0 || f.catches.some((type) => err instanceof type));
      if (!chosen) throw err;
      const host = new ExecutionContextHost(args);
      host.setType(contextType);
      const answer: unknown = await chosen.filter.catch(err, host);
      const value = isObservable(answer) ? await lastValueFrom(answer, { defaultValue: undefined }) : answer;
      if (value === undefined) throw err;
      return value;
    }
  };
}

/** Whether the job (or, for a batch, any of its jobs) had its signal aborted: the attempt was stopped. */
function stopped(arg: unknown): boolean {
  const jobs = Array.isArray(arg) ? (arg as unknown[]) : [arg];
  return jobs.some((job) => (job as { signal?: AbortSignal } | null)?.signal?.aborted === true);
}
