// Flows: jobs that wait for each other, inserted in one transaction. The graph is checked by a pure function
// (flow-graph.ts) before anything is written; this unit inserts each queue's jobs and then the edges.
import { callerExecutor, inTransaction, pgExecutor, type Executor } from '../runtime/db.js';
import { assertDeadLetterTargets, deadLetterTargets } from './dead-letter-targets.js';
import { QueueError } from '../errors.js';
import { flowByQueue, flowEdges, parseFlow } from './flow-graph.js';
import { BULK_CALL_OPTIONS } from '../config/option-keys.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Sender } from './sender.js';
import type { FlowJob, SendOptions } from '../types.js';
import { noUnknownKeys, record } from '../config/validate.js';
import { put } from '../worker/attempt/storable.js';

/** The flow call; PgQueue.flow delegates here. */
export class Flows {
  constructor(
    private readonly rt: Runtime,
    private readonly sender: Sender,
  ) {}

  async flow(jobs: FlowJob[], options?: Pick<SendOptions, 'db'>): Promise<Record<string, string>> {
    const byRef = parseFlow(jobs, this.rt.config.maxPayloadBytes);
    const opts = record('options', options);
    noUnknownKeys('options', opts, BULK_CALL_OPTIONS.keys, BULK_CALL_OPTIONS.hints);
    const entries = [...byRef.values()];
    const run = async (exec: Executor): Promise<Record<string, string>> => {
      // every job's dead-letter queue before the first insert: in the caller's transaction nothing is written either
      const targets = deadLetterTargets(
        entries.map((e) => e.parsed),
        (i) => `jobs[${entries[i]!.index}].deadLetter`,
      );
      if (targets.length > 0) await assertDeadLetterTargets(this.rt.router, exec, targets);
      const ids: Record<string, string> = {};
      for (const [queue, group] of flowByQueue(byRef)) {
        const inserted = await this.sender.insertRows(
          exec,
          queue,
          group.map((g) => g.entry.data),
          group.map((g) => g.entry.parsed),
        );
        if (inserted.length !== group.length) {
          throw new QueueError(
            `flow: queue "${queue}" refused ${group.length - inserted.length} of its jobs (policy or dedupeKey); nothing was inserted`,
            'FLOW_REFUSED',
          );
        }
        // defined, not assigned: a job's ref may be `__proto__`, which an assignment would take for the prototype
        group.forEach((g, i) => put(ids, g.ref, inserted[i]!));
      }
      const edges = flowEdges(byRef, ids);
      if (edges.length > 0) {
        await exec.query(this.rt.statements.insertJobDeps, [
          edges.map((x) => x[0]),
          edges.map((x) => x[1]),
          edges.map((x) => x[2]),
          edges.map((x) => x[3]),
        ]);
      }
      return ids;
    };
    if (opts.db) {
      await this.rt.start();
      return run(callerExecutor(opts.db));
    }
    await this.rt.start();
    return inTransaction(this.rt.connect, (client) => run(pgExecutor(client)));
  }
}
