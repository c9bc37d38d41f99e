// What tracing costs a send and an attempt, in the engine's own code (lib/core/runtime/tracing.ts) and outside any database:
// a handler called directly, then through Tracing with @opentelemetry/api installed but no SDK registered (the
// calls go straight through), then with an SDK registered whose spans are dropped (the spans are made and ended).
//   npm run build && node bench/tracing-overhead.mjs [--calls 1000000] [--rounds 3]
import { parseArgs } from 'node:util';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { loadTracing } from '../dist/lib/core/runtime/tracing.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } } });
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const tracing = await loadTracing(true);
const job = { id: '1', queue: 'q', retry_count: 0, trace_context: null };
const handler = () => 'ok';
const inserted = async () => ['1'];

async function perCall(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await fn();
  return Number(process.hrtime.bigint() - start) / calls;
}

const cases = {
  'handler, direct': () => handler(),
  'attempt, no SDK': () => tracing.attempt(job, handler),
  'send, no SDK': () => tracing.send('q', 1, inserted),
};
const withSdk = {
  'attempt, SDK (spans dropped)': () => tracing.attempt(job, handler),
  'send, SDK (spans dropped)': () => tracing.send('q', 1, inserted),
};
const results = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, fn] of Object.entries(cases)) (results[name] ??= []).push(await perCall(fn));
}
trace.setGlobalTracerProvider(new BasicTracerProvider());
for (let r = 0; r < rounds; r++) {
  for (const [name, fn] of Object.entries(withSdk)) (results[name] ??= []).push(await perCall(fn));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${calls.toLocaleString('en')} calls per case, ${rounds} rounds; median ns per call (min–max)\n`);
console.log('| case | ns per call |\n| --- | ---: |');
for (const [name, xs] of Object.entries(results))
  console.log(`| ${name} | ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}) |`);
