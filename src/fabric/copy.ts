/**
 * The copies between shared memory and the program's own: `copyInto`, the one copy into shared memory
 * both busy paths make, and `copyOut`, the copy of a received control-path message.
 *
 * copyInto copies a fast-path payload into the consumer's posted buffer (src/comch/producer.ts) and a
 * control-path message into its ring (ring.ts). `softdpu bench copy` (bench/copy.bench.ts,
 * docs/bench.md) chose it: Uint8Array#set, called through a reference taken once. `dst.set(...)` looks
 * `set` up at every call, and V8's optimized code does that through its LoadIC (a third of a 64-byte
 * copy's time under perf); through the reference a 64 B copy took about 16 ns instead of 20 (1.3x the
 * rate at 64 B and 256 B, 1.1x at 1 KiB, the same from 4 KiB up). Buffer#copy is this same builtin
 * behind a JS wrapper on Node 20, and no faster at any size from 64 B to 4 MiB. The builtin's own
 * checks still cost about 13 ns a copy beyond C memcpy: most of a 64 B copy, a twentieth of a 4 KiB
 * one (docs/bench.md says what else the sweep found).
 */
const set = Uint8Array.prototype.set;

/** Copies all of `src` into `dst` at `offset` (which the caller has checked `src` fits at). */
export function copyInto(dst: Uint8Array, src: Uint8Array, offset: number): void {
  set.call(dst, src, offset);
}

/** V8 keeps a typed array's bytes on its own heap up to this size: a `slice` of it is a bump allocation. */
const ON_HEAP_MAX = 64;
/** Larger copies are cut from chunks of this size, as Node's Buffer pool does for its small Buffers. */
const CHUNK = 64 * 1024;
/** Copies up to this size come from a chunk; larger ones get their own memory (a chunk would hold few). */
const POOLED_MAX = 4096;

let chunk = new ArrayBuffer(0);
let used = 0;

/**
 * A copy of `length` bytes of `src` from `offset`, for the program to keep (a received message).
 *
 * Beyond 64 bytes a typed array of its own costs V8 an off-heap allocation, about 1.1 us on this machine
 * whatever the size (`new Uint8Array(65)` against 54 ns for 64 bytes): the copy of a 1 KiB message took
 * 1.2 us, of which the memcpy was a tenth. So copies of 65 bytes to 4 KiB are views into a shared 64 KiB
 * chunk, 8-byte aligned, as Node's own small Buffers are views into its pool: a kept message keeps its
 * chunk alive, and `buffer` shows the other copies cut from it. The chunk's memory is not zeroed first:
 * every byte of a view is written by its copy before the view is handed out.
 */
export function copyOut(src: Uint8Array, offset: number, length: number): Uint8Array {
  if (length <= ON_HEAP_MAX || length > POOLED_MAX) return src.slice(offset, offset + length);
  if (used + length > chunk.byteLength) {
    chunk = Buffer.allocUnsafeSlow(CHUNK).buffer as ArrayBuffer;
    used = 0;
  }
  const out = new Uint8Array(chunk, used, length);
  used = (used + length + 7) & ~7;
  set.call(out, src.subarray(offset, offset + length));
  return out;
}
