/**
 * How long one of the engine's own transactions may sit idle (waiting for its next statement) before the
 * server ends its session. These transactions hold what other processes wait for (a limited queue's claim
 * lock, the maintenance lock, the rows of a flow being written) and send their statements back to back, so
 * a transaction idle this long belongs to a process that stalled: frozen, paused in a debugger, its event
 * loop blocked, cut off by the network. Its locks then go with its session instead of every other process
 * waiting for it: in the fault campaign (test/reliability/campaign.spec.ts), a worker frozen inside a
 * group-limited claim held that queue's claims in every other process until it was let go.
 */
export const ENGINE_TRANSACTION_IDLE_SECONDS = 10;

/**
 * Bounds the rest of the current transaction as ENGINE_TRANSACTION_IDLE_SECONDS says, unless the session
 * already has a bound at least as strict (a server or role setting is never loosened). Every unit the
 * setting can be shown in (ms, s, min, h, d) reads as an interval.
 */
export const boundTransaction = `SELECT set_config('idle_in_transaction_session_timeout', '${ENGINE_TRANSACTION_IDLE_SECONDS}s', true)
WHERE current_setting('idle_in_transaction_session_timeout')::interval NOT BETWEEN interval '1 millisecond' AND interval '${ENGINE_TRANSACTION_IDLE_SECONDS} seconds'`;

/** Begins one of the engine's own transactions, bounded (boundTransaction), in one round trip. */
export const beginEngineTransaction = `BEGIN; ${boundTransaction}`;

/** How long one statement of a dashboard sample may run before the server cancels it. */
export const DASHBOARD_STATEMENT_TIMEOUT_MS = 1000;

/**
 * Begins a dashboard sample's transaction: read only (enforced by the server: the dashboard cannot write, whatever
 * it sends), one snapshot for all its statements, each cancelled past DASHBOARD_STATEMENT_TIMEOUT_MS, and bounded
 * as the engine's own (boundTransaction).
 */
export const beginDashboardRead = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${DASHBOARD_STATEMENT_TIMEOUT_MS}; ${boundTransaction}`;

/** How long one statement of a dashboard page read on demand (a queue's page, a search) may run. */
export const DASHBOARD_PAGE_STATEMENT_TIMEOUT_MS = 5000;

/**
 * Begins the read of a dashboard page asked for (a queue's page, a search): as a sample's (beginDashboardRead), with a
 * longer bound per statement: a page is read once per request, not once a second, and may walk more of a queue (a
 * state few of its jobs are in). Past the bound the statement is cancelled, so the read's turn (ReadGate) is never
 * held longer than that by one statement.
 */
export const beginDashboardPageRead = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${DASHBOARD_PAGE_STATEMENT_TIMEOUT_MS}; ${boundTransaction}`;

/**
 * Begins a transactional handler's transaction. Not bounded while the handler runs: it may wait on other
 * systems between its statements; its lease bounds the attempt. Once the handler has returned, only the
 * engine sends statements (the job's completion, then COMMIT), and boundTransaction applies: the completion
 * locks the job's row, which the reaper skips (SKIP LOCKED), so a process that stalled between the two
 * would hold the job until it woke, as the fault campaign's frozen worker did.
 */
export const beginTransaction = 'BEGIN';

/**
 * Ends the server session of a transactional handler's connection that the engine gave up (JobTransaction's
 * abandon): closing the socket alone leaves a statement in flight running, with its transaction and its
 * locks, until the server next writes to the socket. $1 the session's process id
 */
export const endSession = 'SELECT pg_terminate_backend($1)';
export const commitTransaction = 'COMMIT';
export const rollbackTransaction = 'ROLLBACK';

/** A savepoint inside one of the engine's transactions: a scheduler pass fires each schedule after one. */
export const savepoint = 'SAVEPOINT pgqueue_step';
export const rollbackToSavepoint = 'ROLLBACK TO SAVEPOINT pgqueue_step';
export const releaseSavepoint = 'RELEASE SAVEPOINT pgqueue_step';

/**
 * fetch() in a caller's transaction (its `db`): each claim runs under a savepoint, so that a claim that lost a race
 * for a key (unique_violation) is undone alone and tried again, as a claim on the engine's own connection is, and
 * the caller's transaction goes on. SAVEPOINT is refused outside a transaction block (25P01): how a `db` outside one
 * is told apart (its claim then commits at once, as without `db`).
 */
export const claimSavepoint = 'SAVEPOINT pgqueue_claim';

/** The isolation of the caller's transaction (fetch() with `db` on a limited queue needs READ COMMITTED). */
export const transactionIsolation = `SELECT current_setting('transaction_isolation') AS isolation`;
export const rollbackClaimSavepoint = 'ROLLBACK TO SAVEPOINT pgqueue_claim';
export const releaseClaimSavepoint = 'RELEASE SAVEPOINT pgqueue_claim';
