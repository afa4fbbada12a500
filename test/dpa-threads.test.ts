/**
 * DPA threads: one run per activation, activations during a run remembered once, completions that
 * activate only while armed (a thread that forgets to re-arm is not activated again, and is once it
 * re-arms), async post_wait ops, notify, finish, and a thousand threads on the default pool.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaErrorCode } from '../src/core/error.js';
import { DpaAsyncOps } from '../src/dpa/async-ops.js';
import { DpaCompletion } from '../src/dpa/completion.js';
import { DpaNotificationCompletion } from '../src/dpa/notification-completion.js';
import type { Dpa } from '../src/dpa/dpa.js';
import { DpaThread } from '../src/dpa/thread.js';
import { Faults } from '../src/fabric/faults/api.js';
import { dpaEvent, dpaFabric, eventually, onCleanup, startDpa, threadCount } from './helpers/dpa.js';
import { code } from './helpers/errors.js';

type Device = ReturnType<typeof openDeviceByPci>;

const event = dpaEvent;

/**
 * A counting thread (fixtures/dpa-apps/basic.ts) whose completion is fed by post_wait ops on `trigger`:
 * each activation counts itself on `report` and re-arms its completion when `rearm` says so.
 */
function countingThread(dpa: Dpa, dev: Device, rearm: boolean) {
  const report = event(dev, dpa, 'publisher');
  const trigger = event(dev, dpa, 'subscriber');
  const mem = dpa.memAlloc(32);
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('counting_thread', mem);
  const cq = DpaCompletion.create(dpa, 16);
  cq.setThread(thread);
  cq.start();
  const ops = DpaAsyncOps.create(dpa, 16, 0x77);
  ops.attach(cq);
  ops.start();
  const args = new DataView(new ArrayBuffer(32));
  args.setBigUint64(8, rearm ? 1n : 0n, true);
  args.setBigUint64(16, report.getDpaHandle(dpa), true);
  args.setBigUint64(24, cq.getDpaHandle(), true);
  dpa.h2dMemcpy(mem, new Uint8Array(args.buffer));
  thread.start();
  /** Posts a wait for `trigger > value` (completing, when it holds, into the thread's completion). */
  const post = (value: bigint) => dpa.rpc('post_wait_gt', ops.getDpaHandle(), trigger.getDpaHandle(dpa), value);
  const close = () => {
    thread.stop();
    ops.stop();
    ops.destroy();
    cq.stop();
    cq.destroy();
    thread.destroy();
    for (const e of [report, trigger]) e.stop(), e.destroy();
  };
  return { thread, cq, ops, report, trigger, post, close };
}

/**
 * A window for an activation that must not happen: one that did would have run within it. A slow
 * machine can only hide such an activation, never make the check after it fail wrongly.
 */
const settle = () => new Promise((r) => setTimeout(r, 60));

test('a completion activates its thread once per arming; one that forgets to re-arm is not activated again, until it re-arms', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const c = countingThread(dpa, dev, false);
  onCleanup(t, c.close);
  c.post(0n);
  c.trigger.updateSet(1n);
  await settle();
  assert.equal(c.report.get(), 0n, 'not runnable yet (no thread_run): the activation waits');
  c.thread.run();
  await eventually(() => c.report.get() === 1n, 'the remembered activation');
  c.post(1n);
  c.trigger.updateSet(2n);
  await settle();
  assert.equal(c.report.get(), 1n, 'the thread did not re-arm its completion: not activated');
  assert.equal(dpa.rpc('post_wait_gt', c.ops.getDpaHandle(), c.trigger.getDpaHandle(dpa), 2n), 0n);
  c.trigger.updateSet(3n);
  await settle();
  assert.equal(c.report.get(), 1n, 'still not activated');
  dpa.rpc('rearm', c.cq.getDpaHandle());
  await eventually(() => c.report.get() === 2n, 'the activation once re-armed: completions were waiting');
});

test('a thread that re-arms is activated by every completion; async ops complete with their user data', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = startDpa(t, dev);
  const c = countingThread(dpa, dev, true);
  onCleanup(t, c.close);
  c.thread.run();
  for (let i = 0; i < 20; i++) {
    c.post(BigInt(i));
    c.trigger.updateSet(BigInt(i + 1));
    await eventually(() => c.report.get() === BigInt(i + 1), `activation ${i + 1}`);
  }
  // post_wait_ne, and a wait that already holds when it is posted.
  dpa.rpc('post_wait_ne', c.ops.getDpaHandle(), c.trigger.getDpaHandle(dpa), 0n);
  await eventually(() => c.report.get() === 21n, 'a wait that holds at once');
  assert.equal(dpa.rpc('try_post_wait', c.ops.getDpaHandle(), c.trigger.getDpaHandle(dpa), 255n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'post_wait values are 0..254');
  c.trigger.updateSet(300n);
  assert.equal(dpa.rpc('try_post_wait', c.ops.getDpaHandle(), c.trigger.getDpaHandle(dpa), 3n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'an event beyond 254 too');
  assert.equal(dpa.rpc('try_call', 6n, c.ops.getDpaHandle(), c.report.getDpaHandle(dpa), 0n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'the DPA does not subscribe to the report event');
});

test('a thread notifies another; thread_finish ends both for good', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const counter = event(dev, dpa, 'publisher');
  onCleanup(t, () => (counter.stop(), counter.destroy()));
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('add_one_and_finish', counter.getDpaHandle(dpa));
  const notification = DpaNotificationCompletion.create(dpa, thread);
  notification.start();
  thread.start();
  thread.run();
  const notifier = DpaThread.create(dpa);
  notifier.setFuncArg('notify_thread', notification.getDpaHandle());
  const n2 = DpaNotificationCompletion.create(dpa, notifier);
  n2.start();
  notifier.start();
  notifier.run();
  dpa.rpc('notify', n2.getDpaHandle()); // the notifier notifies the counting thread, then finishes
  await eventually(() => counter.get() === 1n, 'the notified thread');
  for (let i = 0; i < 5; i++) dpa.rpc('notify', notification.getDpaHandle());
  dpa.rpc('notify', n2.getDpaHandle());
  await settle();
  assert.equal(counter.get(), 1n, 'both threads finished: no activation runs them again');
  for (const o of [notifier, thread]) o.stop();
  for (const o of [n2, notification]) o.stop(), o.destroy();
  for (const o of [notifier, thread]) o.destroy();
  assert.throws(() => notifier.run(), code('BAD_STATE', /destroyed/));
});

test('activations while a thread runs are remembered once: it runs exactly once more afterwards', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = startDpa(t, dev);
  const counter = event(dev, dpa, 'publisher');
  onCleanup(t, () => (counter.stop(), counter.destroy()));
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('slow_count', counter.getDpaHandle(dpa));
  const notification = DpaNotificationCompletion.create(dpa, thread);
  notification.start();
  thread.start();
  thread.run();
  dpa.rpc('notify', notification.getDpaHandle());
  await eventually(() => counter.get() === 1n, 'the first run');
  for (let i = 0; i < 5; i++) dpa.rpc('notify', notification.getDpaHandle()); // it is still in its 300 ms
  await eventually(() => counter.get() === 2n, 'the one remembered run');
  await new Promise((r) => setTimeout(r, 450)); // a window past the second run's 300 ms (as settle())
  assert.equal(counter.get(), 2n, 'five activations during a run make one more run, not five');
  thread.stop();
  notification.stop();
  notification.destroy();
  thread.destroy();
});

test('1,000 DPA threads run on the default pool of execution units', { timeout: 60_000 }, async (t) => {
  dpaFabric(t);
  const dev = openDeviceByPci('03:00.0');
  const before = threadCount();
  const dpa = startDpa(t, dev);
  const eus = dpa.getTotalNumEusAvailable();
  assert.equal(eus, 4, 'the default pool');
  assert.equal(threadCount(), before + eus, 'one worker per execution unit, not per DPA thread');
  const counter = event(dev, dpa, 'publisher');
  onCleanup(t, () => (counter.stop(), counter.destroy()));
  const handles = new DataView(new ArrayBuffer(8 * 1000));
  const objects: { thread: DpaThread; n: DpaNotificationCompletion }[] = [];
  for (let i = 0; i < 1000; i++) {
    const thread = DpaThread.create(dpa);
    thread.setFuncArg('add_one_and_finish', counter.getDpaHandle(dpa));
    const n = DpaNotificationCompletion.create(dpa, thread);
    n.start();
    thread.start();
    thread.run();
    handles.setBigUint64(i * 8, n.getDpaHandle(), true);
    objects.push({ thread, n });
  }
  const list = dpa.memAlloc(8 * 1000);
  dpa.h2dMemcpy(list, new Uint8Array(handles.buffer));
  const t0 = performance.now();
  dpa.rpc('notify_all', list, 1000n);
  await eventually(() => counter.get() === 1000n, 'a thousand activations', 20_000);
  t.diagnostic(`1000 DPA threads activated and run in ${(performance.now() - t0).toFixed(0)} ms on ${eus} execution units`);
  assert.equal(threadCount(), before + eus, 'still only the pool');
  for (const { thread, n } of objects) {
    thread.stop();
    n.stop();
    n.destroy();
    thread.destroy();
  }
  dpa.destroy();
  await dpa.exited();
  assert.equal(threadCount(), before);
});

test('configuration and life rules of threads and completions', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const thread = DpaThread.create(dpa);
  assert.throws(() => thread.start(), code('BAD_STATE', /has no function/));
  assert.throws(() => thread.setFuncArg('missing'), code('INVALID_VALUE', /not a function exported/));
  thread.setFuncArg('counting_thread', 0n);
  assert.throws(() => thread.run(), code('BAD_STATE', /not started/));
  thread.start();
  assert.throws(() => thread.setFuncArg('counting_thread', 1n), code('BAD_STATE', /configure it while it is stopped/));
  assert.throws(() => thread.destroy(), code('BAD_STATE', /stop it first/));
  assert.throws(() => dpa.stop(), code('IN_USE', /DPA thread/));
  const cq = DpaCompletion.create(dpa, 5);
  assert.equal(cq.getQueueSize(), 8, 'rounded up to a power of two');
  assert.throws(() => cq.getDpaHandle(), code('BAD_STATE', /not started/));
  const ops = DpaAsyncOps.create(dpa, 4, 9n);
  assert.throws(() => ops.start(), code('BAD_STATE', /has no completion/));
  cq.start();
  ops.attach(cq);
  ops.start();
  assert.throws(() => cq.stop(), code('IN_USE', /still complete into/));
  ops.stop();
  ops.destroy();
  cq.stop();
  cq.destroy();
  thread.stop();
  thread.destroy();
  assert.throws(() => DpaCompletion.create(dpa, 0), code('INVALID_VALUE'));
});

test('a fault plan loses or delays a DPA thread\'s activation (event dpa_activation); re-arming, or the delay, brings it back', { timeout: 30_000 }, async (t) => {
  // API faults reach the execution units made after them (a worker starts with its creator's plans).
  Faults.clear();
  t.after(() => Faults.clear());
  Faults.add({ id: 'lose-1', kind: 'lose-event', match: { ctx: 'doca_dpa', event: 'dpa_activation' }, count: 1 });
  Faults.add({ id: 'delay-1', kind: 'delay-event', match: { event: 'dpa_activation' }, after: 1, count: 1, delayMs: 1500 });
  // One execution unit: the completions are posted, and the activations made, in one thread, which
  // counts the faults' triggers (they are per thread).
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const c = countingThread(dpa, dev, true);
  onCleanup(t, c.close);
  c.thread.run();

  // The first activation is lost: the completion waits in its queue, the context is disarmed, so
  // nothing activates the thread until it is re-armed.
  c.post(0n);
  c.trigger.updateSet(1n);
  await new Promise((r) => setTimeout(r, 400)); // a window (as settle()): the lost one never comes
  assert.equal(c.report.get(), 0n, 'the lost activation did not run the thread');
  dpa.rpc('rearm', c.cq.getDpaHandle());
  await eventually(() => c.report.get() === 1n, 'the activation on re-arming (a completion was waiting)');

  // The next one (the thread re-armed itself) is delayed by 1.5 s: not run at once, run after.
  c.post(1n);
  const delayed = performance.now();
  c.trigger.updateSet(2n);
  await new Promise((r) => setTimeout(r, 400));
  // Its 1.5 s run from after `delayed`: checked only while they cannot have passed (a loaded machine
  // may hold this thread longer than that).
  const report = c.report.get();
  if (performance.now() - delayed < 1500) assert.equal(report, 1n, 'the delayed activation has not run yet');
  await eventually(() => c.report.get() === 2n, 'the delayed activation', 10_000);

  // Both faults are spent: activations run at once again.
  for (let i = 2; i < 6; i++) {
    c.post(BigInt(i));
    c.trigger.updateSet(BigInt(i + 1));
    await eventually(() => c.report.get() === BigInt(i + 1), `activation ${i + 1}`);
  }
});
