// docs/design.md, "The job object handed to handlers": what building the object costs, per job, in the shapes the
// worker could give it. No database.
//
//   node bench/design/job-object.mjs [--jobs 1000000] [--rounds 7]
//
// Shapes, each with the fields of a Job and its heartbeat function:
//   literal with a getter   an object literal whose `signal` is a getter (`get signal() { ... }`)
//   literal, no getter      the same literal without `signal`
//   class, getter on the prototype   a class whose `signal` getter reads a private field (the worker's shape)
// Each round builds `--jobs` objects of each shape in turn, keeping the last 1,024 alive so that none is optimised
// away; the table prints ns per object, median (min–max) of the rounds after a warm-up round.
import { median, parseArgs } from '../harness/util.mjs';

const args = parseArgs();
const JOBS = Number(args.jobs ?? 1_000_000);
const ROUNDS = Number(args.rounds ?? 7);

const abort = { signal: new AbortController().signal };
const heartbeat = async () => undefined;
const row = {
  id: '123',
  queue: 'q',
  data: { n: 1 },
  priority: 0,
  retry_count: 0,
  retry_limit: 2,
  singleton_key: null,
  created_on: 1_700_000_000_000,
  started_on: 1_700_000_001_000,
  expire_seconds: 900,
  heartbeat_seconds: null,
};

function literalWithGetter(r, a, hb) {
  return {
    id: r.id,
    name: r.queue,
    data: r.data,
    priority: r.priority,
    retryCount: r.retry_count,
    retryLimit: r.retry_limit,
    singletonKey: r.singleton_key,
    createdOn: new Date(r.created_on),
    startedOn: new Date(r.started_on),
    expireInSeconds: r.expire_seconds,
    heartbeatSeconds: r.heartbeat_seconds,
    heartbeat: hb,
    get signal() {
      return a.signal;
    },
  };
}

function literalWithoutGetter(r, a, hb) {
  return {
    id: r.id,
    name: r.queue,
    data: r.data,
    priority: r.priority,
    retryCount: r.retry_count,
    retryLimit: r.retry_limit,
    singletonKey: r.singleton_key,
    createdOn: new Date(r.created_on),
    startedOn: new Date(r.started_on),
    expireInSeconds: r.expire_seconds,
    heartbeatSeconds: r.heartbeat_seconds,
    heartbeat: hb,
  };
}

class ClassJob {
  #abort;
  constructor(r, a, hb) {
    this.id = r.id;
    this.name = r.queue;
    this.data = r.data;
    this.priority = r.priority;
    this.retryCount = r.retry_count;
    this.retryLimit = r.retry_limit;
    this.singletonKey = r.singleton_key;
    this.createdOn = new Date(r.created_on);
    this.startedOn = new Date(r.started_on);
    this.expireInSeconds = r.expire_seconds;
    this.heartbeatSeconds = r.heartbeat_seconds;
    this.heartbeat = hb;
    this.#abort = a;
  }

  get signal() {
    return this.#abort.signal;
  }
}

const shapes = [
  ['literal with a getter', (r, a, hb) => literalWithGetter(r, a, hb)],
  ['literal, no getter', (r, a, hb) => literalWithoutGetter(r, a, hb)],
  ['class, getter on the prototype', (r, a, hb) => new ClassJob(r, a, hb)],
];

const keep = new Array(1024);
let sink = 0;
function run(build) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < JOBS; i++) {
    const job = build(row, abort, heartbeat);
    keep[i & 1023] = job;
    sink += job.priority;
  }
  return Number(process.hrtime.bigint() - t0) / JOBS;
}

const ns = shapes.map(() => []);
for (let r = 0; r <= ROUNDS; r++) {
  for (const [i, [, build]] of shapes.entries()) {
    const t = run(build);
    if (r > 0) ns[i].push(t);
  }
}
// reading `signal` works on every shape (and keeps `keep` and `sink` observable)
if (!keep.every((j) => j.signal === abort.signal || j.signal === undefined) || sink !== 0) throw new Error('unexpected');

console.log(`# Building the job object, ns per object: median (min–max) of ${ROUNDS} rounds of ${JOBS.toLocaleString('en-US')}`);
console.log(`# Node ${process.version}, ${(await import('node:os')).cpus().length} cores, ${new Date().toISOString().slice(0, 10)}\n`);
console.log('| shape | ns per object |');
console.log('| --- | ---: |');
for (const [i, [label]] of shapes.entries()) {
  const xs = ns[i];
  console.log(`| ${label} | ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}) |`);
}
