/**
 * The wait condition on u32 words (sync-event/condition.ts) against BigInt arithmetic: operands and
 * masks given as bigints and as numbers, negative masks, values across the 32-bit boundary.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Condition, U64_MAX, type WaitOp } from '../src/sync-event/condition.js';
import { code } from './helpers/errors.js';

const reference = (op: WaitOp, value: bigint, operand: bigint, mask: bigint): boolean => {
  const v = value & BigInt.asUintN(64, mask);
  return op === 'gt' ? v > operand : op === 'eq' ? v === operand : v !== operand;
};

/** A deterministic spread of u64s: edges of each word, and a pseudo-random rest. */
function samples(): bigint[] {
  const out = [0n, 1n, 0xffff_ffffn, 0x1_0000_0000n, 0x1_0000_0001n, 0x8000_0000n, 0x7fff_ffff_ffff_ffffn, 0x8000_0000_0000_0000n, U64_MAX, U64_MAX - 1n];
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < 40; i++) {
    x = BigInt.asUintN(64, x * 6364136223846793005n + 1442695040888963407n);
    out.push(i % 2 ? x : x >> BigInt(i));
  }
  return out;
}

test('holdsAt agrees with BigInt arithmetic for every operator, bigint and number operands and masks', () => {
  const values = new BigUint64Array(1);
  const cond = new Condition();
  const all = samples();
  const masks: (bigint | number)[] = [-1n, -1, U64_MAX, 0n, 0xffn, 0xffff_0000n, 0xffff_ffff_0000_0000n, -(1n << 63n), -(2 ** 63), 2 ** 40, -256, 0];
  for (const mask of masks) {
    cond.setMask('t', mask, false);
    for (const operand of all) {
      const given = operand <= BigInt(Number.MAX_SAFE_INTEGER) && operand % 3n === 0n ? Number(operand) : operand;
      cond.setOperand('t', 'value', given);
      assert.equal(cond.getOperand(), operand);
      assert.equal(cond.getMask(), BigInt.asUintN(64, BigInt(mask)));
      for (const value of all) {
        values[0] = value;
        for (const op of ['gt', 'eq', 'neq'] as const) {
          assert.equal(cond.holdsAt(op, values, 0), reference(op, value, operand, BigInt(mask)), `(${value} & ${mask}) ${op} ${operand}`);
        }
      }
    }
  }
});

test('operands and masks outside 64 bits, and non-integers, are INVALID_VALUE and change nothing', () => {
  const cond = new Condition();
  cond.setOperand('t', 'value', 7n);
  cond.setMask('t', 0xffn, false);
  for (const bad of [-1n, -1, U64_MAX + 1n, 2 ** 64]) assert.throws(() => cond.setOperand('t', 'value', bad), code('DOCA_ERROR_INVALID_VALUE', /value -?\d+ is outside \[0, 2\^64 - 1\]/));
  for (const bad of [1.5, NaN]) assert.throws(() => cond.setOperand('t', 'value', bad), code('DOCA_ERROR_INVALID_VALUE', /is not an integer/));
  for (const bad of [U64_MAX + 1n, -(1n << 63n) - 1n, 2 ** 64, -(2 ** 64)]) assert.throws(() => cond.setMask('t', bad, false), code('DOCA_ERROR_INVALID_VALUE', /does not fit in 64 bits/));
  assert.equal(cond.getOperand(), 7n);
  assert.equal(cond.getMask(), 0xffn);
});

test('task masks: 0, 1, 2, 4 or 8 aligned 0xff bytes, as bigints or numbers', () => {
  const cond = new Condition();
  const good = [0n, 0xffn, 0xff00n, 0xff_0000_0000_0000n, 0xffffn, 0xffff_0000n, 0xffff_0000_0000_0000n, 0xffff_ffffn, 0xffff_ffff_0000_0000n, U64_MAX, -1n, -1, 0xff00_0000];
  for (const m of good) assert.doesNotThrow(() => cond.setMask('t', m, true), `mask ${m}`);
  for (const m of [0x00ff_ff00n, 0xffff_ffff_ff00n, 0x0ff0n, 0xffff_ffff_0000n, 0xff00_0000_ffn, 0x1n, -256n]) {
    assert.throws(() => cond.setMask('t', m, true), code('DOCA_ERROR_INVALID_VALUE', /is not 0, 1, 2, 4 or 8 consecutive 0xff bytes/), `mask ${m}`);
  }
});
