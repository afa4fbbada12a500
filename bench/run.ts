/**
 * The benchmark runner behind `softdpu bench` (src/cli/bench.ts loads this file from a source checkout;
 * the npm package ships no benchmarks): runs the benchmarks chosen, prints a table per benchmark, and
 * gathers every scenario (softdpu's figures next to each baseline's, ratios, targets) into one result,
 * which `--json` writes and `--plot` draws (plot.ts).
 */
import { cpus, loadavg } from 'node:os';
import { allocBench } from './alloc.bench.js';
import { cBench } from './c.bench.js';
import { comchBench } from './comch.bench.js';
import { copyBench } from './copy.bench.js';
import { dpaBench } from './dpa.bench.js';
import { fabricBench } from './fabric.bench.js';
import { fastpathBench } from './fastpath.bench.js';
import { faultsBench } from './faults.bench.js';
import { idleBench } from './idle.bench.js';
import { beginBench, benchScenarios, canPin, configure, hooks, printUnprinted, type Scenario } from './lib.js';
import { observeBench } from './observe.bench.js';
import { scaleBench } from './scale.bench.js';
import { syncEventBench } from './sync-event.bench.js';
import { threadsBench } from './threads.bench.js';

export { plotHtml, plotSvg } from './plot.js';

/**
 * Every benchmark, in the order a full run takes them. A benchmark is a function that measures, prints
 * its table and resolves with whatever else it wants in the JSON; it records its scenarios with
 * `scenario()` (lib.ts), which also honours --filter. Add a benchmark with one line here.
 */
export const benches: Record<string, () => Promise<Record<string, unknown>>> = {
  fabric: fabricBench,
  comch: comchBench,
  fastpath: fastpathBench,
  'sync-event': syncEventBench,
  idle: idleBench,
  scale: scaleBench,
  threads: threadsBench,
  faults: faultsBench,
  dpa: dpaBench,
  observe: observeBench,
  c: cBench,
  alloc: allocBench,
  copy: copyBench,
};

export interface RunOptions {
  /** Benchmarks to run (all when empty). */
  names: string[];
  quick: boolean;
  /** Scenarios to measure, matched against "bench/scenario" or the benchmark's name. */
  filter?: RegExp | undefined;
  /** A benchmark (its index among those run, and how many) or one of its scenarios starts. */
  onProgress?: (p: { bench: string; index: number; of: number; scenario?: string }) => void;
  /** Called before a table is written to stdout (a progress line on the same terminal must go first). */
  beforeOutput?: () => void;
}

/** What `--json` writes. Its shape is stable: version it (`schema`) when it changes. */
export interface BenchResult {
  schema: 'softdpu-bench/1';
  node: string;
  date: string;
  cpus: number;
  pinned: boolean;
  quick: boolean;
  filter: string | null;
  seconds: number;
  /** Per benchmark run: its time, the load average around it (a busy machine skews every figure), extras. */
  benches: Record<string, { seconds: number; loadavg_before: number[]; loadavg_after: number[]; scenarios: number; details: Record<string, unknown>; error?: string }>;
  scenarios: Scenario[];
  /** Benchmarks that failed (a peer that exited, a loop that found no progress): the others still ran. */
  failed: string[];
}

/** Throws (naming the benchmarks there are) if a name is unknown. */
export function checkNames(names: string[]): void {
  for (const name of names) if (!benches[name]) throw new Error(`unknown benchmark ${JSON.stringify(name)} (there are: ${Object.keys(benches).join(', ')})`);
}

export async function runBenchmarks(o: RunOptions): Promise<BenchResult> {
  checkNames(o.names);
  const chosen = o.names.length ? o.names : Object.keys(benches);
  configure({ quick: o.quick, filter: o.filter });
  if (o.beforeOutput) hooks.beforeOutput = o.beforeOutput;
  const load = () => loadavg().map((x) => Number(x.toFixed(2)));
  const t0 = performance.now();
  const result: BenchResult = {
    schema: 'softdpu-bench/1',
    node: process.version,
    date: new Date().toISOString(),
    cpus: cpus().length,
    pinned: canPin,
    quick: o.quick,
    filter: o.filter?.source ?? null,
    seconds: 0,
    benches: {},
    scenarios: [],
    failed: [],
  };
  for (const [index, name] of chosen.entries()) {
    hooks.progress = (bench, scenario) => o.onProgress?.({ bench, index, of: chosen.length, scenario });
    o.onProgress?.({ bench: name, index, of: chosen.length });
    const started = performance.now();
    const before = load();
    beginBench(name);
    let details: Record<string, unknown> = {};
    let error: string | undefined;
    try {
      details = await benches[name]!();
    } catch (err) {
      // One benchmark's failure ends that benchmark, not the run: what it and the others measured stays.
      error = err instanceof Error ? err.message : String(err);
      result.failed.push(name);
    }
    const after = load();
    const scenarios = benchScenarios();
    const seconds = (performance.now() - started) / 1000;
    result.benches[name] = { seconds, loadavg_before: before, loadavg_after: after, scenarios: scenarios.length, details, ...(error === undefined ? {} : { error }) };
    result.scenarios.push(...scenarios);
    if (error !== undefined) {
      hooks.beforeOutput();
      // Its table is printed at its end, which it did not reach: what it measured is shown all the same.
      printUnprinted(`${name}: the scenarios measured before it failed`);
      process.stdout.write(`  (${name}: FAILED after ${seconds.toFixed(1)} s: ${error})\n`);
    }
    if (scenarios.length) {
      hooks.beforeOutput();
      process.stdout.write(`  (${name}: ${seconds.toFixed(1)} s; load average 1/5/15 min before ${before.join(' ')}, after ${after.join(' ')} on ${result.cpus} cpus)\n`);
    }
  }
  result.seconds = (performance.now() - t0) / 1000;
  return result;
}
