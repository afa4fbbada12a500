/**
 * The Node side of `softdpu bench copy` (copy.bench.ts; bench/c/copy.c does the same work in C): copies
 * of SIZE bytes into a shared mapping made by Segment.create (what a producer copies into: the
 * consumer's posted buffers), walking SLOTS slots of SIZE bytes, the mapping's pages faulted in first.
 *   copy-peer SIZE SLOTS BATCH SAMPLES
 * Each sample times BATCH copies; the contenders take turns sample by sample, in an order shuffled at
 * each sample (the orders bench/c/copy.c takes); the first tenth of the samples are dropped as warm-up (measure.ts) and the median of the rest, per copy, is reported:
 *   set, buffer_copy, copy_into  from a private Uint8Array (a user's payload): Uint8Array#set
 *                              (`dst.set(src, at)`), Buffer#copy (Buffer.prototype.copy.call), and
 *                              src/fabric/copy.ts's copyInto (set through a reference), what softdpu uses
 *   set_mapped, buffer_copy_mapped  from a second segment (the producer's own mmap'd memory)
 *   loop                       a byte loop from the private array, sizes up to 256 B only, measured
 *                              after the others (the same samples): its batches are 10 to 100 times
 *                              longer, and in the rotation they slowed the contender after them
 * Prints {"<contender>":{"p50_ns","gbps"},...}. Each contender has its own function, so that each call
 * site sees one kind of copy.
 */
import { copyInto } from '../src/fabric/copy.js';
import { Segment, SEGMENT_HEADER_SIZE } from '../src/fabric/segment.js';
import { percentiles } from './lib.js';

/** The largest size the byte loop is measured at (beyond, it is only slower). */
const LOOP_MAX = 256;

type Batch = (dst: Uint8Array, src: Uint8Array, size: number, slots: number, n: number) => void;
const copy = Buffer.prototype.copy as (this: Uint8Array, target: Uint8Array, targetStart: number) => number;
let slot = 0;

const viaSet: Batch = (dst, src, size, slots, n) => {
  for (let i = 0; i < n; i++) {
    dst.set(src, slot * size);
    slot = slot + 1 === slots ? 0 : slot + 1;
  }
};
const viaSetMapped: Batch = (dst, src, size, slots, n) => {
  for (let i = 0; i < n; i++) {
    dst.set(src, slot * size);
    slot = slot + 1 === slots ? 0 : slot + 1;
  }
};
const viaCopyInto: Batch = (dst, src, size, slots, n) => {
  for (let i = 0; i < n; i++) {
    copyInto(dst, src, slot * size);
    slot = slot + 1 === slots ? 0 : slot + 1;
  }
};
const viaCopy: Batch = (dst, src, size, slots, n) => {
  for (let i = 0; i < n; i++) {
    copy.call(src, dst, slot * size);
    slot = slot + 1 === slots ? 0 : slot + 1;
  }
};
const viaCopyMapped: Batch = (dst, src, size, slots, n) => {
  for (let i = 0; i < n; i++) {
    copy.call(src, dst, slot * size);
    slot = slot + 1 === slots ? 0 : slot + 1;
  }
};
const viaLoop: Batch = (dst, src, size, slots, n) => {
  for (let i = 0; i < n; i++) {
    const at = slot * size;
    for (let j = 0; j < size; j++) dst[at + j] = src[j]!;
    slot = slot + 1 === slots ? 0 : slot + 1;
  }
};

/** xorshift32 seeded with 1, as bench/c/copy.c shuffles. */
let seed = 1;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};

/** Fisher-Yates: each sample's order, so that no contender always follows the same one or writes the same slots. */
function shuffle(order: number[]): void {
  for (let i = order.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
}

const [size, slots, n, samples] = process.argv.slice(2).map(Number) as [number, number, number, number];
const dstSeg = Segment.create('bench', size * slots);
const srcSeg = Segment.create('bench', size);
try {
  const dst = dstSeg.u8.subarray(SEGMENT_HEADER_SIZE, SEGMENT_HEADER_SIZE + size * slots);
  dst.fill(0); // fault the pages in: copies, not page faults, are measured
  const mapped = srcSeg.u8.subarray(SEGMENT_HEADER_SIZE, SEGMENT_HEADER_SIZE + size).fill(0x5a);
  const own = new Uint8Array(size).fill(0x5a);
  type Contender = [name: string, batch: Batch, src: Uint8Array];
  const rotation: Contender[] = [
    ['set', viaSet, own],
    ['buffer_copy', viaCopy, own],
    ['copy_into', viaCopyInto, own],
    ['set_mapped', viaSetMapped, mapped],
    ['buffer_copy_mapped', viaCopyMapped, mapped],
  ];
  const out: Record<string, { p50_ns: number; gbps: number }> = {};
  const measure = (group: Contender[]) => {
    const times = group.map(() => new Array<number>(samples));
    const order = group.map((_, c) => c);
    for (let s = 0; s < samples; s++) {
      shuffle(order);
      for (const c of order) {
        const [, batch, src] = group[c]!;
        const t0 = performance.now();
        batch(dst, src, size, slots, n);
        times[c]![s] = ((performance.now() - t0) * 1e6) / n;
      }
    }
    group.forEach(([name], c) => {
      const p50 = percentiles(times[c]!).p50;
      out[name] = { p50_ns: p50, gbps: size / p50 };
    });
  };
  measure(rotation);
  if (size <= LOOP_MAX) measure([['loop', viaLoop, own]]);
  process.stdout.write(JSON.stringify(out) + '\n');
} finally {
  dstSeg.close();
  srcSeg.close();
}
