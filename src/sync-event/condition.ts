/**
 * 64-bit values and the wait conditions: `(value & mask) OP operand`, unsigned, wrapping at 2^64.
 *
 * A wait polls, so its condition is kept and evaluated as two u32 words each of operand and mask, and
 * the counter is read into a word scratch: a BigInt per poll (`Atomics.load` of a BigUint64Array makes
 * one, so does every `&`) would be garbage per poll. A bigint converts to words by a store into a
 * BigUint64Array (which wraps it modulo 2^64 in place), a number by arithmetic: neither makes a BigInt.
 */
import { DocaError } from '../core/error.js';

export const U64_MAX = (1n << 64n) - 1n;
const MASK_MIN = -(1n << 63n);
const TWO_32 = 2 ** 32;
const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;

export type WaitOp = 'gt' | 'eq' | 'neq';

/** Word scratch: a u64 written to `scratch64[0]` reads as two u32 words (little-endian or not). */
const scratch64 = new BigUint64Array(1);
const scratch32 = new Uint32Array(scratch64.buffer);
const LO = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

/** The counter as last read by `Condition.holdsAt` (its two words are what it was judged on). */
const read64 = new BigUint64Array(1);
const read32 = new Uint32Array(read64.buffer);

/** A value as a u64 BigInt; INVALID_VALUE (naming `what`) outside [0, 2^64). */
export function toU64(call: string, what: string, value: bigint | number): bigint {
  // Small (the conversion and the errors out of line): every update inlines it.
  const v = typeof value === 'bigint' ? value : toBigInt(call, what, value);
  if (v < 0n || v > U64_MAX) throw outsideU64(call, what, v);
  return v;
}

function toBigInt(call: string, what: string, value: unknown): bigint {
  try {
    return BigInt(value as number);
  } catch {
    throw new DocaError('INVALID_VALUE', call, `${what} ${String(value)} is not an integer`);
  }
}

function outsideU64(call: string, what: string, v: bigint): DocaError {
  return new DocaError('INVALID_VALUE', call, `${what} ${v} is outside [0, 2^64 - 1]`);
}

function maskTooWide(call: string, m: bigint): DocaError {
  return new DocaError('INVALID_VALUE', call, `mask ${m} does not fit in 64 bits`);
}

/**
 * Writes `value` as words to scratch32: an operand in [0, 2^64), or (`mask`) any integer in
 * [-2^63, 2^64), a negative one taken as two's complement (-1 = all ones). INVALID_VALUE otherwise.
 */
function toWords(call: string, what: string, value: bigint | number, mask: boolean): void {
  // Neither (a caller without types): converted as BigInt() does, as the value of an update is.
  if (typeof value !== 'bigint' && typeof value !== 'number') value = toBigInt(call, what, value);
  if (typeof value === 'bigint') {
    if (value > U64_MAX || value < (mask ? MASK_MIN : 0n)) throw mask ? maskTooWide(call, value) : outsideU64(call, what, value);
    scratch64[0] = value;
    return;
  }
  if (!Number.isInteger(value)) throw new DocaError('INVALID_VALUE', call, `${what} ${String(value)} is not an integer`);
  if (value >= TWO_64 || value < (mask ? -TWO_63 : 0)) throw mask ? maskTooWide(call, BigInt(value)) : outsideU64(call, what, BigInt(value));
  const a = Math.abs(value);
  const hi = Math.floor(a / TWO_32);
  const lo = a - hi * TWO_32;
  if (value >= 0) {
    scratch32[LO] = lo;
    scratch32[HI] = hi;
  } else {
    // Two's complement of |value|: invert, add one (the carry goes into the high word when lo is 0).
    scratch32[LO] = -lo;
    scratch32[HI] = lo === 0 ? -hi : ~hi;
  }
}

/** Two words as a u64 BigInt (for what the API hands back; makes BigInts). */
function fromWords(lo: number, hi: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * The async wait tasks' rule, for the mask in the word scratch: it consists only of 0, 1, 2, 4 or 8
 * consecutive 0xFF bytes (softdpu requires the run to be naturally aligned, e.g. 0xffff0000 but not
 * 0x00ffff00). It reads the scratch itself: words above 2^30 passed as arguments to a call that is not
 * inlined would be boxed, a number object each.
 */
function isTaskMask(): boolean {
  const lo = scratch32[LO]!;
  const hi = scratch32[HI]!;
  if (lo === hi && (lo === 0 || lo === 0xffffffff)) return true;
  if (lo !== 0 && hi !== 0) return false;
  const w = lo | hi;
  return w === -1 || w === 0xffff || w === (0xffff0000 | 0) || w === 0xff || w === 0xff00 || w === 0xff0000 || w === (0xff000000 | 0);
}

/**
 * A wait's operand and mask, as words (set once per wait or task, evaluated on every poll without
 * making a BigInt), and as given (what the tasks' getters hand back).
 */
export class Condition {
  /** [operand lo, operand hi, mask lo, mask hi]. */
  private readonly w = new Uint32Array(4);
  private operand: bigint | number = 0n;
  private mask: bigint | number = 0n;

  /** Sets the operand: a u64 (INVALID_VALUE naming `what` otherwise); nothing changes if it is not one. */
  setOperand(call: string, what: string, value: bigint | number): void {
    toWords(call, what, value, false);
    this.w[0] = scratch32[LO]!;
    this.w[1] = scratch32[HI]!;
    this.operand = value;
  }

  /**
   * Sets the mask: an integer in [-2^63, 2^64), and with `task`, 0, 1, 2, 4 or 8 aligned 0xff bytes
   * (INVALID_VALUE otherwise, and nothing changes).
   */
  setMask(call: string, mask: bigint | number, task: boolean): void {
    toWords(call, 'mask', mask, true);
    if (task && !isTaskMask()) {
      throw new DocaError('INVALID_VALUE', call, `mask 0x${fromWords(scratch32[LO]!, scratch32[HI]!).toString(16)} is not 0, 1, 2, 4 or 8 consecutive 0xff bytes (aligned to their size)`);
    }
    this.w[2] = scratch32[LO]!;
    this.w[3] = scratch32[HI]!;
    this.mask = mask;
  }

  /** Takes `other`'s operand and mask (checked when they were set there). */
  copy(other: Condition): void {
    this.w.set(other.w);
    this.operand = other.operand;
    this.mask = other.mask;
  }

  /** The operand, as a u64 BigInt. */
  getOperand(): bigint {
    return typeof this.operand === 'bigint' ? this.operand : fromWords(this.w[0]!, this.w[1]!);
  }

  /** The mask, as a u64 BigInt (a negative one as its two's complement). */
  getMask(): bigint {
    return typeof this.mask === 'bigint' && this.mask >= 0n ? this.mask : fromWords(this.w[2]!, this.w[3]!);
  }

  /**
   * Whether the condition holds on the counter `values[index]`, read once. The read is the element's
   * plain load into a word scratch, which makes no BigInt: V8 reads an element of a shared
   * BigUint64Array with one aligned 8-byte load (a relaxed atomic one in its runtime), which cannot
   * tear on the 64-bit targets softdpu runs on; `Atomics.load` would make a BigInt per poll.
   */
  holdsAt(op: WaitOp, values: BigUint64Array, index: number): boolean {
    read64[0] = values[index]!;
    const w = this.w;
    const hi = (read32[HI]! & w[3]!) >>> 0;
    const lo = (read32[LO]! & w[2]!) >>> 0;
    if (op === 'gt') return hi > w[1]! || (hi === w[1]! && lo > w[0]!);
    const eq = hi === w[1]! && lo === w[0]!;
    return op === 'eq' ? eq : !eq;
  }
}

/** Stores the counter as `Condition.holdsAt` last read it at `into[at]` (no BigInt made). */
export function storeLastRead(into: BigUint64Array, at: number): void {
  into[at] = read64[0]!;
}
