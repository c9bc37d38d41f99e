// What the checks of what goes in cost: toJson (a job's data: JSON-only values, NUL characters, lone surrogates, the
// nesting depth, the size), describeFailure (a thrown error made storable, without credentials, within its byte cap),
// and send() as a caller makes it, one job at a time against PostgreSQL.
// Usage: node bench/input-checks.mjs [--dist dist] [--rounds 7] [--sends 2000]   (DATABASE_URL, else the machine's server)
// --dist: the build to measure (`npm run build` first). To compare two commits, build each and copy its dist/ aside,
// then run this file once per copy. Prints one JSON line: medians over the rounds, µs per call (send: ms).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const dist = resolve(arg('dist', new URL('../dist', import.meta.url).pathname));
const ROUNDS = Number(arg('rounds', 7));
const SENDS = Number(arg('sends', 2000));
const from = (path) => import(pathToFileURL(`${dist}/${path}`).href);

const { toJson } = await from('lib/core/config/validate.js');
const { describeFailure } = await from('lib/core/worker/attempt/failure.js');
const { PgQueue } = await from('lib/core/index.js');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** µs per call of `f` over `n` calls, median of ROUNDS rounds (after one round to warm up). */
function perCall(f, n) {
  const rounds = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f(i);
    const us = Number(process.hrtime.bigint() - t) / 1000 / n;
    if (r > 0) rounds.push(us);
  }
  return Number(median(rounds).toFixed(2));
}

const small = { userId: 'u-1842', email: 'ada@example.com', plan: 'pro', retries: 0, tags: ['welcome', 'eu'] };
const withDates = { ...small, at: new Date(0), items: Array.from({ length: 5 }, (_, i) => ({ sku: `A-${i}`, qty: i, at: new Date(i) })) };
const medium = {
  order: 'o-99812',
  lines: Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i}`, qty: i % 7, price: 1999 + i, note: 'gift wrap, leave at door' })),
  address: { street: '1 Infinite Loop', city: 'Cupertino', zip: '95014', country: 'US' },
};
const deep = (() => {
  let v = { leaf: true };
  for (let i = 0; i < 50; i++) v = { child: v, n: i };
  return v;
})();

const plain = new Error('connect ECONNREFUSED 10.0.0.5:5432');
Object.assign(plain, { code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: '10.0.0.5', port: 5432 });
const axiosLike = Object.assign(new Error('Request failed with status code 401'), {
  name: 'AxiosError',
  code: 'ERR_BAD_REQUEST',
  status: 401,
  config: { url: 'https://api.example.com/charge', headers: { Authorization: 'Bearer x.y.z' }, data: '{"card":"4111"}' },
  request: { method: 'POST', path: '/charge' },
  response: { status: 401, headers: { 'set-cookie': ['s=1'] }, data: { error: 'invalid_token' } },
  details: { client_secret: 'cs', attempt: 1 },
});

const result = {
  dist,
  toJsonUs: {
    small: perCall(() => toJson('data', small, 1_048_576), 20_000),
    withDates: perCall(() => toJson('data', withDates, 1_048_576), 20_000),
    medium100Lines: perCall(() => toJson('data', medium, 1_048_576), 2_000),
    nested50: perCall(() => toJson('data', deep, 1_048_576), 20_000),
  },
  describeFailureUs: {
    plainError: perCall((i) => describeFailure(plain, i), 20_000),
    axiosLike: perCall((i) => describeFailure(axiosLike, i), 20_000),
  },
};

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `bench_inputs_${process.pid}`;
const q = new PgQueue({
  connectionString: url,
  schema,
  supervise: false,
  poolSize: 2,
  logger: { log() {}, warn() {}, error: console.error },
});
try {
  await q.start();
  await q.createQueue('bench.send');
  const latencies = [];
  for (let i = 0; i < 200; i++) await q.send('bench.send', small);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < SENDS; i++) {
    const t = process.hrtime.bigint();
    await q.send('bench.send', i % 2 ? small : medium);
    latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  latencies.sort((a, b) => a - b);
  result.sendMs = {
    sends: SENDS,
    p50: Number(latencies[Math.floor(SENDS * 0.5)].toFixed(3)),
    p95: Number(latencies[Math.floor(SENDS * 0.95)].toFixed(3)),
    perSecond: Math.round(SENDS / seconds),
  };
} finally {
  await q.close();
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await c.end();
}
console.log(JSON.stringify(result));
