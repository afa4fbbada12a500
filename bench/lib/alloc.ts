/**
 * Bytes allocated and GC pauses per message, measured inside the process doing the work (a peer: the
 * sending side and the receiving side each measure themselves), in steady state.
 *
 * Node 20's V8 gives no allocation counter (`v8.getHeapStatistics()` has no total_allocated_bytes; the
 * heap's size, total_heap_size, is reserved pages, not allocation). What is exact: V8 allocates
 * by bumping a pointer, and `used_heap_size` is the bytes of objects in every space, so between two
 * samples with no garbage collection in between, its growth is exactly what was allocated. So the
 * meter cuts the measured messages into chunks of ALLOC_CHUNK, samples `used_heap_size` (and
 * `external_memory`) at every boundary into preallocated arrays, and records each GC's start and
 * duration with a PerformanceObserver('gc') (the entries carry performance.now() times, even when the
 * observer runs only once the busy loop returned). A chunk that overlaps a GC is dropped; the growth of
 * the others, less the meter's own (calibrated through the same path on empty chunks), divided by
 * their messages, is the figure. Precision, checked with known allocations over 900k messages: `{a, b}`
 * reads 40.00 B, a 16-byte Uint8Array 216.04 B, a 4-element array 80.01 B, a short string 48.00 B, an
 * empty loop 0.14-0.25 B (the meter's own cost, in a process's first measured loop): within 0.3 B per
 * message. External memory (ArrayBuffer backing stores) is approximate: V8 accounts frees of backing
 * stores after a GC, concurrently, often in a later chunk (a 100-byte Uint8Array read 37-84 B); it is
 * reported, not judged.
 *
 * The warm-up (measure.ts's warmupCount: the first tenth of the messages) is not measured, as with the
 * latencies: JIT compilation and first-use allocations (pools filling) are not steady state.
 */
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { warmupCount } from './measure.js';

/** Issue 20's "a few bytes": what a busy path may allocate per message (beyond what it hands the user). */
export const ALLOC_LIMIT_BYTES = 16;

/**
 * Messages per chunk between two heap samples: small enough that most chunks fall between two
 * scavenges even on a path that allocates kilobytes per message (a 1 MiB young generation, the size it
 * starts at, fills every ~400 messages of 2.7 KB), large enough that the probe (~1 us) costs little.
 */
export const ALLOC_CHUNK = 128;

/** What a peer reports of its steady-state allocation. */
export interface AllocFigures {
  heap_bytes_per_msg: number;
  external_bytes_per_msg: number;
  /** Garbage collections (any kind) that started within the measured messages, per message. */
  gcs_per_msg: number;
  gc_pause_us_per_msg: number;
  /** Messages measured (after the warm-up), and those in chunks no GC touched (the heap figures' base). */
  messages: number;
  clean_messages: number;
}

/** The environment variable that tells a peer to measure its allocation (SOFTDPU_BENCH_ALLOC=1). */
export const ALLOC_ENV = 'SOFTDPU_BENCH_ALLOC';

/** Counts messages (`tick()`, allocation-free between samples) and measures from the end of the warm-up. */
export class AllocMeter {
  private n = 0;
  private next: number;
  private chunk = 0;
  private readonly first: number;
  private readonly chunks: number;
  /** Per sample: performance.now() before and after it, used_heap_size, external_memory. */
  private readonly t: Float64Array;
  private readonly tEnd: Float64Array;
  private readonly heap: Float64Array;
  private readonly ext: Float64Array;
  private readonly gcs: PerformanceEntry[] = [];
  private readonly observer: PerformanceObserver;
  private readonly probeBytes: number;

  /** `total`: the messages this side will tick in all (the warm-up included). */
  constructor(total: number) {
    this.first = warmupCount(total);
    this.chunks = Math.max(0, Math.floor((total - this.first) / ALLOC_CHUNK));
    this.t = new Float64Array(this.chunks + 1);
    this.tEnd = new Float64Array(this.chunks + 1);
    this.heap = new Float64Array(this.chunks + 1);
    this.ext = new Float64Array(this.chunks + 1);
    this.next = Infinity;
    this.observer = new PerformanceObserver((list) => this.gcs.push(...list.getEntries()));
    this.observer.observe({ entryTypes: ['gc'] });
    this.probeBytes = this.calibrate();
    this.next = this.chunks > 0 ? this.first : Infinity;
  }

  /** One message done. */
  tick(): void {
    if (++this.n >= this.next) this.sample();
  }

  private probe(at: number): void {
    this.t[at] = performance.now();
    const s = getHeapStatistics();
    this.heap[at] = s.used_heap_size;
    this.ext[at] = s.external_memory;
    this.tEnd[at] = performance.now();
  }

  private sample(): void {
    this.probe(this.chunk);
    this.next = ++this.chunk <= this.chunks ? this.next + ALLOC_CHUNK : Infinity;
  }

  /**
   * The heap growth of a chunk of ticks that do nothing else: what the meter itself adds to a chunk
   * (the probe, once optimized: interpreted, it builds getHeapStatistics's object, ~700 B; optimized,
   * 32-64 B). Measured through the real path (tick, sample, probe) after 20 000 probes, the median of
   * 64 such chunks (a GC in one moves it, not the median).
   */
  private calibrate(): number {
    if (this.chunks < 1) return 0;
    for (let i = 0; i < 20_000; i++) this.probe(0);
    const growth: number[] = [];
    for (let round = 0; round < 96; round++) {
      [this.n, this.next, this.chunk] = [0, 0, 0];
      for (let i = 0; i < ALLOC_CHUNK; i++) this.tick();
      if (round >= 32) growth.push(this.heap[1]! - this.heap[0]!);
    }
    [this.n, this.next, this.chunk] = [0, this.first, 0];
    return growth.sort((x, y) => x - y)[growth.length >> 1]!;
  }

  /**
   * Once every message was ticked: the figures (after letting the GC observer's entries arrive); throws
   * if no chunk was free of GC.
   */
  async figures(): Promise<AllocFigures> {
    const f = await this.measure();
    // NaN would reach the runner as null (JSON): say why instead.
    if (!f.clean_messages) throw new Error(`AllocMeter: a GC in every chunk of ${ALLOC_CHUNK} messages (${f.gcs_per_msg * ALLOC_CHUNK} per chunk): no chunk measured`);
    return f;
  }

  private async measure(): Promise<AllocFigures> {
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 10));
    this.observer.disconnect();
    if (this.chunk <= this.chunks) throw new Error(`AllocMeter: ${this.n} messages ticked, ${this.first + this.chunks * ALLOC_CHUNK} expected`);
    const [start, end] = [this.t[0]!, this.tEnd[this.chunks]!];
    const inWindow = this.gcs.filter((g) => g.startTime + g.duration >= start && g.startTime <= end);
    let heap = 0;
    let ext = 0;
    let clean = 0;
    for (let c = 0; c < this.chunks; c++) {
      // From before the first sample's read to after the second's: a GC inside a probe counts.
      const [a, b] = [this.t[c]!, this.tEnd[c + 1]!];
      if (inWindow.some((g) => g.startTime <= b && g.startTime + g.duration >= a)) continue;
      heap += this.heap[c + 1]! - this.heap[c]! - this.probeBytes;
      ext += this.ext[c + 1]! - this.ext[c]!;
      clean++;
    }
    const messages = this.chunks * ALLOC_CHUNK;
    const cleanMessages = clean * ALLOC_CHUNK;
    return {
      heap_bytes_per_msg: cleanMessages ? Math.max(0, heap / cleanMessages) : NaN,
      external_bytes_per_msg: cleanMessages ? ext / cleanMessages : NaN,
      gcs_per_msg: inWindow.length / messages,
      gc_pause_us_per_msg: (inWindow.reduce((sum, g) => sum + g.duration, 0) * 1000) / messages,
      messages,
      clean_messages: cleanMessages,
    };
  }
}

/** A meter that counts nothing, for a peer not asked to measure (tick() does nothing). */
const NO_METER = { tick(): void {}, figures: async (): Promise<undefined> => undefined };

/** An AllocMeter of `total` messages when the environment asks for one (ALLOC_ENV), else a no-op one. */
export function allocMeterFromEnv(total: number): { tick(): void; figures(): Promise<AllocFigures | undefined> } {
  return process.env[ALLOC_ENV] === '1' ? new AllocMeter(total) : NO_METER;
}
