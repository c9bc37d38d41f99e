import { FIFO_HEAD, JOB_COLUMNS } from './fragments.js';

// A job as getJobById reads it (with what holds it back and what it holds back), and the jobs linked to it by a
// flow (job_deps: parent -> child). `t`: the table that holds queue $1's jobs; the linked jobs may be in any queue,
// so they are read from `jobs`, one probe of a partition's primary key each.

/**
 * A job's every stored field (JOB_COLUMNS), and the facts getJobById adds: its policy, group and throttle slot (its
 * own columns), why it waits (`blocked`: 'parents' while a flow parent has not completed; 'key' while it is a
 * key_strict_fifo job that is not its key's head: another job of its key holds the key or is queued ahead of it,
 * read with the claim's own probes), and whether flow children wait for it (`blocking`: it has not finished, and
 * job_deps links children to it: one probe of its primary key). Every table it reads but job_deps is `t`, so that
 * it is planned for the queue's table alone (test/core/partition.spec.ts). A link outlives its child (deleted,
 * cancelled or completed by hand), so `blocking` true here only says a link exists: waitingChildren then reads the
 * children themselves. $1 queue, $2 id
 */
export const getJobDetails = (s: string, t = `${s}.jobs`) => `
SELECT ${JOB_COLUMNS}, j.policy, j.group_id, j.group_tier, j.singleton_on, j.slot_until,
  CASE WHEN j.state = 'created' AND j.blocked_by > 0 THEN 'parents'
    WHEN j.state = 'created' AND j.policy = 'key_strict_fifo' AND NOT (${FIFO_HEAD(t, 'j')}) THEN 'key' END AS blocked,
  j.state < 'completed' AND coalesce((
    SELECT true FROM ${s}.job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), false) AS blocking
FROM ${t} j WHERE j.queue = $1 AND j.id = $2::bigint`;

/**
 * Whether a child linked to job $2 of queue $1 still waits for its parents (created, with parents not completed):
 * the children's own rows, in any queue, for getJobById's `blocking` once getJobDetails found a link.
 */
export const waitingChildren = (s: string) => `
SELECT EXISTS (
  SELECT 1 FROM ${s}.job_deps d JOIN ${s}.jobs c ON c.queue = d.child_queue AND c.id = d.child_id
  WHERE d.parent_queue = $1 AND d.parent_id = $2::bigint AND c.state = 'created' AND c.blocked_by > 0
) AS waiting`;

/**
 * The jobs linked to job $2 of queue $1 on the side `them` of job_deps (`me` the other side), by queue and id. No
 * row: there is no such job; one row of nulls: it has no link. A linked job deleted since is left out.
 */
const linkedJobs = (s: string, t: string, me: 'parent' | 'child', them: 'parent' | 'child') => `
SELECT x.* FROM ${t} me
LEFT JOIN LATERAL (
  SELECT ${JOB_COLUMNS} FROM ${s}.job_deps d
  JOIN ${s}.jobs j ON j.queue = d.${them}_queue AND j.id = d.${them}_id
  WHERE d.${me}_queue = me.queue AND d.${me}_id = me.id
) x ON true
WHERE me.queue = $1 AND me.id = $2::bigint
ORDER BY x.queue, x.id::bigint`;

/** The parents of job $2 of queue $1: the jobs it waits or waited for (job_deps_child_idx). */
export const getJobParents = (s: string, t = `${s}.jobs`) => linkedJobs(s, t, 'child', 'parent');

/** The children of job $2 of queue $1: the jobs that wait or waited for it (job_deps' primary key). */
export const getJobChildren = (s: string, t = `${s}.jobs`) => linkedJobs(s, t, 'parent', 'child');
