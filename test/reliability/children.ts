import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers/db.js';

/** What a worker child does with each job (see child-worker.mjs); every mode appends to the ledger first. */
export type ChildMode = 'ledger' | 'block' | 'poison' | 'span';

/** Settings of one worker child: where it works, and with what engine and loop options. */
export interface ChildSettings {
  url: string;
  schema: string;
  queue: string;
  mode: ChildMode;
  work: { concurrency?: number; batchSize?: number; pollingIntervalSeconds?: number };
  /** PgQueue options other than connectionString, schema and logger. */
  engine?: Record<string, unknown>;
  /** Report each handler start over IPC (leave off for bulk runs). */
  reportStarts?: boolean;
  /** span mode: how long each handler pauses, in ms. */
  spanMs?: number;
}

/** A message a worker child sends over IPC. */
export type ChildMessage =
  | { type: 'ready'; pid: number; workerId: string }
  | { type: 'started'; id: string; retryCount: number }
  | { type: 'log'; level: 'log' | 'warn' | 'error'; message: string }
  | { type: 'stopped' };

/** How a child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const SCRIPT = fileURLToPath(new URL('./child-worker.mjs', import.meta.url));
const CAMPAIGN_SCRIPT = fileURLToPath(new URL('./campaign-worker.mjs', import.meta.url));
const STDERR_TAIL = 4000;
const running = new Set<WorkerChild<object>>();

/**
 * One worker process, forked from this test (child-worker.mjs, or another script that speaks the same
 * messages); `stopWorkerChildren()` in afterAll ends whatever is left.
 */
export class WorkerChild<S extends object = ChildSettings> {
  readonly messages: ChildMessage[] = [];
  exit: ChildExit | null = null;
  private stderr = '';
  private readonly proc: ChildProcess;

  constructor(
    readonly settings: S,
    script = SCRIPT,
  ) {
    // execArgv: [] so the child does not inherit Jest's --experimental-vm-modules: it is a plain node process.
    this.proc = fork(script, [], {
      execArgv: [],
      env: { ...process.env, PGQUEUE_CHILD: JSON.stringify(settings) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    running.add(this);
    this.proc.on('message', (m) => this.messages.push(m as ChildMessage));
    this.proc.stdout!.on('data', () => undefined);
    this.proc.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    this.proc.on('exit', (code, signal) => {
      this.exit = { code, signal };
      running.delete(this);
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** The worker id the child's loop claims under (known once ready). */
  get workerId(): string {
    const ready = this.messages.find((m) => m.type === 'ready');
    if (!ready) throw new Error(`child ${this.pid} is not ready yet`);
    return ready.workerId;
  }

  /** Waits until the child's loop runs; fails with its stderr if it dies first. */
  async ready(timeoutMs = 15_000): Promise<this> {
    await until(
      () => {
        if (this.exit) throw new Error(`child ${this.pid} exited (${JSON.stringify(this.exit)}) before it was ready:\n${this.stderr}`);
        return this.messages.some((m) => m.type === 'ready');
      },
      `child ${this.pid} ready`,
      timeoutMs,
    );
    return this;
  }

  /** The engine's log lines of this child at the given levels. */
  logs(...levels: ('log' | 'warn' | 'error')[]): string[] {
    return this.messages.flatMap((m) => (m.type === 'log' && levels.includes(m.level) ? [m.message] : []));
  }

  /** The ids of the jobs whose handler started (with `reportStarts`). */
  get started(): string[] {
    return this.messages.flatMap((m) => (m.type === 'started' ? [m.id] : []));
  }

  /** Waits until the child has exited, for at most `timeoutMs`. */
  async exited(timeoutMs = 15_000): Promise<ChildExit> {
    return until(() => this.exit, `child ${this.pid} exited`, timeoutMs);
  }

  /** Freezes the process (SIGSTOP), as a long GC pause or a stalled VM would: timers, heartbeats and sockets stop. */
  freeze(): void {
    if (!this.exit) this.proc.kill('SIGSTOP');
  }

  /** Lets a frozen process run again (SIGCONT). */
  thaw(): void {
    if (!this.exit) this.proc.kill('SIGCONT');
  }

  /** Sends a signal and waits for the process to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<ChildExit> {
    if (!this.exit) this.proc.kill(signal);
    return this.exited();
  }

  /** Asks the child to close its queue (drain, hand back) and exit; SIGKILLs it after `graceMs`. */
  async stop(graceMs = 10_000): Promise<ChildExit> {
    if (this.exit) return this.exit;
    if (this.proc.connected) this.proc.send('stop');
    try {
      return await this.exited(graceMs);
    } catch {
      return this.kill('SIGKILL');
    }
  }

  /** The last few KB the child wrote to stderr, for failure messages. */
  get stderrTail(): string {
    return this.stderr;
  }
}

/** Forks a worker child (child-worker.mjs) with these settings. */
export function startWorkerChild(settings: ChildSettings): WorkerChild {
  return new WorkerChild(settings);
}

/** Settings of a campaign worker (campaign-worker.mjs): the queues of each handler mode, and its engine. */
export interface CampaignSettings {
  url: string;
  schema: string;
  queues: { plain: string; tx: string; fifo: string; flowParent: string; flowChild: string; group: string };
  /** The group loop's groupConcurrency. */
  groupLimit: number;
  /** PgQueue options other than connectionString, schema and logger. */
  engine?: Record<string, unknown>;
}

/** Forks a campaign worker (campaign-worker.mjs): one engine that works every handler mode at once. */
export function startCampaignChild(settings: CampaignSettings): WorkerChild<CampaignSettings> {
  return new WorkerChild(settings, CAMPAIGN_SCRIPT);
}

/** Stops every worker child still running (for afterAll): gracefully, else with SIGKILL. */
export async function stopWorkerChildren(graceMs = 5_000): Promise<void> {
  await Promise.all([...running].map((c) => c.stop(graceMs)));
}

/** Creates the ledger the children append to: one row per handler run. No constraints: the test counts. */
export function ledgerTableSql(schema: string): string {
  return `CREATE TABLE "${schema}".ledger (
    job_id bigint NOT NULL,
    claim_count integer,
    retry_count integer NOT NULL,
    pid integer NOT NULL,
    worker_id text,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`;
}
