// The worker path, as the rest of the engine sees it. Each part lives in a file of its own under worker/:
// claim (claim.ts) → local queue of claimed-ahead jobs (local-queue.ts) → attempt (attempt.ts), run by
// attempt-runner.ts with the job object of claimed-job.ts → lease clock (lease-clock.ts) → completer
// (completer.ts); loop.ts composes them into the WorkerLoop. Importers keep one path, './index.js'.
export {
  claimJobs,
  holdsJobsBack,
  newHolderId,
  PROFILE_RECHECK_MS,
  type ClaimContext,
  type ClaimedRow,
  type ClaimFilter,
  type ClaimProfile,
  type GroupLimits,
} from './intake/claim.js';
export { LazyAbort, toJob } from './attempt/claimed-job.js';
export { describeFailure, type FailureInfo } from './attempt/failure.js';
export { WorkerLoop } from './loop.js';
export { callingFrames, handlerFrameOf, HANDLER_FRAME } from './loop-frame.js';
export type { LoopContext } from './loop-context.js';
