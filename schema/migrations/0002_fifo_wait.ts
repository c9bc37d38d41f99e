import type { Migration } from './index.js';

/**
 * The settings of the functions below, whose every query is a probe of one key's jobs through an index: plans
 * kept per session (generic, whatever the session's plan_cache_mode: the insert trigger runs once per job
 * of a bulk insert), and never a sequential or bitmap scan, whatever the statistics say (a new queue's partition
 * has none yet, and a plan made then would be kept for the session).
 */
const PROBES_ONLY = 'SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off';

/**
 * Marks the queued key_strict_fifo jobs that wait behind an earlier job of their key, in one pass in key and id
 * order: for the jobs queued before migration 2 (run by it, while the ALTER TABLE holds the table's lock).
 */
export const markWaitingJobs = (s: string) => `
UPDATE ${s}.jobs j SET fifo_wait = 1
FROM (
  SELECT c.queue, c.id, c.start_after,
    min(c.start_after) OVER (PARTITION BY c.queue, c.singleton_key ORDER BY c.id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earliest
  FROM ${s}.jobs c
  WHERE c.policy = 'key_strict_fifo' AND c.state = 'created'
) w
WHERE j.queue = w.queue AND j.id = w.id AND j.blocked_by = 0
  AND (w.earliest <= greatest(w.start_after, now()) OR EXISTS (
    SELECT 1 FROM ${s}.jobs b
    WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.state IN ('retry', 'active', 'failed')
      AND b.policy = 'key_strict_fifo'));`;

/**
 * Marks the queued key_strict_fifo jobs that have an earlier job of their key ahead of them, so that the claim
 * walks only the jobs that may be their key's head, however long each key's backlog is: its cost does not grow
 * with the number of keys, nor with one key's backlog (bench/RESULTS-claim.md).
 */
export const fifoWait: Migration = {
  version: 2,
  name: 'fifo_wait',
  up: (s) => `
-- key_strict_fifo: fifo_wait > 0 marks a queued job that waits behind another job W of its key, one that holds
-- the key (retry, active, failed) or one queued before it that may run no later than it may
-- (W.start_after <= greatest(its own start_after, now)). While W stays, the job cannot be its key's head; the
-- relation is transitive, so a job behind a waiting job is also behind whatever that one waits behind.
-- 1: behind an earlier job of the same insert; 2: behind a job stored before (confirmed at commit, below).
-- 0: every other job (a mark means nothing once the job leaves 'created', and is cleared then). What the
-- triggers below keep true: a queued job marked waiting has a job it waits behind, so the marks hide only jobs
-- that cannot be their key's head. The claim walks the unmarked jobs and still checks each with index probes
-- (a job marked 0 that is not its key's head is skipped there).
ALTER TABLE ${s}.jobs ADD COLUMN fifo_wait smallint NOT NULL DEFAULT 0
  CONSTRAINT jobs_fifo_wait_check CHECK (fifo_wait = 0 OR (fifo_wait IN (1, 2) AND policy = 'key_strict_fifo' AND blocked_by = 0));

-- The key_strict_fifo claim's index: the jobs that may be their key's head, in claim order. One entry per
-- key with queued jobs (plus deferred ones), not one per queued job.
CREATE INDEX jobs_fifo_ready_idx ON ${s}.jobs (queue, priority DESC, start_after, id)
  WHERE state < 'active' AND fifo_wait = 0 AND policy = 'key_strict_fifo';

${markWaitingJobs(s)}

-- When a job that others of its key may wait behind leaves (completed, cancelled, deleted, handed back to
-- the queue, or deferred further), the key's waiting jobs that no longer have a job ahead of them may lead.
-- Called by the triggers below.
--
-- Concurrency (READ COMMITTED, as every statement of the engine): each query here sees every commit made
-- before it ran. A waiting job that this transaction cannot see yet belongs to an insert that confirms its
-- mark when it commits (fifo_confirm_wait). This never counts on a job that another transaction is changing
-- (FOR SHARE SKIP LOCKED passes over it): that transaction runs this function too, after its change, and by
-- then the change that started this run is visible or still locked. The jobs it does count on stay locked
-- until it commits. It only ever clears marks, so running it more often than needed is harmless.
CREATE FUNCTION ${s}.fifo_advance(q text, k text) RETURNS void LANGUAGE plpgsql ${PROBES_ONLY} AS $fn$
DECLARE
  head bigint;
  ahead_ids bigint[];
  ahead_starts timestamptz[];
  to_lead bigint[];
BEGIN
  -- nothing of the key waits: done (the common case of keys holding one job)
  PERFORM 1 FROM ${s}.jobs w
  WHERE w.queue = q AND w.singleton_key = k AND w.state = 'created' AND w.policy = 'key_strict_fifo' AND w.fifo_wait > 0
  LIMIT 1;
  IF NOT FOUND THEN RETURN; END IF;
  -- a job that holds the key keeps every queued job of the key waiting
  PERFORM 1 FROM ${s}.jobs b
  WHERE b.queue = q AND b.singleton_key = k AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
  FOR SHARE SKIP LOCKED;
  IF FOUND THEN RETURN; END IF;
  -- the first queued job that may run now keeps every later one waiting
  SELECT r.id INTO head FROM ${s}.jobs r
  WHERE r.queue = q AND r.singleton_key = k AND r.state = 'created' AND r.policy = 'key_strict_fifo'
    AND r.start_after <= statement_timestamp()
  ORDER BY r.id
  LIMIT 1
  FOR SHARE SKIP LOCKED;
  -- up to it (all deferred, but the head itself), a job keeps waiting only behind an earlier queued job that
  -- may run no later than it, and that no other transaction is changing; the others may lead
  SELECT array_agg(a.id), array_agg(a.start_after) INTO ahead_ids, ahead_starts FROM (
    SELECT c.id, c.start_after FROM ${s}.jobs c
    WHERE c.queue = q AND c.singleton_key = k AND c.state = 'created' AND c.policy = 'key_strict_fifo'
      AND (head IS NULL OR c.id <= head)
    ORDER BY c.id
    FOR SHARE SKIP LOCKED) a;
  SELECT array_agg(x.id) INTO to_lead FROM (
    SELECT x.id FROM ${s}.jobs x
    WHERE x.queue = q AND x.singleton_key = k AND x.state = 'created' AND x.policy = 'key_strict_fifo' AND x.fifo_wait > 0
      AND (head IS NULL OR x.id <= head)
      AND NOT EXISTS (
        SELECT 1 FROM unnest(ahead_ids, ahead_starts) AS w(id, start_after)
        WHERE w.id < x.id AND w.start_after <= greatest(x.start_after, statement_timestamp()))
    -- locked in id order, so that two of these never deadlock on each other
    ORDER BY x.id
    FOR NO KEY UPDATE OF x) x;
  -- by id: as j.id IN (that query), the plan read every waiting job of the queue (2.4 ms a completion, measured
  -- on a new partition of 10,000 jobs)
  UPDATE ${s}.jobs j SET fifo_wait = 0 WHERE j.queue = q AND j.id = ANY (to_lead) AND j.fifo_wait > 0;
END
$fn$;

-- After each change of a key_strict_fifo job. A row trigger on UPDATE costs every updated row of every queue a
-- refetch, whatever its WHEN says (a 20,000-row update of a standard queue: about 110 ms without, 125 ms with,
-- measured), so there is one, AFTER (the same work as a BEFORE trigger cost about 5 ms more there).
-- (a) A job that others may wait behind leaves: completed, cancelled, handed back to the queue, deferred further.
-- (b) A waiting job leaves 'created' (cancelled; a resumed job must not come back marked), or is moved to start
--     earlier (the job it waited behind may no longer run first): it waits no more. Its own departure needs no
--     (a): whatever waited behind it also waits behind what it waited behind.
CREATE FUNCTION ${s}.fifo_on_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF OLD.fifo_wait = 0 THEN
    PERFORM ${s}.fifo_advance(OLD.queue, OLD.singleton_key);
  ELSE
    UPDATE ${s}.jobs SET fifo_wait = 0 WHERE queue = NEW.queue AND id = NEW.id AND fifo_wait > 0;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER jobs_fifo_on_update AFTER UPDATE ON ${s}.jobs FOR EACH ROW
  WHEN (OLD.policy = 'key_strict_fifo' AND (
    (OLD.fifo_wait = 0 AND OLD.state IN ('created', 'retry', 'active', 'failed')
      AND (NEW.state IN ('completed', 'cancelled') OR (NEW.state = 'created' AND (OLD.state <> 'created' OR NEW.start_after > OLD.start_after))))
    OR (OLD.fifo_wait > 0 AND NEW.fifo_wait > 0 AND (NEW.state <> 'created' OR NEW.start_after < OLD.start_after))))
  EXECUTE FUNCTION ${s}.fifo_on_update();

CREATE FUNCTION ${s}.fifo_on_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM ${s}.fifo_advance(OLD.queue, OLD.singleton_key);
  RETURN NULL;
END
$fn$;

CREATE TRIGGER jobs_fifo_on_delete AFTER DELETE ON ${s}.jobs FOR EACH ROW
  WHEN (OLD.policy = 'key_strict_fifo' AND OLD.fifo_wait = 0 AND OLD.state IN ('created', 'retry', 'active', 'failed'))
  EXECUTE FUNCTION ${s}.fifo_on_delete();

-- Each key_strict_fifo job is marked as it is inserted, however it is inserted (send, insert, flow, redrive,
-- plain SQL), before the row is stored. The engine's insert marks 1 the jobs behind an earlier job of the same
-- insert (lib/core/sql/enqueue.ts); this trigger marks the others: 1 when the key's last queued job was inserted
-- by this same transaction (no other transaction can see it, let alone take it away, before this one commits)
-- and may run no later; 2 when a job stored by another transaction keeps it waiting: one holding the key, or the
-- key's first queued job if that may run no later (confirmed at commit, below); else 0. A BEFORE trigger sees the
-- rows inserted before it by the same statement, and never a row that ON CONFLICT skipped. Inserts into other
-- queues do not call it (WHEN); its plans are kept (generic), as a bulk insert may call it for every job.
CREATE FUNCTION ${s}.fifo_mark_wait() RETURNS trigger LANGUAGE plpgsql ${PROBES_ONLY} AS $fn$
DECLARE
  due timestamptz := greatest(NEW.start_after, statement_timestamp());
  last record;
  queued boolean;
BEGIN
  IF NEW.state <> 'created' OR NEW.blocked_by > 0 THEN
    RETURN NEW;
  END IF;
  SELECT c.start_after, c.xmin = pg_current_xact_id()::xid AS mine INTO last FROM ${s}.jobs c
  WHERE c.queue = NEW.queue AND c.singleton_key = NEW.singleton_key AND c.state = 'created' AND c.policy = 'key_strict_fifo'
  ORDER BY c.id DESC
  LIMIT 1;
  queued := FOUND;
  IF queued AND last.start_after <= due THEN
    NEW.fifo_wait := CASE WHEN last.mine THEN 1 ELSE 2 END;
  ELSIF EXISTS (
      SELECT 1 FROM ${s}.jobs b
      WHERE b.queue = NEW.queue AND b.singleton_key = NEW.singleton_key AND b.state IN ('retry', 'active', 'failed')
        AND b.policy = 'key_strict_fifo')
    OR (queued AND (
      SELECT f.start_after FROM ${s}.jobs f
      WHERE f.queue = NEW.queue AND f.singleton_key = NEW.singleton_key AND f.state = 'created' AND f.policy = 'key_strict_fifo'
      ORDER BY f.id
      LIMIT 1) <= due) THEN
    NEW.fifo_wait := 2;
  END IF;
  RETURN NEW;
END
$fn$;

CREATE TRIGGER jobs_fifo_mark_wait BEFORE INSERT ON ${s}.jobs FOR EACH ROW
  WHEN (NEW.policy = 'key_strict_fifo' AND NEW.fifo_wait = 0)
  EXECUTE FUNCTION ${s}.fifo_mark_wait();

-- A job marked 2 waits behind a job that another transaction may take away (complete, cancel, delete) before
-- this insert commits, without seeing the new job. So the mark is confirmed at commit: a job it waits behind
-- is locked (FOR SHARE) until the commit, so that it cannot leave unseen; one that is being changed is passed
-- over (SKIP LOCKED: this never waits). Without such a job, the new job may lead. (A job changed since its
-- insert: cancelled, it is unmarked already; moved earlier, it is unmarked too.)
-- Under REPEATABLE READ or SERIALIZABLE the commit sees this transaction's snapshot: a job found there that
-- another transaction changed since cannot be locked (serialization failure), and then the new job may lead.
CREATE FUNCTION ${s}.fifo_confirm_wait() RETURNS trigger LANGUAGE plpgsql ${PROBES_ONLY} AS $fn$
BEGIN
  BEGIN
    PERFORM 1 FROM ${s}.jobs b
    WHERE b.queue = NEW.queue AND b.singleton_key = NEW.singleton_key AND b.state IN ('retry', 'active', 'failed')
      AND b.policy = 'key_strict_fifo'
    FOR SHARE SKIP LOCKED;
    IF FOUND THEN RETURN NULL; END IF;
    PERFORM 1 FROM ${s}.jobs w
    WHERE w.queue = NEW.queue AND w.singleton_key = NEW.singleton_key AND w.state = 'created' AND w.policy = 'key_strict_fifo'
      AND w.id < NEW.id AND w.start_after <= greatest(NEW.start_after, statement_timestamp())
    LIMIT 1
    FOR SHARE SKIP LOCKED;
    IF FOUND THEN RETURN NULL; END IF;
  EXCEPTION WHEN serialization_failure THEN
    NULL;
  END;
  UPDATE ${s}.jobs SET fifo_wait = 0 WHERE queue = NEW.queue AND id = NEW.id AND fifo_wait > 0;
  RETURN NULL;
END
$fn$;

CREATE CONSTRAINT TRIGGER jobs_fifo_confirm_wait AFTER INSERT ON ${s}.jobs
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.fifo_wait = 2)
  EXECUTE FUNCTION ${s}.fifo_confirm_wait();
`,
};
