// The wiring of one engine: the units PgQueue's public methods delegate to, made once around a shared runtime.
import type { ResolvedConfig } from '../config/config.js';
import { BulkDelete } from '../queues/bulk-delete.js';
import { ClusterRegistry } from '../passes/cluster-registry.js';
import { Fetcher } from '../jobs/fetcher.js';
import { Flows } from '../jobs/flows.js';
import { JobDependencies } from '../jobs/dependencies.js';
import { JobControl } from '../jobs/control.js';
import { JobFinder } from '../jobs/finder.js';
import { PubSub } from '../jobs/pub-sub.js';
import { JobUpdate } from '../jobs/update.js';
import { QueueAdmin } from '../queues/admin.js';
import { QueueStatsReader } from '../stats/queue-stats.js';
import { Redrive } from '../jobs/redrive.js';
import type { EngineEvents } from '../events.js';
import { Runtime } from './runtime.js';
import { Scheduler } from '../passes/scheduler.js';
import { Schedules } from '../queues/schedules.js';
import { Sender } from '../jobs/sender.js';
import type { QueueLogger } from '../types.js';
import { LoopRegistry } from '../worker/registry.js';

/** Each unit of an engine, by what PgQueue asks of it. */
export interface EngineUnits {
  readonly runtime: Runtime;
  readonly admin: QueueAdmin;
  readonly bulk: BulkDelete;
  readonly stats: QueueStatsReader;
  readonly sender: Sender;
  readonly flows: Flows;
  readonly fetcher: Fetcher;
  readonly jobs: JobControl;
  readonly redrive: Redrive;
  readonly finder: JobFinder;
  readonly updates: JobUpdate;
  readonly registry: LoopRegistry;
  readonly cluster: ClusterRegistry;
  readonly schedules: Schedules;
  readonly pubSub: PubSub;
  readonly dependencies: JobDependencies;
}

export function engineUnits(config: ResolvedConfig, log: QueueLogger, events: EngineEvents): EngineUnits {
  const runtime = new Runtime(config, log, events);
  const sender = new Sender(runtime);
  const registry = new LoopRegistry(runtime);
  const cluster = new ClusterRegistry(runtime, registry);
  registry.loopsChanged = () => cluster.nudge();
  runtime.attach(cluster);
  const scheduler = new Scheduler(runtime, sender);
  runtime.attach(scheduler);
  const jobContext = { db: () => runtime.db(), router: runtime.router, channel: config.channel };
  return {
    runtime,
    admin: new QueueAdmin(runtime),
    bulk: new BulkDelete(runtime),
    stats: new QueueStatsReader(runtime),
    sender,
    flows: new Flows(runtime, sender),
    fetcher: new Fetcher(runtime),
    jobs: new JobControl(jobContext),
    redrive: new Redrive(jobContext),
    finder: new JobFinder(runtime),
    updates: new JobUpdate(runtime, sender),
    registry,
    cluster,
    schedules: new Schedules(runtime, () => scheduler.nudge()),
    pubSub: new PubSub(runtime),
    dependencies: new JobDependencies(runtime),
  };
}
