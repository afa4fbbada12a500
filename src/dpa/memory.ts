/**
 * DPA memory (`doca_dpa_mem_alloc` and the copies to and from it): a heap segment per started DPA,
 * which its execution units map, with the owner keeping the allocator. A DPA pointer is HEAP_BASE plus
 * the byte offset in that segment; DPA code reaches the bytes with `dpaMemory(ptr, length)`. Every
 * range is checked against the heap (INVALID_VALUE), so no copy touches memory outside it.
 */
import { DocaError, describeValue } from '../core/error.js';
import type { DpaRun } from './dpa.js';

/** The DPA pointer of the heap segment's byte 0 (chosen to look like, and never be, a host address). */
export const HEAP_BASE = 0x10_0000_0000n;

/** The heap offset of `[ptr, ptr + size)`; INVALID_VALUE if the range is not inside the heap. */
function offsetOf(run: DpaRun, ptr: bigint, size: number, call: string): number {
  if (typeof ptr !== 'bigint') throw new DocaError('INVALID_VALUE', call, `a DPA pointer is a bigint, not ${describeValue(ptr)}`);
  if (!Number.isInteger(size) || size < 0) throw new DocaError('INVALID_VALUE', call, `size ${describeValue(size)} is not a non-negative integer`);
  const offset = ptr - HEAP_BASE;
  if (offset < 64n || offset + BigInt(size) > BigInt(run.heap.size)) {
    throw new DocaError('INVALID_VALUE', call, `[0x${ptr.toString(16)}, +${size}) is not inside the DPA's memory [0x${(HEAP_BASE + 64n).toString(16)}, +${run.heap.size - 64})`);
  }
  return Number(offset);
}

export function memAlloc(run: DpaRun, size: number): bigint {
  const call = 'doca_dpa_mem_alloc';
  if (!Number.isInteger(size) || size < 1) throw new DocaError('INVALID_VALUE', call, `size ${describeValue(size)} is not a positive integer`);
  const offset = run.heapArena.alloc(size);
  if (offset === undefined) throw new DocaError('NO_MEMORY', call, `the DPA's ${run.heap.size - 64}-byte memory has no ${size} free bytes in one piece`);
  return HEAP_BASE + BigInt(offset);
}

export function memFree(run: DpaRun, ptr: bigint): void {
  const call = 'doca_dpa_mem_free';
  const offset = typeof ptr === 'bigint' ? Number(ptr - HEAP_BASE) : NaN;
  if (!Number.isSafeInteger(offset) || !run.heapArena.free(offset)) throw new DocaError('INVALID_VALUE', call, `${describeValue(ptr)} is not a pointer doca_dpa_mem_alloc returned (or it was freed)`);
}

export function h2dMemcpy(run: DpaRun, dst: bigint, src: Uint8Array, size: number): void {
  const call = 'doca_dpa_h2d_memcpy';
  if (!(src instanceof Uint8Array)) throw new DocaError('INVALID_VALUE', call, `the source must be a Uint8Array, not ${describeValue(src)}`);
  if (!Number.isInteger(size) || size < 0 || size > src.length) throw new DocaError('INVALID_VALUE', call, `size ${describeValue(size)} exceeds the ${src.length}-byte source`);
  run.heap.u8.set(src.subarray(0, size), offsetOf(run, dst, size, call));
}

export function d2hMemcpy(run: DpaRun, dst: Uint8Array, src: bigint, size: number): void {
  const call = 'doca_dpa_d2h_memcpy';
  if (!(dst instanceof Uint8Array)) throw new DocaError('INVALID_VALUE', call, `the destination must be a Uint8Array, not ${describeValue(dst)}`);
  if (!Number.isInteger(size) || size < 0 || size > dst.length) throw new DocaError('INVALID_VALUE', call, `size ${describeValue(size)} exceeds the ${dst.length}-byte destination`);
  const offset = offsetOf(run, src, size, call);
  dst.set(run.heap.u8.subarray(offset, offset + size));
}

export function memset(run: DpaRun, ptr: bigint, value: number, size: number): void {
  const call = 'doca_dpa_memset';
  if (!Number.isInteger(value)) throw new DocaError('INVALID_VALUE', call, `value ${describeValue(value)} is not an integer`);
  const offset = offsetOf(run, ptr, size, call);
  run.heap.u8.fill(value & 0xff, offset, offset + size);
}
