/**
 * The one copy into shared memory both busy paths make: a fast-path payload into the consumer's posted
 * buffer (src/comch/producer.ts) and a control-path message into its ring (ring.ts). `softdpu bench
 * copy` (bench/copy.bench.ts, docs/bench.md) chose it: Uint8Array#set, called through a reference
 * taken once. `dst.set(...)` looks `set` up at every call, and V8's optimized code does that through
 * its LoadIC (a third of a 64-byte copy's time under perf); through the reference a 64 B copy took
 * about 16 ns instead of 20 (1.3x the rate at 64 B and 256 B, 1.1x at 1 KiB, the same from 4 KiB up).
 * Buffer#copy is this same builtin behind a JS wrapper on Node 20, and no faster at any size from 64 B
 * to 4 MiB. The builtin's own checks still cost about 13 ns a copy beyond C memcpy: most of a 64 B copy,
 * a twentieth of a 4 KiB one (docs/bench.md says what else the sweep found).
 */
const set = Uint8Array.prototype.set;

/** Copies all of `src` into `dst` at `offset` (which the caller has checked `src` fits at). */
export function copyInto(dst: Uint8Array, src: Uint8Array, offset: number): void {
  set.call(dst, src, offset);
}
