/** Watches (the callback form of async waits that sleeping contexts use): unwatch is final and quiet. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Segment } from '../src/fabric/segment.js';
import { WakeSet } from '../src/fabric/wake-set.js';

const WORD = 64;

test('a watch never calls back after unwatch, even when its word changed just before', { timeout: 20_000 }, async () => {
  const seg = Segment.create('test', 64);
  let calls = 0;
  for (let i = 0; i < 100; i++) {
    const id = seg.watch(WORD, Atomics.load(seg.i32, WORD / 4), () => calls++);
    Atomics.add(seg.i32, WORD / 4, 1);
    seg.wake(WORD);
    // Give the waiter thread time to complete the wait, so the cancel usually finds a completed one.
    for (const start = performance.now(); performance.now() - start < 1; );
    Segment.unwatch(id);
  }
  await sleep(50);
  assert.equal(calls, 0);
  seg.close(); // nothing pending: the cancelled watches are gone
});

test('a watch with a timeout calls back when it passes; a wake set forwards it', { timeout: 10_000 }, async () => {
  const seg = Segment.create('test', 64);
  let woke = 0;
  const wakes = new WakeSet(() => woke++);
  wakes.add(seg, WORD, Atomics.load(seg.i32, WORD / 4), 20);
  for (let i = 0; i < 500 && woke === 0; i++) await sleep(10);
  assert.equal(woke, 1);
  wakes.clear();
  seg.close();
});
