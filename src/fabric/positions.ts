/**
 * Where the 32-bit positions of new rings, queues and DPA completion queues start. 0 in normal use; a test or a soak starts
 * them just below 2^32 (`$SOFTDPU_START_POSITION`, e.g. `0xffffff00`) so that the wrap, which takes
 * hours at full rate, happens within seconds. Every reader and writer counts from what the segment says,
 * so any start is correct; this only decides when the wrap comes.
 */
import { DocaError } from '../core/error.js';

let configured: number | undefined;

/** The start position for a new ring or queue (an int32, as the shared index words hold it). */
export function startPosition(): number {
  if (configured === undefined) {
    const text = process.env.SOFTDPU_START_POSITION;
    const value = text === undefined || text === '' ? 0 : Number(text);
    if (!Number.isInteger(value) || value < 0 || value >= 2 ** 32) {
      throw new DocaError('INVALID_VALUE', 'softdpu', `SOFTDPU_START_POSITION ${JSON.stringify(text)} is not an integer in [0, 2^32)`);
    }
    configured = value | 0;
  }
  return configured;
}

/** Sets the start position for rings and queues created from now on (tests, fault plans). */
export function setStartPosition(value: number): void {
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** 32) throw new DocaError('INVALID_VALUE', 'setStartPosition', `${value} is not an integer in [0, 2^32)`);
  configured = value | 0;
}

/**
 * The one slot rule of every power-of-two queue in shared memory (consumer queues, DPA completion
 * queues, a consumer completion's returned ring): the element of 32-bit `position` in a ring of `slots`
 * elements (a power of two) of `size` bytes starting at byte `base`. A power of two divides 2^32, so the
 * rule holds across the wrap.
 */
export function slotAt(base: number, position: number, slots: number, size: number): number {
  return base + ((position & (slots - 1)) >>> 0) * size;
}

/** Whether `n` is a power of two (a slot count `slotAt` can use). */
export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
}

/** The smallest power of two that holds `n` (at least 1). */
export function powerOfTwoAtLeast(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, n)));
}
