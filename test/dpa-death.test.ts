/**
 * Dead and stuck execution units (issue 18): a DPA thread that never returns, DPA code that ends its
 * worker, a unit terminated under work routed to it. Each is a crash of the DPA or a stop that still
 * comes down: the DPA's fatal state names the unit and the real cause, later calls fail fast, nothing is
 * lost silently, and `destroy()` leaves no worker, segment or fd.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { openDeviceByPci } from '../src/core/dev.js';
import { DpaNotificationCompletion } from '../src/dpa/notification-completion.js';
import type { Dpa } from '../src/dpa/dpa.js';
import { H } from '../src/dpa/layout.js';
import { ThreadState } from '../src/dpa/objects.js';
import { DpaThread } from '../src/dpa/thread.js';
import { quietly, toDpaChannel } from './helpers/dpa-channel.js';
import { dpaEvent, dpaFabric, eventually, memfds, onCleanup, openFds, startDpa, threadCount } from './helpers/dpa.js';
import { code } from './helpers/errors.js';

/** What this process holds before a DPA starts: threads, fds, DPA segments. */
function baseline(): () => void {
  const threads = threadCount();
  const fds = openFds();
  const segments = () => ['dpa', 'dpaheap', 'bell', 'consumer', 'conn', 'syncevent'].map((kind) => `${kind} ${memfds(kind)}`);
  const before = segments();
  return () => {
    assert.equal(threadCount(), threads, 'every execution unit thread is gone');
    assert.deepEqual(segments(), before, 'no DPA, heap, bell, queue, MsgQ or event segment is left');
    assert.deepEqual(openFds(), fds, 'no fd is left');
  };
}


/** The worker of execution unit `eu` (internal: the tests end one as a crash would). */
const workerOf = (dpa: Dpa, eu: number): Worker => (dpa._running('test').pool as unknown as { units: { worker: Worker }[] }).units[eu]!.worker;

test('a DPA thread that never returns: stop() times out, then the thread is destroyed and the DPA stops, freeing everything', { timeout: 60_000 }, async (t) => {
  dpaFabric(t, { numEus: 2, kernelMaxRunTimeMs: 1000 });
  const dev = openDeviceByPci('03:00.0');
  const clean = baseline();
  const dpa = startDpa(t, dev, 'crash');
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('spin_thread');
  thread.start();
  const notification = DpaNotificationCompletion.create(dpa, thread);
  notification.start();
  thread.run();
  dpa.rpc('notify', notification.getDpaHandle());
  const state = () => dpa._running('test').objects.state(thread.index);
  await eventually(() => state() === ThreadState.RUNNING, 'the thread to spin');
  assert.throws(() => thread.stop(), code('TIME_OUT', /still in its function/));
  notification.stop();
  notification.destroy();
  thread.destroy(); // refused with BAD_STATE ("is started; stop it first") before: the DPA could never stop
  assert.equal(dpa.rpc('add', 1n, 2n), 3n, 'the other unit still serves');
  dpa.destroy();
  await dpa.exited();
  clean();
  dev.close();
});

test('DPA code that exits its worker: the DPA is fatal, naming the unit and the exit; the RPC fails with that cause, later calls fail fast', { timeout: 60_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('b1:00.0');
  const clean = baseline();
  const dpa = startDpa(t, dev, 'crash');
  assert.throws(() => dpa.rpc('die', 1n), code('DRIVER', /worker of execution unit \d exited with code 1/));
  assert.match(dpa.peekAtLastError()!.message, /worker of execution unit \d exited with code 1 while running an RPC.*DOCA_ERROR_BAD_STATE/);
  assert.throws(() => dpa.rpc('add', 1n, 1n), code('DRIVER', /fatal state/));
  await assert.rejects(dpa.rpcAsync('add', 1n, 1n), code('DRIVER'));
  assert.throws(() => dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'add'), code('DRIVER'));
  assert.throws(() => DpaThread.create(dpa), code('DRIVER'));
  dpa.destroy();
  await dpa.exited();
  clean();
});

for (const how of [1n, 2n] as const) {
  test(`a DPA thread that ${how === 1n ? 'exits its worker' : 'throws'} makes the DPA fatal, naming its unit, although threads are not under the watchdog`, { timeout: 60_000 }, async (t) => {
    dpaFabric(t, { numEus: 2 });
    const dev = openDeviceByPci('03:00.0');
    const clean = baseline();
    const dpa = startDpa(t, dev, 'crash');
    const thread = DpaThread.create(dpa);
    thread.setFuncArg('die_thread', how);
    thread.start();
    const notification = DpaNotificationCompletion.create(dpa, thread);
    notification.start();
    thread.run();
    try {
      dpa.rpc('notify', notification.getDpaHandle());
    } catch (err) {
      assert.ok(code('DRIVER')(err), 'the DPA may be fatal before the notify returns'); // the thread runs on the other unit
    }
    await eventually(() => dpa.peekAtLastError() !== undefined, 'the DPA to notice its unit died', 20_000);
    assert.match(dpa.peekAtLastError()!.message, how === 1n ? /worker of execution unit \d exited with code 1 while running DPA thread \d+/ : /threw on purpose/);
    assert.throws(() => dpa.rpc('add', 1n, 1n), code('DRIVER'), 'the DPA stays fatal');
    thread.stop();
    notification.stop();
    notification.destroy();
    thread.destroy();
    dpa.destroy();
    await dpa.exited();
    clean();
  });
}

test('a unit terminated under work routed to it (a consumer completion\'s bell, an event\'s waiter entry): never a silent loss', { timeout: 60_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const clean = baseline();
  const dpa = startDpa(t, dev, 'crash');
  const channel = toDpaChannel(t, dpa, dev, { func: 'counting_consumer' });
  dpa.rpc('post', channel.consumers[0]!.getDpaHandle(), 8n);
  assert.equal(channel.send(new Uint8Array([1])), 'ok');
  await eventually(() => channel.counter.get() === 1n, 'the first message to be counted');
  const wait = dpaEvent(dev, dpa, 'subscriber');
  onCleanup(t, quietly(() => (wait.stop(), wait.destroy())));
  dpa.kernelLaunchUpdateAdd(wait, 1, undefined, 0n, 1, 'count', channel.counter.getDpaHandle(dpa));
  // The consumer's bell names unit `cc % units`; the waiter entry unit `event % units` (dpa/comch-consumer.ts, kernel.ts).
  const eu = channel.cc.index % 2;
  const i32 = dpa._running('test').tables.i32; // mapped until the DPA is destroyed
  await workerOf(dpa, eu).terminate();
  for (let i = 0; i < 3; i++) channel.send(new Uint8Array([2 + i]));
  wait.updateSet(1n);
  await eventually(() => channel.counter.get() === 5n || dpa.peekAtLastError() !== undefined, 'every message and the kernel counted, or the DPA fatal', 20_000);
  if (channel.counter.get() !== 5n) {
    assert.match(dpa.peekAtLastError()!.message, new RegExp(`worker of execution unit ${eu} exited with code 1`));
    assert.equal(Atomics.load(i32, H.IDLE / 4) & (1 << eu), 0, 'the dead unit is not taken for an idle one');
    assert.notEqual(channel.send(new Uint8Array([9])), 'ok', 'a send to a consumer of a fatal DPA is refused');
  }
  assert.deepEqual(await channel.close(), [], 'every step of the teardown succeeds');
  wait.stop();
  wait.destroy();
  dpa.destroy();
  await dpa.exited();
  clean();
});
