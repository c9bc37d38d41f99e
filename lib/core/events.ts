// The engine's events, typed: what PgQueue (and so QueueService) emits. `error` and `warning` report the engine's
// own troubles (with no listener they go to the logger); the job lifecycle events are emitted by the instance that
// settled the job, only when someone listens (nothing is built for them otherwise).

/** A job's identity in a lifecycle event. */
export interface JobEvent {
  queue: string;
  id: string;
}

/**
 * How long an attempt that a worker loop of this instance ran waited and ran, in seconds, as the monitor's
 * histograms count them: the wait from when the job became due (the later of its creation and its startAfter) to
 * its claim, by the database's clock; the run from the claim's answer to the outcome being written, by this
 * process's clock. Null for an attempt no loop of this instance ran (one the maintenance pass reaped).
 */
export interface JobTiming {
  waitSeconds: number | null;
  runSeconds: number | null;
}

/** A warning: what it is about (`type`), a sentence for a log (`message`), and the figures behind it. */
export type QueueWarning =
  /** The queue's waiting jobs (created and retry) reached its warningQueueSize; once per crossing. */
  | { type: 'queue-size'; message: string; queue: string; queuedCount: number; warningQueueSize: number }
  /** A worker's claim took longer than warningSlowClaimMs; at most once a minute per worker loop. */
  | { type: 'slow-claim'; message: string; queue: string; milliseconds: number; thresholdMs: number }
  /** This process's clock and the database's differ by more than CLOCK_SKEW_WARNING_MS; once per crossing. */
  | { type: 'clock-skew'; message: string; skewMs: number }
  /** A worker's result was refused by the fence: it no longer held the job (its lease ran out, it was retried). */
  | { type: 'stale-result'; message: string; queue: string; id: string }
  /**
   * What a pooler on the way to PostgreSQL changed, each said once: the engine's session settings refused or dropped
   * (at start), a prepared statement lost (later), or a LISTEN that heard no NOTIFY sent through the pool. From the
   * first two on, statements run unnamed. `listen`: where LISTEN goes now ('direct': the listen option's server;
   * 'pool': the pool's, to be checked by a NOTIFY; 'off': nowhere, idle worker loops poll).
   */
  | { type: 'pooler'; message: string; listen: 'direct' | 'pool' | 'off' }
  /** Anything else the engine reports: what a maintenance pass changed, a connection error, a shutdown cut short. */
  | { type: 'engine'; message: string };

/** An `error` event's error: the failure, and what the engine was doing (`context`). */
export type QueueEngineError = Error & { context: string };

/** The events of PgQueue, by name, with their arguments. */
export interface QueueEvents {
  /** The engine's own failures: a worker loop's, a maintenance or monitor pass's, the LISTEN connection lost. */
  error: [QueueEngineError];
  warning: [QueueWarning];
  /** A job this instance completed (a worker's handler returned). */
  completed: [JobEvent & JobTiming];
  /** An attempt this instance failed: `willRetry` says whether the job goes back to the queue. */
  failed: [JobEvent & JobTiming & { error: unknown; willRetry: boolean; retryInSeconds: number | null; deadLetter: string | null }];
  /** An attempt this instance failed that will be retried, `retryInSeconds` from now (null: not known). */
  retrying: [JobEvent & { error: unknown; retryInSeconds: number | null }];
  /** A job this instance's maintenance failed because it waited unstarted past its retention. */
  expired: [JobEvent];
}

/** The lifecycle events, which cost nothing without a listener. */
export type JobEventName = 'completed' | 'failed' | 'retrying' | 'expired';

/** Where units report events: PgQueue implements it. */
export interface EngineEvents {
  /** A warning (a bare message is an `engine` warning). */
  warning(warning: QueueWarning | string): void;
  error(err: unknown, context: string): void;
  /** Whether anyone listens to `name`: a unit builds an event's payload only then. */
  listens(name: JobEventName): boolean;
  job<K extends JobEventName>(name: K, ...payload: QueueEvents[K]): void;
}

/** How far apart this process's clock and the database's may be before a `clock-skew` warning. */
export const CLOCK_SKEW_WARNING_MS = 5_000;

/** A bare message as a warning. */
export function asWarning(warning: QueueWarning | string): QueueWarning {
  return typeof warning === 'string' ? { type: 'engine', message: warning } : warning;
}
