/** The benchmarks' run settings: where the repository is, --quick, the runs per measurement, --filter. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * `softdpu bench --quick`: a smoke run, every message count divided by 10 and every measurement run once
 * instead of RUNS times (figures are noisier). Set by `configure()` before any benchmark starts; read
 * these live bindings when measuring, not at import.
 */
export let QUICK = false;

/** How often each measurement runs (the median of the runs is reported): 3, or 1 in a quick run. */
export let RUNS = 3;

/** `--filter REGEX`: the scenarios to measure, matched against "bench/scenario" (and the bench's name). */
let filter: RegExp | undefined;

/** The --filter of this run, if any. */
export const scenarioFilter = (): RegExp | undefined => filter;

/** The runner's settings for the benchmarks that follow. */
export function configure(o: { quick: boolean; filter?: RegExp | undefined }): void {
  QUICK = o.quick;
  RUNS = o.quick ? 1 : 3;
  filter = o.filter;
}

/** A message count: `n`, or a tenth of it (at least `min`) in a quick run. Every contender of a row gets it. */
export const count = (n: number, min = 100): number => (QUICK ? Math.max(min, Math.round(n / 10)) : n);


/**
 * Round trips of every sleeping ping-pong (control path callbacks and promises, fast path, sync event
 * async waits) and of its references: 30 000, or SOFTDPU_BENCH_TRIPS; a tenth in a quick run. Enough
 * that the p99 (and the p99.9) are steady state, not the first hundred trips (measure.ts drops the first
 * tenth as warm-up, for every contender). At 10 000, V8's tiering (compiles finishing up to trip 6 000
 * on a pinned CPU) was inside the kept trips: the control path's 64 B p99 was 1.02x the socket's at 10 000
 * and 0.86x at 30 000, its p99.9 1.50x and 1.06x, in the same afternoon.
 */
export function sleepingTrips(): number {
  const env = process.env.SOFTDPU_BENCH_TRIPS;
  const n = env === undefined ? 30_000 : Number(env);
  if (!Number.isInteger(n) || n < 100) throw new Error(`SOFTDPU_BENCH_TRIPS=${JSON.stringify(env)}: give a whole number of round trips, at least 100`);
  return count(n);
}
