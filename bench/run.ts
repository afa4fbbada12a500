/**
 * `npm run bench [-- NAME...] [-- --json FILE]`: runs the benchmarks (all, or those named) and prints a
 * table per benchmark, then every figure as JSON (to stdout, or to FILE). SOFTDPU_BENCH_QUICK=1 divides
 * every message count by 10 (a smoke run).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { comchBench } from './comch.bench.js';
import { dpaBench } from './dpa.bench.js';
import { fabricBench } from './fabric.bench.js';
import { fastpathBench } from './fastpath.bench.js';
import { faultsBench } from './faults.bench.js';
import { idleBench } from './idle.bench.js';
import { QUICK } from './lib.js';
import { scaleBench } from './scale.bench.js';
import { syncEventBench } from './sync-event.bench.js';
import { threadsBench } from './threads.bench.js';

const benches: Record<string, () => Promise<Record<string, unknown>>> = {
  fabric: fabricBench,
  comch: comchBench,
  fastpath: fastpathBench,
  'sync-event': syncEventBench,
  idle: idleBench,
  scale: scaleBench,
  threads: threadsBench,
  faults: faultsBench,
  dpa: dpaBench,
};

const { values, positionals } = parseArgs({ options: { json: { type: 'string' } }, allowPositionals: true });
const chosen = positionals.length ? positionals : Object.keys(benches);
for (const name of chosen) if (!benches[name]) throw new Error(`unknown benchmark ${name} (have: ${Object.keys(benches).join(', ')})`);
// Anything else running skews every figure: the load average before and after each benchmark says so.
const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const results: Record<string, unknown> = { node: process.version, date: new Date().toISOString(), cpus: cpus().length, quick: QUICK };
for (const name of chosen) {
  const t0 = performance.now();
  const before = load();
  const figures = await benches[name]!();
  const after = load();
  results[name] = { ...figures, seconds: (performance.now() - t0) / 1000, loadavg_before: before, loadavg_after: after };
  process.stdout.write(`  (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s; load average 1/5/15 min before ${before.join(' ')}, after ${after.join(' ')} on ${cpus().length} cpus)\n`);
}
const json = JSON.stringify(results, null, 2);
if (values.json) writeFileSync(values.json, json + '\n');
else process.stdout.write(`\n${json}\n`);
