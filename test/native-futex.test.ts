/** Futex waits (what the benchmarks compare with C): cross-process wake, timeouts, and closing rules. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { Segment } from '../src/fabric/segment.js';
import { descriptorHex } from './fixtures/lib.js';
import { spawnChild } from './helpers/child.js';
import { until } from './helpers/wait.js';

const WORD = 64; // first payload word

/** Wakes `seg` at `offset` until the wake reports a sleeper (proof a waiter sits in the kernel); how many it woke. */
async function wakeSleeper(seg: Segment, offset: number): Promise<number> {
  let woken = 0;
  await until(() => (woken = seg.wake(offset)) > 0, 'a waiter asleep in the kernel to wake');
  return woken;
}

test('a sync futex wait in one process is woken by a wake in another', { timeout: 60_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const child = spawnChild(t, 'waiter', [descriptorHex(seg.descriptor), 'sync', String(WORD), '0', '10000']);
  await child.waitFor(/^waiting$/);
  assert.equal(await wakeSleeper(seg, WORD), 1);
  assert.equal((await child.waitFor(/^result (.*)$/))[1], 'ok');
});

test('a wait with a timeout returns timed-out; a wrong expected value returns not-equal', { timeout: 60_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const before = performance.now();
  assert.equal(seg.wait(WORD, 0, 50), 'timed-out');
  assert.ok(performance.now() - before >= 45);
  assert.equal(seg.wait(WORD, 7, 1000), 'not-equal');
});

test('a closed segment throws on use instead of crashing', { timeout: 60_000 }, () => {
  const seg = Segment.create('test', 64);
  const { i32, u8 } = seg;
  seg.close();
  assert.equal(u8.length, 0, 'views are detached');
  assert.throws(() => Atomics.load(i32, 0), TypeError);
  for (const use of [() => seg.wait(WORD, 0, 1), () => seg.wake(WORD), () => seg.revoke()]) {
    assert.throws(use, (err: unknown) => DocaError.is(err, 'BAD_STATE'));
  }
  seg.close(); // idempotent
});

test('bad word offsets are refused with INVALID_VALUE', () => {
  const seg = Segment.create('test', 64);
  for (const offset of [-4, 2, seg.size, 1.5]) {
    assert.throws(() => seg.wake(offset), (err: unknown) => DocaError.is(err, 'INVALID_VALUE') && err.message.includes(String(offset)));
  }
  seg.close();
});

