// The names each kind of options accepts, written once: the parsers refuse any other key with these sets
// (validate.ts, noUnknownKeys), and test/unit/option-keys.spec.ts checks that docs/options.md names every key of
// every set, so that what the docs list and what the code accepts cannot drift apart. Beside each set, what to
// say about a key that is not in it but that a user is likely to write: pg-boss 12's name for one of ours (or an
// older pg-boss's), or an option given in the wrong place.

/** The keys an options object accepts, and a sentence for keys it refuses that a user is likely to write. */
export interface OptionKeys {
  readonly keys: ReadonlySet<string>;
  readonly hints: Readonly<Record<string, string>>;
}

const keySet = (keys: readonly string[], hints: Record<string, string> = {}): OptionKeys =>
  Object.freeze({ keys: new Set(keys), hints: Object.freeze(hints) });

/** The retry, expiry and retention settings: a queue's defaults, which each job may override. */
export const JOB_DEFAULT_KEYS = [
  'retryLimit',
  'retryDelay',
  'retryBackoff',
  'retryDelayMax',
  'expireInSeconds',
  'heartbeatSeconds',
  'deleteAfterSeconds',
  'retentionSeconds',
] as const;

/** What every job takes, however it is sent. */
const JOB_KEYS = ['priority', 'startAfter', 'singletonKey', 'dedupeKey', 'group', 'deadLetter', ...JOB_DEFAULT_KEYS];

/** pg-boss's job options that have no counterpart here, or another form. */
const PG_BOSS_JOB_HINTS: Record<string, string> = {
  id: 'a job id cannot be chosen here: ids come from a sequence',
  singletonSeconds: "pg-boss's singletonSeconds is sendThrottled(name, data, options, seconds) here",
  singletonNextSlot: "pg-boss's singletonNextSlot is sendDebounced(name, data, options, seconds) here",
};

/** createQueue, updateQueue, ensureQueue, defineJob, QueueModule.forFeature, the queue part of @QueueHandler. */
export const QUEUE_OPTIONS = keySet([
  'policy',
  'partition',
  'deadLetter',
  'warningQueueSize',
  'notify',
  'removeOnComplete',
  'failedDeleteAfterSeconds',
  'failUnworkedAfterSeconds',
  'concurrencyLimit',
  'rateLimit',
  ...JOB_DEFAULT_KEYS,
]);

/** fetch() options of pg-boss that a worker loop does not take: it claims from every priority, by priority. */
const FETCH_ONLY = 'a fetch() option: a worker loop claims ready jobs of every priority, highest first';

/** pg-boss 12's work options (and older pg-boss's) that a work() or @QueueHandler here spells otherwise or lacks. */
const PG_BOSS_WORK_HINTS: Record<string, string> = {
  localConcurrency: "pg-boss 12's localConcurrency is concurrency here (handlers at once in this process)",
  teamSize: "pg-boss's teamSize is concurrency here (handlers at once in this process)",
  teamConcurrency: "pg-boss's teamConcurrency is concurrency here (handlers at once in this process)",
  newJobCheckInterval: "pg-boss's newJobCheckInterval is pollingIntervalSeconds here, in seconds",
  newJobCheckIntervalSeconds: "pg-boss's newJobCheckIntervalSeconds is pollingIntervalSeconds here",
  notifyPollingIntervalSeconds:
    'no counterpart: idle loops are woken by NOTIFY (useListenNotify) and pollingIntervalSeconds is their only poll',
  burstWhenReadyExceeds: 'no counterpart: a loop whose claim came back full claims again as soon as it has room',
  burstWhenBatchFull: 'no counterpart: a loop whose claim came back full claims again as soon as it has room',
  includeMetadata: 'no counterpart: getJobById(name, id) reads every stored field',
  transactionTimeoutSeconds: "no counterpart: a transactional handler's attempt is bounded by its lease, expireInSeconds",
  priority: FETCH_ONLY,
  minPriority: FETCH_ONLY,
  maxPriority: FETCH_ONLY,
  ignoreStartAfter: FETCH_ONLY,
  orderByCreatedOn: FETCH_ONLY,
};

/** work() options: the worker loop's own. */
export const WORK_OPTIONS = keySet(
  [
    'concurrency',
    'batchSize',
    'pollingIntervalSeconds',
    'transactional',
    'groupConcurrency',
    'localGroupConcurrency',
    'batch',
    'perJobResults',
    'heartbeatRefreshSeconds',
  ],
  PG_BOSS_WORK_HINTS,
);

/** @QueueHandler options: the queue's settings, the loop's, and a schedule. */
export const HANDLER_OPTIONS = keySet([...QUEUE_OPTIONS.keys, ...WORK_OPTIONS.keys, 'schedule'], PG_BOSS_WORK_HINTS);

/** defineJob(name, options): its queue's settings, and the schema its payloads pass. */
export const DEFINE_JOB_OPTIONS = keySet([...QUEUE_OPTIONS.keys, 'schema'], {
  ...Object.fromEntries(
    [...WORK_OPTIONS.keys].map((k) => [k, `a worker loop option: @QueueHandler(job, { ${k} }) or work(job, { ${k} })`]),
  ),
  schedule: 'a @QueueHandler option: @QueueHandler(job, { schedule })',
});

/** send, enqueue, sendAfter, sendThrottled, sendDebounced, publish (and upsert's insert). */
export const SEND_OPTIONS = keySet([...JOB_KEYS, 'db'], {
  ...PG_BOSS_JOB_HINTS,
  data: "the payload is the call's data argument, not an option",
});

/** One job of insert(name, jobs). */
export const INSERT_JOB_OPTIONS = keySet([...JOB_KEYS, 'data'], {
  ...PG_BOSS_JOB_HINTS,
  db: 'a job cannot choose its own connection: give the call its options.db, insert(name, jobs, { db }), and every job goes in there',
  name: 'every job of insert(name, jobs) goes to the queue named by its first argument',
});

/** One job of flow(jobs). */
export const FLOW_JOB_OPTIONS = keySet([...JOB_KEYS, 'data', 'name', 'ref', 'dependsOn', 'onParentFailure'], {
  ...PG_BOSS_JOB_HINTS,
  db: 'a job cannot choose its own connection: give the call its options.db, flow(jobs, { db }), and every job goes in there',
  options: "pg-boss's options sit on the job itself here (jobs[i].retryLimit, jobs[i].priority, …)",
});

/** The options of the insert(name, jobs, options) and flow(jobs, options) calls themselves. */
export const BULK_CALL_OPTIONS = keySet(['db'], {
  returnId: 'no counterpart: insert() always answers the ids of the jobs inserted',
});

/** schedule(name, cron, data, options): where its slots are read, which schedule it is, and its jobs' options. */
export const SCHEDULE_OPTIONS = keySet([...JOB_KEYS.filter((k) => k !== 'startAfter'), 'tz', 'key', 'missed'], {
  ...PG_BOSS_JOB_HINTS,
  startAfter: "each job starts at its schedule's slot",
  db: 'the jobs are sent by the scheduler, outside any transaction of yours',
  data: "the data is schedule()'s third argument (a @QueueHandler's schedule takes { cron, data })",
});

/** @QueueHandler's `schedule` given as an object: schedule()'s options, its expression and its data. */
export const DECLARED_SCHEDULE_OPTIONS = keySet([...SCHEDULE_OPTIONS.keys, 'cron', 'data'], {
  ...PG_BOSS_JOB_HINTS,
  startAfter: SCHEDULE_OPTIONS.hints.startAfter!,
  db: SCHEDULE_OPTIONS.hints.db!,
});

/** fetch(name, options). */
export const FETCH_OPTIONS = keySet(
  ['batchSize', 'minPriority', 'maxPriority', 'ignoreStartAfter', 'priority', 'db', 'groupConcurrency', 'ignoreGroups'],
  {
    includeMetadata: 'no counterpart: getJobById(name, id) reads every stored field',
    orderByCreatedOn: 'no counterpart: priority: false claims in due-time order, whatever the priority',
  },
);

/** @OnQueueEvent(event, options). */
export const QUEUE_EVENT_OPTIONS = keySet(['queue']);

/** QueueModule.forRoot / new PgQueue(options). */
export const MODULE_OPTIONS = keySet(
  [
    'connectionString',
    'pool',
    'db',
    'schema',
    'migrate',
    'workers',
    'startWorkers',
    'supervise',
    'useListenNotify',
    'listen',
    'monitorIntervalSeconds',
    'maintenanceIntervalSeconds',
    'shutdownTimeoutMs',
    'persistQueueStats',
    'queueStatRetentionDays',
    'warningQueueSize',
    'warningSlowClaimMs',
    'maxPayloadBytes',
    'poolSize',
    'preparedStatements',
    'logger',
    'logJobFailures',
    'tracing',
  ],
  {
    max: "pg-boss's max is poolSize here",
    warningSlowQuerySeconds: "pg-boss's warningSlowQuerySeconds is warningSlowClaimMs here, in milliseconds, for workers' claims",
    openTelemetry: "pg-boss's openTelemetry is tracing here",
    createSchema: 'migrate creates the schema when it is missing',
    schedule: 'supervise also runs the cron scheduler',
    ...Object.fromEntries(
      ['host', 'port', 'database', 'user', 'password', 'ssl', 'application_name', 'connectionTimeoutMillis'].map((k) => [
        k,
        'put it in connectionString, or hand in a pg.Pool as pool',
      ]),
    ),
  },
);
