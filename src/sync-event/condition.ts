/**
 * 64-bit values and the wait conditions: `(value & mask) OP operand`, unsigned, wrapping at 2^64.
 */
import { DocaError } from '../core/error.js';

export const U64_MAX = (1n << 64n) - 1n;

export type WaitOp = 'gt' | 'eq' | 'neq';

/** A value as a u64 BigInt; INVALID_VALUE (naming `what`) outside [0, 2^64). */
export function toU64(call: string, what: string, value: bigint | number): bigint {
  // Small (the conversion and the errors out of line): every update and wait inlines it.
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

/** A mask as a u64: any integer in [-2^63, 2^64), negative ones taken as two's complement (-1 = all ones). */
export function toMask(call: string, mask: bigint | number): bigint {
  let m: bigint;
  try {
    m = BigInt(mask);
  } catch {
    throw new DocaError('INVALID_VALUE', call, `mask ${String(mask)} is not an integer`);
  }
  if (m < -(1n << 63n) || m > U64_MAX) throw new DocaError('INVALID_VALUE', call, `mask ${m} does not fit in 64 bits`);
  return BigInt.asUintN(64, m);
}

export function holds(op: WaitOp, value: bigint, operand: bigint, mask: bigint): boolean {
  const v = value & mask;
  return op === 'gt' ? v > operand : op === 'eq' ? v === operand : v !== operand;
}

/**
 * The async wait tasks' rule: the mask consists only of 0, 1, 2, 4 or 8 consecutive 0xFF bytes (softdpu
 * requires the run to be naturally aligned, e.g. 0xffff0000 but not 0x00ffff00).
 */
export function checkTaskMask(call: string, mask: bigint): void {
  if (mask === 0n) return;
  let shift = 0n;
  while (((mask >> shift) & 0xffn) === 0n) shift += 8n;
  const run = mask >> shift;
  const bytes = run === 0xffn ? 1n : run === 0xffffn ? 2n : run === 0xffffffffn ? 4n : run === U64_MAX ? 8n : 0n;
  if (bytes === 0n || (shift / 8n) % bytes !== 0n) {
    throw new DocaError('INVALID_VALUE', call, `mask 0x${mask.toString(16)} is not 0, 1, 2, 4 or 8 consecutive 0xff bytes (aligned to their size)`);
  }
}
