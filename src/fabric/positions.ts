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
