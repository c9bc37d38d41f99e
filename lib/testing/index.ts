// nestjs-pgqueue/testing: helpers for the tests of an app that uses the queue. The database part (startTestDatabase)
// needs neither Nest nor a queue; drain, expectSent and runJob take the app's QueueService (or any PgQueue).
export { startTestDatabase, TEST_DATABASE_IMAGE, type TestDatabase, type TestDatabaseOptions } from './test-database.js';
export { drain, type DrainOptions, type DrainResult } from './drain.js';
export { expectSent, type ExpectSentOptions, type SentMatcher } from './expect-sent.js';
export { runJob, type RunJobOptions, type RunJobResult } from './run-job.js';
export type { Shape, ValueTest } from './match.js';
export type { JobError } from './watch.js';
export { JobNotSentError, JobsFailedError, NoTestDatabaseError, NoWorkerError, WaitTimeoutError } from './errors.js';
