// The report: one table of every system's figures (median (min–max) over the repetitions), pgqueue's
// own measures, pgqueue's ratio to each peer, and each target (docs/performance.md, "Targets") checked against this run.
import { repetitionsText } from './meta.mjs';
import { fmt, median } from './util.mjs';

/** The columns of the main table: which workload cell and which figure of its results. */
export const COLUMNS = [
  { key: 'insert', metric: 'rowsPerSec', title: 'bulk insert rows/s', higherIsBetter: true },
  { key: 'drain', metric: 'jobsPerSec', title: 'drain jobs/s', higherIsBetter: true },
  { key: 'long-drain', metric: 'jobsPerSec', title: 'long drain jobs/s', higherIsBetter: true },
  { key: 'steady', metric: 'sendsPerSec', title: 'steady sends/s', higherIsBetter: true },
  { key: 'steady', metric: 'p50Ms', title: 'steady e2e p50 ms', higherIsBetter: false },
  { key: 'steady', metric: 'p95Ms', title: 'steady e2e p95 ms', higherIsBetter: false },
  { key: 'idle', metric: 'p50Ms', title: 'idle pickup p50 ms', higherIsBetter: false },
  { key: 'idle', metric: 'p95Ms', title: 'idle pickup p95 ms', higherIsBetter: false },
];

/** pgqueue's own measures (scale, flat, memory). */
function pgqueueRows(sizes) {
  return [
    ...sizes.scaleProcesses.map((p) => ({
      key: `scale-${p}`,
      metric: 'jobsPerSec',
      title: `scale: drain with ${p} worker process${p > 1 ? 'es' : ''}, jobs/s`,
    })),
    ...sizes.scaleProcesses.map((p) => ({ key: `scale-${p}`, metric: 'coresBusy', title: `scale: machine cores busy with ${p}` })),
    ...sizes.scaleProcesses.map((p) => ({ key: `scale-${p}`, metric: 'cpuPerJob', title: `scale: machine CPU µs per job with ${p}` })),
    { key: 'flat', metric: 'emptyMs', title: `flat: claim of ${sizes.flatBatch} (median ms), empty table` },
    {
      key: 'flat',
      metric: 'fullMs',
      title: `flat: claim of ${sizes.flatBatch} (median ms), ${sizes.flatRows.toLocaleString('en-US')} finished rows`,
    },
    { key: 'flat', metric: 'ratio', title: 'flat: ratio full / empty' },
    { key: 'memory', metric: 'peakRssMb', title: `memory: worker RSS peak MB, draining at concurrency ${sizes.memoryConcurrency}` },
  ];
}

/** The successful values of one figure of one cell. */
function values(results, systemId, key, metric) {
  return (results.get(`${systemId}|${key}`) ?? []).filter((r) => r.ok && typeof r[metric] === 'number').map((r) => r[metric]);
}

/** The median of a figure, or null when it was not measured. */
function med(results, systemId, key, metric) {
  const v = values(results, systemId, key, metric);
  return v.length ? median(v) : null;
}

function cell(results, systemId, key, metric) {
  const runs = results.get(`${systemId}|${key}`);
  if (!runs) return '—';
  const v = values(results, systemId, key, metric);
  const failed = runs.filter((r) => !r.ok);
  if (v.length === 0) return failed[0]?.short ?? '—';
  let text = fmt(median(v));
  if (v.length > 1) text += ` (${fmt(Math.min(...v))}–${fmt(Math.max(...v))})`;
  if (failed.length) text += ` [${failed.length} of ${runs.length} failed]`;
  return text;
}

const row = (cells) => `| ${cells.join(' | ')} |`;

/** The markdown of the whole report. */
export function buildReport({ systems, results, meta, sizes, settings }) {
  const out = [];
  // Only the columns this run measured (a run of --workloads scale has none of them).
  const columns = COLUMNS.filter((c) => systems.some((s) => results.has(`${s.id}|${c.key}`)));
  const pgq = systems.find((s) => s.id === 'pgqueue');
  out.push('# Benchmark: pgqueue, its peers and a raw-SQL loop on one machine');
  out.push('');
  out.push(`Command: \`${meta.command}\` (pgqueue at ${meta.code})`);
  out.push('');
  const repText = repetitionsText(meta.reps);
  out.push(
    `Run on ${meta.date}, ${meta.durationMinutes.toFixed(1)} minutes. ${repText}. ${sizes.jobs.toLocaleString('en-US')} jobs per insert/drain (${sizes.longDrainJobs.toLocaleString('en-US')} in the long drain), no-op handler, one worker process unless said otherwise.`,
  );
  if (meta.note) out.push('', meta.note);
  out.push('');
  out.push('## Machine');
  out.push('');
  for (const line of meta.machine) out.push(`- ${line}`);
  out.push('');
  out.push('## Results');
  if (columns.length) {
    const listed = systems.filter((s) => columns.some((c) => results.has(`${s.id}|${c.key}`)));
    out.push('');
    out.push(row(['system', ...columns.map((c) => c.title)]));
    out.push(row(['---', ...columns.map(() => '---:')]));
    for (const s of listed) out.push(row([s.label, ...columns.map((c) => cell(results, s.id, c.key, c.metric))]));
    out.push('');
    out.push(
      '"—": not part of that system\'s workloads. e2e and pickup latency: from `send()` returning in the producer process to the handler starting in the worker process.',
    );
  }
  const own = pgq ? pgqueueRows(sizes).filter((r) => results.has(`pgqueue|${r.key}`)) : [];
  if (own.length) {
    out.push('');
    out.push('### pgqueue only');
    out.push('');
    out.push(row(['measure', 'pgqueue']));
    out.push(row(['---', '---:']));
    for (const r of own) out.push(row([r.title, cell(results, 'pgqueue', r.key, r.metric)]));
  }
  out.push('');
  out.push(...ratios(systems, results, columns));
  out.push('');
  out.push(...targets(systems, results, settings));
  out.push('');
  out.push('## Settings');
  out.push('');
  for (const s of systems) out.push(`- **${s.label}**: ${s.settingsText}`);
  out.push(`- Workloads: ${settingsLine(sizes)}`);
  const failures = [];
  for (const s of systems) {
    for (const [k, runs] of results) {
      if (!k.startsWith(`${s.id}|`)) continue;
      for (const r of runs) if (!r.ok && !r.skipped) failures.push(`- ${s.id}, ${k.split('|')[1]}, repetition ${r.rep}: ${r.error}`);
    }
  }
  if (failures.length) {
    out.push('');
    out.push('## Failed runs');
    out.push('');
    out.push(...failures);
  }
  out.push('');
  out.push('## What each workload does');
  out.push('');
  out.push(...WORKLOAD_NOTES(sizes));
  return out.join('\n') + '\n';
}

function settingsLine(sizes) {
  return [
    `${sizes.jobs.toLocaleString('en-US')} jobs (long drain ${sizes.longDrainJobs.toLocaleString('en-US')})`,
    `bulk chunks of ${sizes.insertChunk}`,
    `steady ${sizes.steadySends} sends`,
    `idle ${sizes.idleSends} sends ${sizes.idleIntervalMs} ms apart`,
    `${sizes.warmupSends} warm-up sends left out`,
    `scale ${sizes.scaleProcesses.join('/')} processes, ${sizes.longDrainJobs.toLocaleString('en-US')} jobs (warm-up ${sizes.scaleWarmupJobs.toLocaleString('en-US')} jobs per process)`,
    `flat ${sizes.flatRows.toLocaleString('en-US')} rows, ${sizes.flatClaims} claims of ${sizes.flatBatch}`,
    `memory at concurrency ${sizes.memoryConcurrency}, RSS sampled every ${sizes.memorySampleMs} ms`,
  ].join('; ');
}

const WORKLOAD_NOTES = (sizes) => [
  `- **insert**: ${sizes.jobs.toLocaleString('en-US')} jobs through the system's own bulk API (pgqueue \`insert\`, pg-boss \`insert\`, Graphile Worker \`addJobs\`, BullMQ \`addBulk\`, raw SQL one \`INSERT … SELECT … unnest\`), ${sizes.insertChunk} per call, one call at a time; rows/s.`,
  `- **drain**: ${sizes.jobs.toLocaleString('en-US')} jobs inserted first; the clock runs from starting one worker until the database (Redis for BullMQ) says every job is completed; jobs/s.`,
  `- **long drain**: the drain of ${sizes.longDrainJobs.toLocaleString('en-US')} jobs: the rate once a worker has started, and how a claim copes as the table fills with worked rows.`,
  `- **steady**: a producer process sends ${sizes.steadySends} jobs one at a time, awaiting each, while a worker runs: sends/s, and latency from each \`send()\` returning to its handler starting.`,
  `- **idle**: ${sizes.idleSends} jobs sent ${sizes.idleIntervalMs} ms apart to an idle worker (a producer process): pickup latency, measured the same way.`,
  `- **scale**: the drain of ${sizes.longDrainJobs.toLocaleString('en-US')} jobs by ${sizes.scaleProcesses.join(', ')} worker processes on one database; they connect and first drain together a warm-up backlog of ${sizes.scaleWarmupJobs.toLocaleString('en-US')} jobs per process, left out; the clock starts after it. With it, how many of the machine's cores were busy over the drain and the machine's CPU per job (every process: the database's, the workers', the bench's; /proc/stat, Linux only).`,
  `- **flat**: pgqueue's \`fetch\` of ${sizes.flatBatch} jobs, ${sizes.flatClaims} times, median ms; on a table holding only the ready jobs, then again after ${sizes.flatRows.toLocaleString('en-US')} completed rows of the same queue were inserted (one \`INSERT … SELECT generate_series\`) and the table vacuumed and analysed.`,
  `- **memory**: the drain at concurrency ${sizes.memoryConcurrency}; the peak of the process's RSS (\`process.memoryUsage().rss\` every ${sizes.memorySampleMs} ms) while it runs.`,
  '- Every (system, workload, repetition) runs in a process of its own against a database created for it and dropped after it (BullMQ on Redis: its database index flushed before and after).',
];

function ratios(systems, results, columns) {
  const out = ['## pgqueue against each peer', ''];
  const others = systems.filter((s) => s.id !== 'pgqueue' && s.kind !== 'pgqueue-variant');
  if (!systems.some((s) => s.id === 'pgqueue') || others.length === 0) return [...out, 'pgqueue or its peers were not part of this run.'];
  out.push(
    "pgqueue's median ÷ the other system's median. Throughput (rows/s, jobs/s, sends/s): above 1 means pgqueue is faster. Latency (ms): below 1 means pgqueue is faster.",
  );
  out.push('');
  if (columns.length === 0) return [...out, 'No figure of this run has a peer to compare with.'];
  out.push(row(['pgqueue ÷', ...columns.map((c) => c.title)]));
  out.push(row(['---', ...columns.map(() => '---:')]));
  for (const s of others) {
    if (!columns.some((c) => results.has(`${s.id}|${c.key}`))) continue;
    const cells = columns.map((c) => {
      const a = med(results, 'pgqueue', c.key, c.metric);
      const b = med(results, s.id, c.key, c.metric);
      return a === null || b === null || b === 0 ? '—' : `${(a / b).toFixed(2)}×`;
    });
    out.push(row([s.label, ...cells]));
  }
  return out;
}

function targets(systems, results, settings) {
  const out = ['## Targets (docs/performance.md), in this run', ''];
  const P = 'pgqueue';
  const of = (kind) => systems.filter((s) => kind.includes(s.kind));
  const peers = of(['pg-peer', 'redis-peer']);
  const pgPeers = of(['pg-peer']);
  const raws = of(['raw']);
  const best = (list, key, metric, pick) => {
    let found = null;
    for (const s of list) {
      const v = med(results, s.id, key, metric);
      if (v !== null && (found === null || pick(v, found.value))) found = { system: s, value: v };
    }
    return found;
  };
  const max = (list, key, metric) => best(list, key, metric, (a, b) => a > b);
  const min = (list, key, metric) => best(list, key, metric, (a, b) => a < b);
  const verdict = (ok) => (ok ? '**PASS**' : '**FAIL**');
  const variantRatio = (mine, other, factor) =>
    other === null
      ? ', not compared with'
      : ` = ${(mine / other.value).toFixed(2)}× (${mine / other.value >= factor ? 'meets' : 'misses'} ≥ ${factor}×)`;
  const check = (title, mine, other, { factor, atLeast, unit }) => {
    if (mine === null) return `- ${title}: not measured (pgqueue's figure is missing)`;
    if (other === null) return `- ${title}: not measured (no figure to compare with)`;
    const ratio = mine / other.value;
    const ok = atLeast ? ratio >= factor : ratio <= factor;
    return `- ${title}: pgqueue ${fmt(mine)} ${unit} vs ${other.system.label} ${fmt(other.value)} ${unit} = ${ratio.toFixed(2)}× (needs ${atLeast ? '≥' : '≤'} ${factor}×): ${verdict(ok)}`;
  };

  const sameBatch = raws.filter((s) => s.batch === settings.pgqueueBatch);
  const ceiling = sameBatch.length ? sameBatch : raws;
  out.push(
    check('**Drain** ≥ 1.5× the best peer', med(results, P, 'drain', 'jobsPerSec'), max(peers, 'drain', 'jobsPerSec'), {
      factor: 1.5,
      atLeast: true,
      unit: 'jobs/s',
    }),
  );
  out.push(
    check(
      `**Drain** ≥ 70% of the raw-SQL ceiling at batch ${settings.pgqueueBatch}`,
      med(results, P, 'drain', 'jobsPerSec'),
      max(ceiling, 'drain', 'jobsPerSec'),
      { factor: 0.7, atLeast: true, unit: 'jobs/s' },
    ),
  );
  const longMine = med(results, P, 'long-drain', 'jobsPerSec');
  const longPeer = max(peers, 'long-drain', 'jobsPerSec');
  if (longMine !== null && longPeer !== null)
    out.push(
      `  - the long drain, not a target: pgqueue ${fmt(longMine)} jobs/s vs ${longPeer.system.label} ${fmt(longPeer.value)} jobs/s = ${(longMine / longPeer.value).toFixed(2)}×`,
    );
  for (const v of of(['pgqueue-variant'])) {
    const mine = med(results, v.id, 'drain', 'jobsPerSec');
    if (mine === null) continue;
    out.push(
      `  - ${v.label}: drain ${fmt(mine)} jobs/s${variantRatio(mine, max(peers, 'drain', 'jobsPerSec'), 1.5)} the best peer${variantRatio(mine, max(ceiling, 'drain', 'jobsPerSec'), 0.7)} the raw-SQL ceiling`,
    );
  }
  out.push(
    check('**Bulk insert** ≥ 1.5× the best peer', med(results, P, 'insert', 'rowsPerSec'), max(peers, 'insert', 'rowsPerSec'), {
      factor: 1.5,
      atLeast: true,
      unit: 'rows/s',
    }),
  );
  out.push(
    check('**Bulk insert** ≥ 80% of the raw-SQL row', med(results, P, 'insert', 'rowsPerSec'), max(raws, 'insert', 'rowsPerSec'), {
      factor: 0.8,
      atLeast: true,
      unit: 'rows/s',
    }),
  );
  out.push(
    check(
      '**Steady** sends/s ≥ the best PostgreSQL peer',
      med(results, P, 'steady', 'sendsPerSec'),
      max(pgPeers, 'steady', 'sendsPerSec'),
      { factor: 1, atLeast: true, unit: 'sends/s' },
    ),
  );
  for (const s of of(['pg-peer-polling'])) {
    const theirs = med(results, s.id, 'steady', 'sendsPerSec');
    const mine = med(results, P, 'steady', 'sendsPerSec');
    if (theirs === null || mine === null) continue;
    out.push(
      `  - for information, steady sends/s against ${s.label}: ${fmt(mine)} vs ${fmt(theirs)} = ${(mine / theirs).toFixed(2)}× (its worker sleeps between polls, so its producer has the CPU to itself)`,
    );
  }
  out.push(
    check('**Steady** e2e p50 ≤ the best PostgreSQL peer', med(results, P, 'steady', 'p50Ms'), min(pgPeers, 'steady', 'p50Ms'), {
      factor: 1,
      atLeast: false,
      unit: 'ms',
    }),
  );
  out.push(
    check('**Steady** e2e p95 ≤ the best PostgreSQL peer', med(results, P, 'steady', 'p95Ms'), min(pgPeers, 'steady', 'p95Ms'), {
      factor: 1,
      atLeast: false,
      unit: 'ms',
    }),
  );
  out.push(
    check('**Idle pickup** p50 ≤ the best PostgreSQL peer', med(results, P, 'idle', 'p50Ms'), min(pgPeers, 'idle', 'p50Ms'), {
      factor: 1,
      atLeast: false,
      unit: 'ms',
    }),
  );
  out.push(
    check('**Idle pickup** p95 ≤ the best PostgreSQL peer', med(results, P, 'idle', 'p95Ms'), min(pgPeers, 'idle', 'p95Ms'), {
      factor: 1,
      atLeast: false,
      unit: 'ms',
    }),
  );
  const redis = systems.find((s) => s.kind === 'redis-peer');
  const mineIdle = med(results, P, 'idle', 'p50Ms');
  const redisIdle = redis ? med(results, redis.id, 'idle', 'p50Ms') : null;
  if (mineIdle !== null && redisIdle !== null) {
    out.push(
      `  - the aim, BullMQ on Redis: pgqueue p50 ${fmt(mineIdle)} ms / p95 ${fmt(med(results, P, 'idle', 'p95Ms'))} ms vs ${fmt(redisIdle)} ms / ${fmt(med(results, redis.id, 'idle', 'p95Ms'))} ms (not a pass/fail target)`,
    );
  }
  const scale = settings.scaleProcesses.map((p) => ({ p, v: med(results, P, `scale-${p}`, 'jobsPerSec') }));
  if (scale.some((x) => x.v === null)) out.push('- **Scale**: not measured');
  else {
    const ok = scale.every((x, i) => i === 0 || x.v >= scale[i - 1].v);
    out.push(
      `- **Scale**, throughput does not fall as processes are added: ${scale.map((x) => `${x.p} → ${fmt(x.v)} jobs/s`).join(', ')}: ${verdict(ok)}`,
    );
  }
  for (const v of of(['pgqueue-variant'])) {
    const sv = settings.scaleProcesses.map((p) => ({ p, v: med(results, v.id, `scale-${p}`, 'jobsPerSec') }));
    if (sv.some((x) => x.v === null)) continue;
    const ok = sv.every((x, i) => i === 0 || x.v >= sv[i - 1].v);
    out.push(`  - ${v.label}: ${sv.map((x) => `${x.p} → ${fmt(x.v)} jobs/s`).join(', ')} (${ok ? 'does not fall' : 'falls'})`);
  }
  const flat = med(results, P, 'flat', 'ratio');
  if (flat === null) out.push('- **Flat claim cost**: not measured');
  else {
    const rows = (results.get(`${P}|flat`) ?? []).find((r) => r.ok)?.rows;
    out.push(
      `- **Flat claim cost** ≤ 1.2× with ${rows?.toLocaleString('en-US')} finished rows: ${flat.toFixed(2)}× (${fmt(med(results, P, 'flat', 'fullMs'))} ms vs ${fmt(med(results, P, 'flat', 'emptyMs'))} ms): ${verdict(flat <= 1.2)}`,
    );
  }
  const rss = values(results, P, 'memory', 'peakRssMb');
  if (rss.length === 0) out.push('- **Memory**: not measured');
  else
    out.push(
      `- **Memory** ≤ 150 MB while draining at concurrency ${settings.memoryConcurrency}: largest peak of the runs ${fmt(Math.max(...rss))} MB: ${verdict(Math.max(...rss) <= 150)}`,
    );
  out.push('');
  out.push(
    'Differences under ~15% are within the noise between runs on this machine (see each figure\'s min–max above). "The best peer": the best of the PostgreSQL peers and BullMQ on Redis. "The best PostgreSQL peer": the best of the rows that run on PostgreSQL with LISTEN/NOTIFY or their own wake-ups (Graphile Worker, pg-boss with LISTEN/NOTIFY, BullMQ\'s PostgreSQL backend); pg-boss polling every 2 s is shown for information. The raw-SQL rows are the ceiling, not peers.',
  );
  return out;
}
