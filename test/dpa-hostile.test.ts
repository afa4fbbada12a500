/**
 * Hostile shared tables (issue 18): words of the DPA segment, the async ops lists, a consumer's receive
 * queue and the RPC slots written by another thread with values that cannot be right. Each ends that
 * object (or the DPA) with a DOCA error, never a RangeError, never an access outside the object; and the
 * gaps the review found: element handles of a reused context, an activation of what is no thread, a
 * watchdog trusting a unit's clock, a launch gated on a destroyed event, a handle for another DPA's
 * event, `doca_dpa_get_last_error`, and fault plans added after the DPA started.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { QUEUE_LAYOUT as Q, QueueView } from '../src/comch/consumer-queue.js';
import { ComchMsgq } from '../src/comch/msgq.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaErrorCode } from '../src/core/error.js';
import { ComchDpaConsumer } from '../src/dpa/comch-consumer.js';
import { DpaAsyncOps } from '../src/dpa/async-ops.js';
import { DpaCompletion } from '../src/dpa/completion.js';
import { DpaNotificationCompletion } from '../src/dpa/notification-completion.js';
import type { Dpa } from '../src/dpa/dpa.js';
import { EU, H, OBJ, RPC, RpcState, WorkKind } from '../src/dpa/layout.js';
import { ASYNC_OPS, ATTACHED, COMPLETION, CONSUMER_COMPLETION, ObjState, ThreadState } from '../src/dpa/objects.js';
import { ComchConsumerCompletion } from '../src/dpa/consumer-completion.js';
import { DpaThread } from '../src/dpa/thread.js';
import type { Segment } from '../src/fabric/segment.js';
import { Faults } from '../src/fabric/faults/api.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { quietly, toDpaChannel } from './helpers/dpa-channel.js';
import { dpaEvent, dpaFabric, eventually, onCleanup, startDpa } from './helpers/dpa.js';
import { code } from './helpers/errors.js';
import { firstMessage } from './helpers/wait.js';

const E = DocaErrorCode;
type Device = ReturnType<typeof openDeviceByPci>;

/** An event with `dpa` as its `dpaRole` location, destroyed when the test ends. */
function event(t: Parameters<typeof onCleanup>[0], dev: Device, dpa: Dpa, dpaRole: 'subscriber' | 'publisher'): SyncEvent {
  const e = dpaEvent(dev, dpa, dpaRole);
  onCleanup(t, quietly(() => (e.stop(), e.destroy())));
  return e;
}

/** Async ops completing into a fresh completion, both started and torn down at the end. */
function asyncOps(t: Parameters<typeof onCleanup>[0], dpa: Dpa, userData = 0): DpaAsyncOps {
  const cq = DpaCompletion.create(dpa, 4);
  onCleanup(t, quietly(() => cq.destroy()));
  cq.start();
  onCleanup(t, quietly(() => cq.stop()));
  const ops = DpaAsyncOps.create(dpa, 4, userData);
  onCleanup(t, quietly(() => ops.destroy()));
  ops.attach(cq);
  ops.start();
  onCleanup(t, quietly(() => ops.stop()));
  return ops;
}

/** A thread of `func` with a notification completion, started and runnable. */
function notifiedThread(t: Parameters<typeof onCleanup>[0], dpa: Dpa, func: string, arg = 0n): { thread: DpaThread; notification: DpaNotificationCompletion } {
  const thread = DpaThread.create(dpa);
  onCleanup(t, quietly(() => thread.destroy()));
  thread.setFuncArg(func, arg);
  thread.start();
  onCleanup(t, quietly(() => thread.stop()));
  const notification = DpaNotificationCompletion.create(dpa, thread);
  onCleanup(t, quietly(() => notification.destroy()));
  notification.start();
  onCleanup(t, quietly(() => notification.stop()));
  thread.run();
  return { thread, notification };
}

test('async ops with a LIST word outside the arena or on other entries, or a bad SIZE: post_wait and the event sweep say UNEXPECTED, never a RangeError, never a write outside the list', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const r = dpa._running('test');
  const v = r.tables.view;
  const gate = event(t, dev, dpa, 'subscriber');
  const { thread } = notifiedThread(t, dpa, 'count', 0n);
  const post = (ops: DpaAsyncOps) => dpa.rpc('try_post_wait', ops.getDpaHandle(), gate.getDpaHandle(dpa), 5n);

  const outside = asyncOps(t, dpa);
  v.setUint32(r.objects.at(outside.index, ASYNC_OPS.LIST), 0xfffffff0, true);
  assert.equal(post(outside), BigInt(E.DOCA_ERROR_UNEXPECTED), 'a list beyond the segment (a RangeError inside post_wait before)');

  const onEntries = asyncOps(t, dpa);
  const entry = r.layout.object(thread.index);
  const before = [...r.segment.u8.subarray(entry, entry + 128)];
  v.setUint32(r.objects.at(onEntries.index, ASYNC_OPS.LIST), entry, true);
  assert.equal(post(onEntries), BigInt(E.DOCA_ERROR_UNEXPECTED), 'a list on the object table');
  assert.deepEqual([...r.segment.u8.subarray(entry, entry + 128)], before, 'the thread entry it named is untouched');

  const swept = asyncOps(t, dpa);
  assert.equal(post(swept), 0n, 'a wait for gate > 5 is posted');
  v.setUint32(r.objects.at(swept.index, ASYNC_OPS.SIZE), 0x7fffffff, true);
  gate.updateSet(1n); // the sweep of the unit that watches the gate looks at the posted waits
  await eventually(() => Atomics.load(r.tables.i32, r.objects.at(swept.index, OBJ.FAULT) / 4) !== 0 || dpa.peekAtLastError() !== undefined, 'the sweep to find the bad size');
  assert.equal(dpa.peekAtLastError(), undefined, 'the sweep ends the async ops, not its unit (nor the DPA)');
  assert.equal(post(swept), BigInt(E.DOCA_ERROR_UNEXPECTED), 'the ended async ops refuses posts');
  assert.equal(dpa.rpc('add', 1n, 2n), 3n, 'and the DPA serves on');
});

test('a receive filled with 200 bytes of immediate data ends that consumer only: the context serves its other consumer, CPU sends to the ended one are refused', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const channel = toDpaChannel(t, dpa, dev, { func: 'counting_consumer', consumers: 2, repostTo: 1 });
  const [bad, good] = channel.consumers as [typeof channel.consumers[0], typeof channel.consumers[0]];
  for (const c of channel.consumers) dpa.rpc('post', c.getDpaHandle(), 8n);
  // A producer that maps consumer 0's queue claims its next receive and fills it with what none can hold.
  const segment = (bad as unknown as { queue: { segment: Segment } }).queue.segment;
  const queue = new QueueView(segment, segment.size);
  const claim = queue.claim(0, 0);
  assert.ok(typeof claim === 'object' && 'slot' in claim);
  const slot = new DataView(segment.u8.buffer);
  slot.setUint32(claim.slot + Q.SLOT.LENGTH, 0, true);
  slot.setUint32(claim.slot + Q.SLOT.PRODUCER, 1, true);
  slot.setUint32(claim.slot + Q.SLOT.IMM_LEN, 200, true);
  Atomics.store(segment.i32, claim.slot / 4, Q.FILLED);
  assert.equal(channel.send(new Uint8Array([1]), 1), 'ok');
  await eventually(() => channel.counter.get() === 1n || dpa.peekAtLastError() !== undefined, 'the good consumer\'s message');
  assert.equal(dpa.peekAtLastError(), undefined, 'the DPA code never saw an exception (it did not catch one before: the DPA went fatal)');
  assert.equal(channel.counter.get(), 1n, 'the other consumer\'s message was returned past the bad slot');
  assert.equal(dpa.rpc('try_ack', bad.getDpaHandle(), 1n), BigInt(E.DOCA_ERROR_CONNECTION_ABORTED), 'the ended consumer');
  assert.equal(channel.send(new Uint8Array([2]), 0), 'DOCA_ERROR_NOT_CONNECTED', 'CPU producers find no consumer');
  assert.equal(channel.send(new Uint8Array([3]), 1), 'ok');
  await eventually(() => channel.counter.get() === 2n, 'the good consumer goes on');
  assert.equal(dpa.rpc('try_ack', good.getDpaHandle(), 0n), 0n, 'the other consumer is not ended');
});

/** A new started DPA completion, asserted to take the entry `index` just freed (the table reuses the last freed); stopped and destroyed after the test. */
function completionAt(t: Parameters<typeof onCleanup>[0], dpa: Dpa, index: number): DpaCompletion {
  const cq = DpaCompletion.create(dpa, 4);
  onCleanup(t, quietly(() => cq.destroy()));
  assert.equal(cq.index, index, 'the new completion takes the freed entry (the table reuses the last freed)');
  cq.start();
  onCleanup(t, quietly(() => cq.stop()));
  return cq;
}

test('element handles: a stale one of a reused completion index is refused (BAD_STATE), never read from the new queue', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const gate = event(t, dev, dpa, 'subscriber');
  gate.updateSet(1n);
  const first = DpaCompletion.create(dpa, 4);
  first.start();
  const ops = DpaAsyncOps.create(dpa, 4, 1);
  ops.attach(first);
  ops.start();
  assert.equal(dpa.rpc('try_post_wait', ops.getDpaHandle(), gate.getDpaHandle(dpa), 0n), 0n, 'completes at once (1 > 0)');
  const stale = dpa.rpc('take_element', first.getDpaHandle());
  assert.equal(dpa.rpc('element_user_data', stale), 1n);
  const index = first.index;
  ops.stop();
  ops.destroy();
  first.stop();
  first.destroy();
  const cq = completionAt(t, dpa, index);
  const ops2 = DpaAsyncOps.create(dpa, 4, 2);
  onCleanup(t, quietly(() => ops2.destroy()));
  ops2.attach(cq);
  ops2.start();
  onCleanup(t, quietly(() => ops2.stop()));
  assert.equal(dpa.rpc('try_post_wait', ops2.getDpaHandle(), gate.getDpaHandle(dpa), 0n), 0n);
  const fresh = dpa.rpc('take_element', cq.getDpaHandle());
  assert.equal(dpa.rpc('element_user_data', fresh), 2n, 'the new queue\'s element');
  assert.equal(dpa.rpc('element_user_data', stale), BigInt(1e9 + E.DOCA_ERROR_BAD_STATE), 'the old handle names a completion that was destroyed');
});

test('a handle a unit just resolved is refused once its object stops, ends or is destroyed (the resolve fast path reads the entry again)', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 }); // one unit: every call below meets the handle it resolved last
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const first = DpaCompletion.create(dpa, 4);
  onCleanup(t, quietly(() => first.destroy()));
  first.start();
  onCleanup(t, quietly(() => first.stop()));
  const handle = first.getDpaHandle();
  assert.equal(dpa.rpc('try_get', handle), 0n, 'started and empty');
  assert.equal(dpa.rpc('try_get', handle), 0n, 'again, through the fast path');
  first.stop();
  assert.equal(dpa.rpc('try_get', handle), BigInt(1e9 + E.DOCA_ERROR_BAD_STATE), 'stopped');
  first.start();
  assert.equal(dpa.rpc('try_get', handle), 0n, 'started again: the same handle works again');
  const index = first.index;
  first.stop();
  first.destroy();
  const second = completionAt(t, dpa, index);
  assert.equal(dpa.rpc('try_get', handle), BigInt(1e9 + E.DOCA_ERROR_BAD_STATE), 'the old handle names a destroyed completion, though its entry is started again');
  assert.equal(dpa.rpc('try_get', second.getDpaHandle()), 0n, 'the new handle works');
  assert.equal(dpa.rpc('try_get', second.getDpaHandle()), 0n, 'and through the fast path');
  assert.ok(dpa._running('test').tables.fault(second.index, 'UNEXPECTED', 'ended by the test'));
  assert.equal(dpa.rpc('try_get', second.getDpaHandle()), BigInt(1e9 + E.DOCA_ERROR_UNEXPECTED), 'an ended completion refuses the handle it resolved a call before');
});

test('a notification completion whose attached thread names another kind of object activates nothing', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const r = dpa._running('test');
  const { notification } = notifiedThread(t, dpa, 'count', 0n);
  const victim = DpaCompletion.create(dpa, 4);
  onCleanup(t, quietly(() => victim.destroy()));
  victim.start();
  onCleanup(t, quietly(() => victim.stop()));
  r.objects.store(notification.index, ATTACHED.THREAD, victim.index + 1);
  r.objects.store(notification.index, ATTACHED.THREAD_GEN, r.objects.generation(victim.index));
  dpa.rpc('notify', notification.getDpaHandle());
  assert.equal(r.objects.state(victim.index), ObjState.STARTED, 'the completion\'s state word is not a thread\'s to move (STARTED -> STARTED_PENDING before)');
});

for (const [what, bad] of [['NaN', () => Number.NaN], ['a time in the future', () => Date.now() + 1e9]] as const) {
  test(`the watchdog fires although the unit wrote ${what} as its run's start`, { timeout: 30_000 }, async (t) => {
    dpaFabric(t, { numEus: 2, kernelMaxRunTimeMs: 1000 });
    const dev = openDeviceByPci('03:00.0');
    const dpa = startDpa(t, dev, 'hostile');
    const r = dpa._running('test');
    const started = dpa.memAlloc(8);
    dpa.memset(started, 0, 8);
    dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'spin_marked', started);
    const mark = new Uint8Array(1);
    await eventually(() => (dpa.d2hMemcpy(mark, started), mark[0] === 1), 'the kernel to spin');
    const eu = [0, 1].find((e) => Atomics.load(r.tables.i32, (r.layout.eu(e) + EU.RUNNING) / 4) >>> 24 === WorkKind.LAUNCH)!;
    r.tables.view.setFloat64(r.layout.eu(eu) + EU.RUN_START, bad(), true);
    await eventually(() => dpa.peekAtLastError() !== undefined, 'the watchdog', 15_000);
    assert.match(dpa.peekAtLastError()!.message, new RegExp(`a kernel ran \\d+ ms on execution unit ${eu}, past the kernel max run time of 1000 ms`));
  });
}

test('an RPC slot whose state word another thread overwrote with no state fails the call (the DPA goes fatal) instead of waiting for ever', { timeout: 60_000 }, async (t) => {
  dpaFabric(t, { numEus: 1, kernelMaxRunTimeMs: 1000 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const r = dpa._running('test');
  const { thread, notification } = notifiedThread(t, dpa, 'spin_thread');
  dpa.rpc('notify', notification.getDpaHandle());
  await eventually(() => r.objects.state(thread.index) === ThreadState.RUNNING, 'the only unit to spin in a thread'); // no unit takes the call
  // The hostile writer: another thread of this process that maps the DPA segment, waits for the call to
  // be published in slot 0 and overwrites its state.
  const segmentJs = new URL('../src/fabric/segment.js', import.meta.url).href;
  const writer = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     import(workerData.segmentJs).then(({ Segment }) => {
       const segment = Segment.open(workerData.descriptor, 'hostile writer');
       parentPort.postMessage('mapped');
       while (Atomics.load(segment.i32, workerData.at / 4) !== ${RpcState.READY});
       Atomics.store(segment.i32, workerData.at / 4, 77);
       segment.close();
     });`,
    { eval: true, workerData: { segmentJs, descriptor: r.segment.descriptor, at: r.layout.rpc(0) + RPC.STATE } },
  );
  const gone = new Promise((resolve) => writer.once('exit', resolve));
  await firstMessage(writer, 'the writer to map the segment');
  assert.throws(() => dpa.rpc('add', 1n, 2n), code('DRIVER', /RPC slot 0 holds state 77/));
  await gone;
  assert.match(dpa.peekAtLastError()!.message, /holds state 77/);
  assert.equal(Atomics.load(r.tables.i32, H.STATE / 4), 3, 'FATAL');
});

test('a launch gated on an event that is destroyed frees its slot (the DOCA log says it will not run)', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const r = dpa._running('test');
  const counter = event(t, dev, dpa, 'publisher');
  const gate = dpaEvent(dev, dpa, 'subscriber');
  for (let i = 0; i < r.layout.dims.launches; i++) dpa.kernelLaunchUpdateAdd(gate, 1, undefined, 0n, 1, 'count', counter.getDpaHandle(dpa));
  assert.throws(() => dpa.kernelLaunchUpdateAdd(gate, 1, undefined, 0n, 1, 'count', counter.getDpaHandle(dpa)), code('NO_MEMORY', /launch slots/));
  gate.stop();
  gate.destroy();
  assert.equal(Atomics.load(r.tables.i32, H.GATED / 4), 0, 'nothing waits for the destroyed event');
  dpa.kernelLaunchUpdateAdd(undefined, 0, undefined, 0n, 1, 'count', counter.getDpaHandle(dpa));
  await eventually(() => counter.get() === 1n, 'a new launch to run');
  assert.equal(counter.get(), 1n, 'none of the gated kernels ran');
});

test('an event whose DPA location is one DPA gives no handle on another DPA', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const a = startDpa(t, dev, 'hostile');
  const b = startDpa(t, dev, 'hostile');
  const ev = event(t, dev, a, 'publisher');
  assert.equal(typeof ev.getDpaHandle(a), 'bigint');
  assert.throws(() => ev.getDpaHandle(b), code('NOT_SUPPORTED', /DPA of 0000:03:00\.0 is neither the publisher nor the subscriber location/));
});

test('doca_dpa_get_last_error gives the fatal error once and resets it; the DPA stays fatal', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'crash');
  assert.equal(dpa.getLastError(), undefined);
  assert.throws(() => dpa.rpc('die', 2n), code('DRIVER', /threw on purpose/));
  assert.match(dpa.getLastError()!.message, /threw on purpose.*DOCA_ERROR_BAD_STATE/);
  assert.equal(dpa.getLastError(), undefined, 'reset');
  assert.equal(dpa.peekAtLastError(), undefined);
  assert.throws(() => dpa.rpc('add', 1n, 1n), code('DRIVER', /fatal state/));
});

test('a fault added to the fabric after the DPA started reaches its execution units', { timeout: 30_000 }, async (t) => {
  const { dir } = dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const counter = event(t, dev, dpa, 'publisher');
  const { notification } = notifiedThread(t, dpa, 'count', counter.getDpaHandle(dpa));
  let notified = 0;
  const notify = () => (dpa.rpc('notify', notification.getDpaHandle()), notified++);
  notify();
  await eventually(() => counter.get() === 1n, 'the thread to run');
  Faults.add({ id: 'later', kind: 'lose-event', match: { ctx: 'doca_dpa', event: 'dpa_activation' }, count: 1 }, { fabric: dir });
  t.after(() => Faults.clear({ fabric: dir }));
  const injected = () => Faults.list({ fabric: dir }).faults.find((f) => f.id === 'later')?.injections ?? 0;
  // Notify whenever the last one ran; one is lost once the units follow the new plan.
  await eventually(() => {
    if (injected() > 0) return true;
    if (counter.get() === BigInt(notified)) notify();
    return false;
  }, 'an activation lost to the fault added after the start', 15_000);
  const ran = counter.get();
  notify();
  await eventually(() => counter.get() === ran + 1n, 'activations after the spent fault');
  assert.equal(counter.get(), BigInt(notified - 1), 'exactly one activation was lost');
});

test('an object\'s state word overwritten in shared memory does not keep its owner from stopping or destroying it', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const r = dpa._running('test');
  const msgq = ComchMsgq.create(dev);
  msgq.setDpaConsumer(dpa);
  msgq.start();
  onCleanup(t, quietly(() => msgq.destroy()));
  const consumer = ComchDpaConsumer.create(msgq); // created, never started
  r.objects.setState(consumer.index, ObjState.STARTED);
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('count', 0n);
  thread.start();
  r.objects.setState(thread.index, 77);
  assert.equal(consumer.state, 'IDLE', 'its owner knows it never started');
  consumer.destroy(); // IN_USE before, and its stop() then threw a TypeError (no queue)
  thread.stop();
  thread.destroy();
});

test('geometry words overwritten after an EU checked and cached them still end their object (UNEXPECTED): the cache is keyed by their values', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev, 'hostile');
  const r = dpa._running('test');
  const gate = event(t, dev, dpa, 'subscriber');
  gate.updateSet(1n);
  const cq = DpaCompletion.create(dpa, 4);
  onCleanup(t, quietly(() => cq.destroy()));
  const ops2 = DpaAsyncOps.create(dpa, 4, 6);
  onCleanup(t, quietly(() => ops2.destroy()));
  cq.start();
  onCleanup(t, quietly(() => cq.stop()));
  ops2.attach(cq);
  ops2.start();
  onCleanup(t, quietly(() => ops2.stop()));
  assert.equal(dpa.rpc('try_post_wait', ops2.getDpaHandle(), gate.getDpaHandle(dpa), 0n), 0n);
  const element = dpa.rpc('take_element', cq.getDpaHandle());
  assert.equal(dpa.rpc('element_user_data', element), 6n, 'read once: its ring checked and cached');
  r.tables.view.setUint32(r.objects.at(cq.index, COMPLETION.SIZE), 3, true);
  assert.equal(dpa.rpc('element_user_data', element), BigInt(1e9 + E.DOCA_ERROR_UNEXPECTED), 'a size no ring has: refused');
  const { thread } = notifiedThread(t, dpa, 'count');
  const cc = ComchConsumerCompletion.create(dpa);
  onCleanup(t, quietly(() => cc.destroy()));
  cc.setDpaThread(thread);
  cc.start();
  onCleanup(t, quietly(() => cc.stop()));
  assert.equal(dpa.rpc('drain_cc', cc.getDpaHandle()), 0n, 'nothing waits: its geometry checked and cached');
  r.tables.view.setUint32(r.objects.at(cc.index, CONSUMER_COMPLETION.RETURNED), 0xfffffff0, true);
  assert.equal(dpa.rpc('drain_cc', cc.getDpaHandle()), BigInt(1e9 + E.DOCA_ERROR_UNEXPECTED), 'a returned ring outside the arena: refused');
});
