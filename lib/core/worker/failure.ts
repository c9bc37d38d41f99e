// What a failed attempt records about a handler's throw: the error as jsonb can store it, and whether and
// when the job may run again. Pure: the worker and fail() by hand both use it.
import { describeValue, PermanentJobError } from '../errors.js';

/** What a failed attempt stores, and how it asks to be retried. */
export interface FailureInfo {
  error: { name: string; message: string; stack?: string; retryCount?: number };
  permanent: boolean;
  retryAfterSeconds: number | null;
}

const STACK_LINES = 20;

/** Error text as jsonb can store it: NUL written out, lone surrogates replaced (U+FFFD). */
function storable(text: string): string {
  return (text.replaceAll('\u0000', '\\u0000') as unknown as { toWellFormed(): string }).toWellFormed();
}

/** Coerces anything thrown (strings, objects, undefined) into the error record a failed attempt keeps. */
export function describeFailure(thrown: unknown, retryCount?: number): FailureInfo {
  const err =
    thrown instanceof Error ? thrown : new Error(typeof thrown === 'string' ? thrown : `non-Error thrown: ${describeValue(thrown)}`);
  const fields = err as Error & { retryable?: unknown; retryAfterSeconds?: unknown };
  const retryAfter = fields.retryAfterSeconds;
  return {
    error: {
      name: storable(String(err.name)),
      message: storable(String(err.message)),
      stack: err.stack === undefined ? undefined : storable(err.stack.split('\n').slice(0, STACK_LINES).join('\n')),
      retryCount,
    },
    permanent: err instanceof PermanentJobError || fields.retryable === false,
    retryAfterSeconds:
      typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter >= 0
        ? Math.min(Math.ceil(retryAfter), 2_147_483_647)
        : null,
  };
}
