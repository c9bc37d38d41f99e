// The common Nest setups, each compiling and running one small app against the packed package: an ESM app
// (NodeNext), a CommonJS app compiled with NodeNext, and the classic `"module": "commonjs"` tsconfig (node10
// resolution, which reads no `exports`). The app works a typed job, sends one inside a Drizzle transaction and
// reads the queue's table through `nestjs-pgqueue/schema` with the app's own Drizzle: in a CommonJS app that
// type-checks only if the schema's types and the app's are one copy of drizzle-orm's.
import { rmSync } from 'node:fs';
import { compileApp, makeApp, runApp, unpackedPackage, type AppSetup } from '../helpers/packed-app.js';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

const pool = testPool(1);
let pkg: { dir: string; cleanup(): void };
beforeAll(() => (pkg = unpackedPackage()), 120_000);
afterAll(async () => {
  pkg?.cleanup();
  await pool.end();
});

const common = { target: 'ES2022', strict: true, experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: true };
const setups: [string, AppSetup][] = [
  ['an ESM app (NodeNext)', { type: 'module', compilerOptions: { ...common, module: 'NodeNext', moduleResolution: 'NodeNext' } }],
  [
    'a CommonJS app compiled with NodeNext',
    { type: 'commonjs', compilerOptions: { ...common, module: 'NodeNext', moduleResolution: 'NodeNext' } },
  ],
  [
    'a classic CommonJS app (module commonjs, node10 resolution)',
    { type: 'commonjs', compilerOptions: { ...common, module: 'CommonJS', moduleResolution: 'Node10', esModuleInterop: true } },
  ],
];

/** The app: the same source in every setup. It prints one JSON line and exits. */
const main = (schema: string) => `
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { count, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { defineJob, QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { createQueueSchema } from 'nestjs-pgqueue/schema';

const Greet = defineJob<{ who: string }>('greet', { retryLimit: 0 });
const { jobs } = createQueueSchema('${schema}');

@Injectable()
class Greeter {
  @QueueHandler(Greet, { pollingIntervalSeconds: 0.1 })
  greet(job: Job<{ who: string }>) {
    return { greeted: job.data.who };
  }
}

@Module({ imports: [QueueModule.forRoot({ connectionString: process.env.DATABASE_URL!, schema: '${schema}' })], providers: [Greeter] })
class AppModule {}

async function main() {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  const queue = app.get(QueueService);
  const pool = new Pool({ connectionString: process.env.DATABASE_URL });
  const db = drizzle(pool);
  const sent = await queue.send(Greet, { who: 'plain' });
  const inTx = await db.transaction((tx) => queue.send(Greet, { who: 'in a transaction' }, { db: tx }));
  const deadline = Date.now() + 20_000;
  let done = 0;
  while (done < 2 && Date.now() < deadline) {
    const [row] = await db.select({ n: count() }).from(jobs).where(eq(jobs.state, 'completed'));
    done = row!.n;
    if (done < 2) await new Promise((r) => setTimeout(r, 50));
  }
  const outputs = await db.select({ output: jobs.output }).from(jobs).orderBy(jobs.id);
  console.log(JSON.stringify({ sent, inTx, done, outputs: outputs.map((o) => o.output) }));
  await pool.end();
  await app.close();
}
void main();
`;

describe('installed in the common setups', () => {
  it.each(setups)(
    '%s compiles, runs, and reads the schema with its own Drizzle',
    async (_name, setup) => {
      const schema = uniqueSchema('matrix');
      const app = makeApp(pkg.dir, setup, { 'src/main.ts': main(schema) });
      try {
        compileApp(app);
        const run = runApp(app, 'src/main.js', { DATABASE_URL: testUrl() });
        expect(await run.exited()).toBe(0);
        const line = run.output().trim().split('\n').pop()!;
        expect(JSON.parse(line)).toEqual({
          sent: expect.any(String),
          inTx: expect.any(String),
          done: 2,
          outputs: [{ greeted: 'plain' }, { greeted: 'in a transaction' }],
        });
        // nothing else printed: no warning of Node's, none of the queue's
        expect(run.output().trim()).toBe(line);
      } finally {
        await dropSchema(pool, schema);
        rmSync(app, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
