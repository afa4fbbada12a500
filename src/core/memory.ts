/**
 * Memory a peer process can reach. DOCA maps any memory for PCI access; softdpu needs the bytes to live
 * in a shared segment, so memory that an mmap with a PCI permission covers comes from
 * `allocSharedMemory()`. A plain Buffer is fine for local-only maps.
 */
import { Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';
import { DocaError } from './error.js';

interface Shared {
  segment: Segment;
  /** Mmaps currently covering this memory. */
  users: number;
}

// Keyed by the ArrayBuffer: the entry lives exactly as long as some view of the memory does.
const registry = new WeakMap<ArrayBufferLike, Shared>();

/**
 * Allocates `size` bytes of shared memory (zero-filled), for mmaps that peers access (PCI permissions)
 * and for sync event backing memory. Keep a reference while peers may use it; `freeSharedMemory` or
 * garbage collection releases it.
 */
export function allocSharedMemory(size: number): Uint8Array {
  if (!Number.isInteger(size) || size < 1) throw new DocaError('INVALID_VALUE', 'allocSharedMemory', `size ${size} is not a positive integer`);
  const segment = Segment.create('mem', size);
  registry.set(segment.u8.buffer, { segment, users: 0 });
  return segment.u8.subarray(SEGMENT_HEADER_SIZE, SEGMENT_HEADER_SIZE + size);
}

/** Releases memory from `allocSharedMemory`; refused with IN_USE while an mmap covers it. */
export function freeSharedMemory(memory: Uint8Array): void {
  const shared = registry.get(memory.buffer);
  if (!shared) throw new DocaError('INVALID_VALUE', 'freeSharedMemory', 'the memory was not allocated by allocSharedMemory (or was freed)');
  if (shared.users > 0) throw new DocaError('IN_USE', 'freeSharedMemory', `${shared.users} mmap(s) still cover the memory`);
  registry.delete(memory.buffer);
  shared.segment.close();
}

/** @internal where `memory` lives if it is shared: its segment and byte offset in it. */
export function sharedLocation(memory: Uint8Array): { segment: Segment; offset: number } | undefined {
  const shared = registry.get(memory.buffer);
  return shared && !shared.segment.closed ? { segment: shared.segment, offset: memory.byteOffset } : undefined;
}

/** @internal an mmap starts or stops covering shared memory. */
export function useSharedMemory(memory: Uint8Array, delta: 1 | -1): void {
  const shared = registry.get(memory.buffer);
  if (shared) shared.users += delta;
}
