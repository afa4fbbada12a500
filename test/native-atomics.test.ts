/** Atomics on a shared segment are exact across processes; plain read-modify-write is not. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Segment } from '../src/fabric/segment.js';
import { LAYOUT } from './fixtures/adder-layout.js';
import { descriptorHex } from './fixtures/lib.js';
import { spawnChild } from './helpers/child.js';
import { until } from './helpers/wait.js';

async function race(t: TestContext, mode: 'atomic' | 'plain', count: number): Promise<Segment> {
  const seg = Segment.create('test', 256);
  t.after(() => seg.close());
  const hex = descriptorHex(seg.descriptor);
  const children = [spawnChild(t, 'adder', [hex, mode, String(count)]), spawnChild(t, 'adder', [hex, mode, String(count)])];
  await Promise.all(children.map((c) => c.waitFor(/^ready$/)));
  await until(() => Atomics.load(seg.i32, LAYOUT.ready) >= 2, 'both adders to say they are ready in the segment');
  Atomics.store(seg.i32, LAYOUT.go, 1);
  const exits = await Promise.all(children.map((c) => c.exited));
  assert.deepEqual(exits, [{ code: 0, signal: null }, { code: 0, signal: null }]);
  return seg;
}

test('two processes doing 1e6 atomic 64-bit adds each end at exactly 2e6', { timeout: 60_000 }, async (t) => {
  const seg = await race(t, 'atomic', 1_000_000);
  assert.equal(Atomics.load(seg.i64, LAYOUT.counter64), 2_000_000n);
});

test('the plain (non-atomic) control loses updates, so the race is real', { timeout: 90_000 }, async (t) => {
  // The two children must overlap on the two cores for a lost update; a busy machine may serialize
  // one round, so allow a few rounds before concluding that nothing was ever lost.
  const totals: number[] = [];
  for (let round = 0; round < 5; round++) {
    const seg = await race(t, 'plain', 1_000_000);
    totals.push(seg.i32[LAYOUT.plain32]!);
    if (totals.at(-1)! < 2_000_000) break;
  }
  assert.ok(totals.at(-1)! < 2_000_000, `plain increments never lost an update in ${totals.length} rounds: ${totals.join(', ')}`);
});
