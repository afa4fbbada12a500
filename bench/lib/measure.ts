/** Statistics and CPU meters: what each measurement reports, the same way for every contender. */
import { QUICK, RUNS } from './config.js';

/**
 * The warm-up every contender drops, the same for all (and for the C references, bench/c/bench.h): the
 * first tenth of the samples. What is left is the steady state the percentiles are of.
 */
export const warmupCount = (n: number): number => Math.floor(n / 10);

/** Median, 99th and 99.9th percentile of `samples` after dropping the warm-up (warmupCount). */
export function percentiles(samples: number[]): { p50: number; p99: number; p99_9: number } {
  const kept = samples.slice(warmupCount(samples.length)).sort((a, b) => a - b);
  const at = (q: number) => kept[Math.floor(kept.length * q)]!;
  return { p50: at(0.5), p99: at(0.99), p99_9: at(0.999) };
}

/** The warm-up itself: the first sample (first-message latency) and the mean of the samples dropped. */
export function warmup(samples: number[]): { first_us: number; warmup_mean_us: number } {
  const w = samples.slice(0, Math.max(1, warmupCount(samples.length)));
  return { first_us: samples[0]!, warmup_mean_us: w.reduce((a, b) => a + b, 0) / w.length };
}

/** GB/s of `copy` walking `dst` in `size` steps; best of 5 runs of `total` bytes (default 512 MiB, 64 quick). */
export function bandwidth(size: number, dst: Uint8Array, copy: (src: Uint8Array, dst: Uint8Array, offset: number) => void, total = (QUICK ? 64 : 512) << 20): number {
  const src = Buffer.alloc(size, 0x5a);
  const slots = Math.floor(dst.length / size);
  let best = 0;
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now();
    let bytes = 0;
    for (let k = 0; bytes < total; k++, bytes += size) copy(src, dst, (k % slots) * size);
    best = Math.max(best, bytes / ((performance.now() - t0) * 1e6));
  }
  return best;
}

/** A stream's rates: after the warm-up (`rate`, `gbps`), and over every message (`whole_rate`). */
export interface StreamRate {
  rate: number;
  gbps: number;
  whole_rate: number;
}

/**
 * A stream's clock at its receiver, the same for every contender (bench/c/bench.h's stream_clock): the
 * rate over the messages after the warm-up (warmupCount, the first tenth, as the round trips drop) and,
 * for the warm-up row, over all of them, each from one message's arrival to the last's. `at(k)` is told
 * the messages received so far (a byte stream: whole messages); it reads the clock three times in all.
 */
export class StreamClock {
  private first = 0;
  private steady = 0;
  private last = 0;
  private seen = 0;
  private readonly warm: number;

  constructor(readonly total: number) {
    this.warm = warmupCount(total);
  }

  at(k: number): void {
    if (this.seen === 0 && k >= 1) this.first = performance.now();
    if (this.seen <= this.warm && k > this.warm) this.steady = performance.now();
    if (this.seen < this.total && k >= this.total) this.last = performance.now();
    this.seen = k;
  }

  /** The rates of `size`-byte messages (call once `total` arrived). */
  figures(size: number): StreamRate {
    const rate = (this.total - 1 - this.warm) / ((this.last - this.steady) / 1000);
    return { rate, gbps: (rate * size) / 1e9, whole_rate: (this.total - 1) / ((this.last - this.first) / 1000) };
  }
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Round-trip percentiles (steady state: after the warm-up), the warm-up (first trip, mean of the trips
 * dropped) where measured, and each side's CPU time (user + system) per round trip where measured.
 */
export interface Rtt {
  p50_us: number;
  p99_us: number;
  p99_9_us?: number;
  first_us?: number;
  warmup_mean_us?: number;
  cpu_pinger_us_per_msg?: number;
  cpu_echoer_us_per_msg?: number;
}

/**
 * For a peer process: starts a CPU meter (process.cpuUsage, user + system of the whole process, every
 * thread); the function it returns gives the microseconds used since.
 */
export function cpuMeter(): () => number {
  const start = process.cpuUsage();
  return () => {
    const d = process.cpuUsage(start);
    return d.user + d.system;
  };
}

/** A pinging peer's figures: its round trips (us) as steady-state percentiles and warm-up, its CPU per trip. */
export function rttSummary(samplesUs: number[], cpuUs: number): Required<Pick<Rtt, 'p50_us' | 'p99_us' | 'p99_9_us' | 'first_us' | 'warmup_mean_us'>> & { cpu_us_per_msg: number } {
  const { p50, p99, p99_9 } = percentiles(samplesUs);
  return { p50_us: p50, p99_us: p99, p99_9_us: p99_9, ...warmup(samplesUs), cpu_us_per_msg: cpuUs / samplesUs.length };
}

/** For a pinging peer: prints its round trips (ms from performance.now(), as us) and its CPU per trip. */
export function printRtt(samplesUs: number[], cpuUs: number, extra: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ ...rttSummary(samplesUs, cpuUs), ...extra }) + '\n');
}

/** For a peer: its CPU over `wait()` (sitting idle), in % of one core. */
export async function idleCpu(wait: () => Promise<unknown>): Promise<number> {
  const cpu = cpuMeter();
  const t0 = performance.now();
  await wait();
  return (cpu() / ((performance.now() - t0) * 1000)) * 100;
}

/** For an echoing peer: prints its CPU per message over the messages it answered. */
export function printCpu(cpuUs: number, messages: number): void {
  process.stdout.write(JSON.stringify({ cpu_us_per_msg: cpuUs / Math.max(1, messages), messages }) + '\n');
}

/** Runs `fn` `runs` times, one after the other. */
export async function repeat<T>(fn: () => T | Promise<T>, runs = RUNS): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn());
  return out;
}

/**
 * The median of each numeric field over `runs` (of `Rtt`s: the median p50 and the median p99), field by
 * field into nested objects (a peer that reports several contenders); other fields (a C reference's
 * echoed `mode`) are the first run's.
 */
export function medians<T extends object>(runs: T[]): T {
  const first = runs[0] as Record<string, unknown>;
  const field = (k: string) => runs.map((r) => (r as Record<string, unknown>)[k]);
  const out = Object.fromEntries(
    Object.entries(first).map(([k, v]) => [k, typeof v === 'number' ? median(field(k) as number[]) : v !== null && typeof v === 'object' && !Array.isArray(v) ? medians(field(k) as object[]) : v]),
  );
  return out as T;
}

