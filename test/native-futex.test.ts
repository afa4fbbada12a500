/** Futex waits: cross-process wake, timeouts, the async waiter thread, and closing rules. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { DocaError } from '../src/core/error.js';
import { Segment } from '../src/fabric/segment.js';
import { descriptorHex } from './fixtures/lib.js';
import { spawnChild } from './helpers/child.js';

const WORD = 64; // first payload word

/** Wakes `seg` at `offset` until the wake reports one sleeper: proof a waiter sits in the kernel. */
async function wakeSleeper(seg: Segment, offset: number): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const woken = seg.wake(offset);
    if (woken > 0) return woken;
    await sleep(10);
  }
  return 0;
}

test('a sync futex wait in one process is woken by a wake in another', { timeout: 20_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const child = spawnChild(t, 'waiter', [descriptorHex(seg.descriptor), 'sync', String(WORD), '0', '10000']);
  await child.waitFor(/^waiting$/);
  assert.equal(await wakeSleeper(seg, WORD), 1);
  assert.equal((await child.waitFor(/^result (.*)$/))[1], 'ok');
});

test('an async wait in another process sleeps on its waiter thread and resolves once the word changes', { timeout: 20_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const child = spawnChild(t, 'waiter', [descriptorHex(seg.descriptor), 'async', String(WORD), '0', '10000']);
  await child.waitFor(/^waiting$/);
  assert.equal(await wakeSleeper(seg, WORD), 1, 'the waiter thread sleeps in the kernel on the word');
  // A wake without a change is a hint: the wait re-arms and stays pending.
  await sleep(50);
  assert.equal(child.lines.some((l) => l.startsWith('result')), false);
  Atomics.store(seg.i32, WORD / 4, 1);
  seg.wake(WORD);
  assert.equal((await child.waitFor(/^result (.*)$/))[1], 'ok');
});

test('a wait with a timeout returns timed-out; a wrong expected value returns not-equal', { timeout: 10_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const before = performance.now();
  assert.equal(seg.wait(WORD, 0, 50), 'timed-out');
  assert.ok(performance.now() - before >= 45);
  assert.equal(seg.wait(WORD, 7, 1000), 'not-equal');
  assert.equal(await seg.waitAsync(WORD, 0, { timeoutMs: 30 }), 'timed-out');
  assert.equal(await seg.waitAsync(WORD, 7, { timeoutMs: 5000 }), 'ok');
});

test('async waits do not occupy the libuv pool: fs.readFile completes while 8 waits are pending', { timeout: 20_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  let settled = 0;
  const waits = Array.from({ length: 8 }, (_, i) => seg.waitAsync(WORD + 4 * i, 0, { timeoutMs: 15_000 }).finally(() => settled++));
  const text = await readFile(new URL(import.meta.url), 'utf8');
  assert.ok(text.includes('libuv pool'));
  assert.equal(settled, 0, 'readFile finished while every wait was still pending');
  for (let i = 0; i < 8; i++) Atomics.store(seg.i32, WORD / 4 + i, 1);
  seg.wake(WORD);
  assert.deepEqual(await Promise.all(waits), Array(8).fill('ok'));
});

test('more async waits than futex_waitv takes (200) are all served', { timeout: 20_000 }, async (t) => {
  const seg = Segment.create('test', 200 * 4);
  t.after(() => seg.close());
  const waits = Array.from({ length: 200 }, (_, i) => seg.waitAsync(WORD + 4 * i, 0, { timeoutMs: 15_000 }));
  await sleep(20);
  for (let i = 0; i < 200; i++) {
    Atomics.store(seg.i32, WORD / 4 + i, 1);
    seg.wake(WORD + 4 * i);
  }
  assert.deepEqual(await Promise.all(waits), Array(200).fill('ok'));
});

test('an aborted async wait rejects with the reason and frees the segment for closing', { timeout: 10_000 }, async () => {
  const seg = Segment.create('test', 64);
  const ac = new AbortController();
  const wait = seg.waitAsync(WORD, 0, { signal: ac.signal });
  ac.abort(new Error('stop waiting'));
  await assert.rejects(wait, /stop waiting/);
  seg.close();
  assert.equal(seg.closed, true);
});

test('closing a segment with an async wait in flight is refused with IN_USE', { timeout: 10_000 }, async () => {
  const seg = Segment.create('test', 64);
  const wait = seg.waitAsync(WORD, 0, { timeoutMs: 10_000 });
  assert.throws(
    () => seg.close(),
    (err: unknown) => err instanceof DocaError && err.code === 'DOCA_ERROR_IN_USE' && /1 async waits in flight/.test(err.message),
  );
  assert.equal(seg.closed, false);
  Atomics.store(seg.i32, WORD / 4, 1);
  seg.wake(WORD);
  assert.equal(await wait, 'ok');
  seg.close();
});

test('a closed segment throws on use instead of crashing', { timeout: 10_000 }, () => {
  const seg = Segment.create('test', 64);
  const { i32, u8 } = seg;
  seg.close();
  assert.equal(u8.length, 0, 'views are detached');
  assert.throws(() => Atomics.load(i32, 0), TypeError);
  for (const use of [() => seg.wait(WORD, 0, 1), () => seg.wake(WORD), () => seg.waitAsync(WORD, 0), () => seg.revoke()]) {
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

test('an unreferenced async wait lets the process exit; a referenced one keeps it until it settles', { timeout: 20_000 }, async (t) => {
  const loose = spawnChild(t, 'keepalive', ['false']);
  assert.deepEqual(await loose.exited, { code: 0, signal: null });
  assert.deepEqual(loose.lines, ['registered', 'exit']);
  const held = spawnChild(t, 'keepalive', ['true']);
  assert.deepEqual(await held.exited, { code: 0, signal: null });
  assert.deepEqual(held.lines, ['registered', 'result timed-out', 'exit']);
});

test('a worker thread waits on the same waiter thread; ending the worker mid-wait is safe', { timeout: 20_000 }, async (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.url).then(async ({ Segment }) => {
      const seg = Segment.open(workerData.d);
      parentPort.postMessage('waiting');
      parentPort.postMessage(await seg.waitAsync(64, 0, { timeoutMs: 10000 }));
      void seg.waitAsync(68, 0, { timeoutMs: 10000 });
      parentPort.postMessage('second');
    });`;
  const url = new URL('../src/fabric/segment.js', import.meta.url).href;
  const worker = new Worker(code, { eval: true, workerData: { url, d: seg.descriptor } });
  const messages: unknown[] = [];
  const next = () => new Promise((resolve) => worker.once('message', resolve));
  messages.push(await next());
  Atomics.store(seg.i32, WORD / 4, 1);
  seg.wake(WORD);
  messages.push(await next(), await next());
  assert.deepEqual(messages, ['waiting', 'ok', 'second']);
  await worker.terminate();
  // The process (and its waiter thread) carries on after the worker's env went away with a wait pending.
  assert.equal(await seg.waitAsync(WORD + 8, 0, { timeoutMs: 20 }), 'timed-out');
});
