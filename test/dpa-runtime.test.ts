/**
 * The DPA itself: start and stop on worker threads, RPCs, kernel launches gated on and completing sync
 * events, DPA memory, the device log, wrong handles, the per-DPU limit, and a kernel that overruns.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { openDeviceByPci } from '../src/core/dev.js';
import { devinfoCreateList, devinfoDestroyList } from '../src/core/devinfo.js';
import { DocaErrorCode } from '../src/core/error.js';
import { logBackendCreateWithBuf } from '../src/core/log.js';
import { DpaApp } from '../src/dpa/app.js';
import { DpaCompletion } from '../src/dpa/completion.js';
import { DpaNotificationCompletion } from '../src/dpa/notification-completion.js';
import { Dpa, dpaCapIsSupported } from '../src/dpa/dpa.js';
import { DpaThread } from '../src/dpa/thread.js';
import { H } from '../src/dpa/layout.js';
import { SyncEventRemoteNet } from '../src/sync-event/remote-net.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { appPath, dpaFabric, onCleanup, eventually, memfds, openFds, startDpa, threadCount } from './helpers/dpa.js';
import { code } from './helpers/errors.js';

function events(dpa: Dpa, dev: ReturnType<typeof openDeviceByPci>) {
  const wait = SyncEvent.create();
  wait.addPublisherLocationCpu(dev);
  wait.addSubscriberLocationDpa(dpa);
  wait.start();
  const comp = dpaToCpu(dpa, dev);
  return { wait, comp, close: () => [wait, comp].forEach((e) => (e.stop(), e.destroy())) };
}

/** A started event the DPA publishes and the CPU reads (a kernel's completion, what kernels add their ranks to). */
function dpaToCpu(dpa: Dpa, dev: ReturnType<typeof openDeviceByPci>): SyncEvent {
  const event = SyncEvent.create();
  event.addPublisherLocationDpa(dpa);
  event.addSubscriberLocationCpu(dev);
  event.start();
  return event;
}

/** `dpaToCpu`, destroyed after the test. */
function dpaToCpuEvent(t: TestContext, dpa: Dpa, dev: ReturnType<typeof openDeviceByPci>): SyncEvent {
  const event = dpaToCpu(dpa, dev);
  onCleanup(t, () => (event.stop(), event.destroy()));
  return event;
}

test('the DPA is on the Arm side and host PFs only; create, start, RPC, stop, destroy leave no thread or segment', { timeout: 30_000 }, async (t) => {
  dpaFabric(t);
  const list = devinfoCreateList();
  assert.deepEqual(list.map((d) => [d.getPciAddrStr(), dpaCapIsSupported(d)]), [['0000:03:00.0', true], ['0000:b1:00.0', true], ['0000:b1:00.2', false], ['0000:b1:00.3', false]]);
  devinfoDestroyList(list);
  assert.throws(() => Dpa.create(openDeviceByPci('b1:00.2')), code('NOT_SUPPORTED', /has no DPA/));
  const dev = openDeviceByPci('03:00.0');
  const threads = threadCount();
  const fds = openFds();
  const dpa = Dpa.create(dev);
  assert.throws(() => dpa.start(), code('BAD_STATE', /has no application/));
  assert.throws(() => dpa.rpc('add', 1n, 2n), code('BAD_STATE', /not started/));
  assert.throws(() => DpaApp.create('/nonexistent/app.js'), code('NOT_FOUND'));
  dpa.setApp(DpaApp.create(appPath('basic')));
  dpa.start();
  assert.equal(threadCount(), threads + dpa.getTotalNumEusAvailable(), 'one worker thread per execution unit');
  assert.throws(() => dpa.setApp(DpaApp.create(appPath('basic'))), code('BAD_STATE', /stop it first/));
  assert.equal(dpa.rpc('add', 40n, 2n), 42n);
  assert.equal(dpa.rpc(dpa.getApp()!.func('add'), 1, 2), 3n, 'functions by handle object; numbers are u64s too');
  assert.throws(() => dpa.rpc(DpaApp.create(appPath('basic')).func('add')), code('INVALID_VALUE', /function of basic, not of basic|not of/));
  assert.equal(await dpa.rpcAsync('add', 5n, 6n), 11n);
  const many = await Promise.all(Array.from({ length: 50 }, (_, i) => dpa.rpcAsync('add', BigInt(i), 1n)));
  assert.deepEqual(many, Array.from({ length: 50 }, (_, i) => BigInt(i + 1)));
  assert.throws(() => dpa.rpc('nope'), code('INVALID_VALUE', /"nope" is not a function exported by basic/));
  assert.throws(() => dpa.rpc('add', -1n), code('INVALID_VALUE', /not a u64/));
  assert.throws(() => dpa.rpc('not_a_u64'), code('INVALID_VALUE', /not a u64/));
  assert.equal(dpa.peekAtLastError(), undefined);
  assert.equal(memfds('dpa'), 1);
  dpa.destroy();
  await dpa.exited();
  assert.equal(threadCount(), threads, 'the execution units are gone');
  assert.equal(memfds('dpa') + memfds('dpaheap'), 0, 'the control and heap segments are gone');
  assert.deepEqual(openFds(), fds, 'no fd is left: no pipe of a bell an execution unit rang, no segment');
  assert.throws(() => dpa.rpc('add', 1n, 2n), code('BAD_STATE', /destroyed/));
  dev.close();
});

test('an application that fails to load fails start with INITIALIZATION; a DPA can start again after stop', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = Dpa.create(dev);
  dpa.setApp(DpaApp.create(appPath('broken')));
  assert.throws(() => dpa.start(), code('INITIALIZATION', /cannot load this application/));
  await dpa.exited();
  dpa.setApp(DpaApp.create(appPath('basic')));
  dpa.start();
  assert.equal(dpa.rpc('add', 1n, 1n), 2n);
  dpa.stop();
  dpa.start();
  assert.equal(dpa.rpc('add', 2n, 2n), 4n);
  dpa.destroy();
  await dpa.exited();
  dev.close();
});

test('$SOFTDPU_DPA_START_MS bounds the wait for the units: nonsense is INVALID_VALUE naming it, a longer limit starts as usual', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const saved = process.env.SOFTDPU_DPA_START_MS;
  t.after(() => {
    if (saved === undefined) delete process.env.SOFTDPU_DPA_START_MS;
    else process.env.SOFTDPU_DPA_START_MS = saved;
  });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = Dpa.create(dev);
  dpa.setApp(DpaApp.create(appPath('basic')));
  process.env.SOFTDPU_DPA_START_MS = '-5';
  assert.throws(() => dpa.start(), code('INVALID_VALUE', /SOFTDPU_DPA_START_MS "-5" is not a positive integer/));
  await dpa.exited();
  process.env.SOFTDPU_DPA_START_MS = '600000';
  dpa.start();
  assert.equal(dpa.rpc('add', 1n, 1n), 2n);
  dpa.destroy();
  await dpa.exited();
  dev.close();
});

test('back-to-back kernel launches, one and several instances each, all complete: a launch slot reused at once keeps its work', { timeout: 60_000 }, async (t) => {
  // A slot is freed by its last instance and refilled by the next launch at once. An EU whose look at
  // the slot was stale (the previous launch) cleared the new launch's ready bit: READY with no bit, it
  // never ran (seen once in 1408 launches of `softdpu bench dpa`). Each launch waits for the previous one.
  dpaFabric(t);
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const { comp, close } = events(dpa, dev);
  onCleanup(t, close);
  const sum = dpaToCpuEvent(t, dpa, dev);
  const handle = sum.getDpaHandle(dpa);
  let expectSum = 0n;
  for (let i = 1; i <= 60_000; i++) {
    // Mostly empty kernels (the shortest window between a slot's free and its refill), every 16th with
    // four instances adding their ranks.
    const threads = i % 16 === 0 ? 4 : 1;
    if (threads === 1) dpa.kernelLaunchUpdateAdd(undefined, 0, comp, 1n, 1, 'nothing');
    else dpa.kernelLaunchUpdateAdd(undefined, 0, comp, 1n, threads, 'rank_sum', handle);
    if (threads > 1) expectSum += BigInt((threads * (threads + 1)) / 2); // ranks 0..3 add 1..4
    // Polling without turning the event loop, as a DPA user's launch loop does; bounded by the clock.
    const deadline = performance.now() + 10_000;
    while (comp.get() < BigInt(i)) {
      if (performance.now() > deadline) assert.fail(`launch ${i} (${threads} instance(s)) did not complete within 10 s`);
    }
  }
  assert.equal(sum.get(), expectSum, 'every instance of every launch ran once');
});

test('a kernel waits for its event to reach the threshold, runs n instances, then sets or adds on the completion event', { timeout: 30_000 }, async (t) => {
  dpaFabric(t);
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const { wait, comp, close } = events(dpa, dev);
  onCleanup(t, close);
  const sum = dpaToCpuEvent(t, dpa, dev);
  dpa.kernelLaunchUpdateSet(wait, 4, comp, 10n, 16, 'rank_sum', sum.getDpaHandle(dpa));
  // These two stay: a kernel that ran too early would have added within them; a slow machine can
  // only hide that, never make the checks fail wrongly.
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(sum.get(), 0n, 'nothing ran: the wait event is 0');
  wait.updateSet(3n);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(sum.get(), 0n, '3 is below the threshold 4');
  wait.updateSet(4n);
  await eventually(() => comp.get() === 10n, 'the completion event');
  assert.equal(sum.get(), (16n * 17n) / 2n, 'every rank ran once: 1 + 2 + ... + 16');
  dpa.kernelLaunchUpdateAdd(wait, 4, comp, 5n, 1, 'hello_world');
  dpa.kernelLaunchUpdateAdd(undefined, 0, comp, 5n, 2, 'hello_world');
  await eventually(() => comp.get() === 20n, 'two adds of 5');
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'rank_sum', sum.getDpaHandle(dpa));
  await eventually(() => sum.get() === 137n, 'a launch without events');
  const max = dpa.getMaxThreadsPerKernel();
  assert.equal(max, 256);
  assert.throws(() => dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, max + 1, 'hello_world'), code('INVALID_VALUE', /num_threads number 257 is not in \[1, 256\]/));
  assert.throws(() => dpa.kernelLaunchUpdateSet(wait, 255, comp, 1n, 1, 'hello_world'), code('INVALID_VALUE', /wait threshold number 255 is outside \[0, 254\]/));
  const other = SyncEvent.create();
  other.addPublisherLocationCpu(dev);
  other.addSubscriberLocationCpu(dev);
  other.start();
  assert.throws(() => dpa.kernelLaunchUpdateSet(other, 0, undefined, 0, 1, 'hello_world'), code('NOT_SUPPORTED', /needs the DPA as publisher or subscriber/));
  other.stop();
  other.destroy();
});

test('a kernel can hold its execution unit in wait_gt; other work runs on the other units meanwhile', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const { wait: gate, comp: counter, close } = events(dpa, dev);
  onCleanup(t, close);
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'wait_then_add', counter.getDpaHandle(dpa), gate.getDpaHandle(dpa), 6n);
  await eventually(() => counter.get() === 1n, 'the kernel to start waiting');
  assert.equal(dpa.rpc('add', 2n, 3n), 5n, 'the other execution unit answers');
  gate.updateSet(7n);
  await eventually(() => counter.get() === 2n, 'the kernel to end');
});

test('DPA memory: alloc, copies both ways, memset, free; ranges outside the heap are refused', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1, heapSize: 1 << 16 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const p = dpa.memAlloc(100);
  const q = dpa.memAlloc(100);
  assert.ok(q >= p + 100n, 'allocations do not overlap');
  dpa.h2dMemcpy(p, new Uint8Array(100).fill(3));
  assert.equal(dpa.rpc('sum_bytes', p, 100n), 300n, 'DPA code sees what the host copied');
  dpa.memset(p, 7, 10);
  const back = new Uint8Array(100);
  dpa.d2hMemcpy(back, p);
  assert.deepEqual([back[0], back[9], back[10], back[99]], [7, 7, 3, 3]);
  assert.throws(() => dpa.memAlloc(1 << 16), code('NO_MEMORY'));
  assert.throws(() => dpa.h2dMemcpy(p - 1000n, new Uint8Array(4)), code('INVALID_VALUE', /not inside the DPA's memory/));
  assert.throws(() => dpa.d2hMemcpy(new Uint8Array(8), p + (1n << 20n)), code('INVALID_VALUE'));
  assert.equal(dpa.rpc('try_call', 5n, p + (1n << 20n), 8n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'dpaMemory refuses it on the DPA too');
  dpa.memFree(p);
  assert.throws(() => dpa.memFree(p), code('INVALID_VALUE', /not a pointer doca_dpa_mem_alloc returned/));
  assert.equal(dpa.rpc('try_call', 2n, 0n, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'zero is no handle');
  const storage = dpa.memAlloc(8);
  const ev = events(dpa, dev);
  onCleanup(t, ev.close);
  const thread = DpaThread.create(dpa);
  thread.setFuncArg('local_storage_thread', ev.comp.getDpaHandle(dpa));
  thread.setLocalStorage(storage);
  const notification = DpaNotificationCompletion.create(dpa, thread);
  notification.start();
  thread.start();
  thread.run();
  dpa.rpc('notify', notification.getDpaHandle());
  await eventually(() => ev.comp.get() === 1n, 'the thread to run');
  const local = new Uint8Array(8);
  dpa.d2hMemcpy(local, storage);
  assert.deepEqual([...local], new Array(8).fill(0x5a), 'the thread wrote its local storage');
  thread.stop();
  assert.throws(() => thread.destroy(), code('IN_USE', /still used by/));
  notification.stop();
  notification.destroy();
  thread.destroy();
});

test('device log lines reach the owner\'s DOCA log at the DPA\'s log level', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const lines: string[] = [];
  const backend = logBackendCreateWithBuf((l) => lines.push(l));
  onCleanup(t, () => backend.destroy());
  const dev = openDeviceByPci('b1:00.0');
  const dpa = startDpa(t, dev);
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 3, 'hello_world');
  await eventually(() => lines.filter((l) => /Hello from kernel instance \d of 3/.test(l)).length === 3, 'three log lines');
  assert.match(lines[0]!, /\[APP\]\[INF\]\[DPA::basic\]/);
  dpa.setLogLevel(40);
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'hello_world');
  // One execution unit runs them in order, and the lines come in order: once the WARNING line of the
  // kernel after it is here, an INFO line of hello_world would be too.
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'log_at', 40n);
  await eventually(() => lines.some((l) => /Marker at level 40/.test(l)), 'the WARNING line of the next kernel');
  assert.equal(lines.filter((l) => /Hello from kernel/.test(l)).length, 3, 'INFO lines are below WARNING: not sent');
  assert.throws(() => dpa.setLogLevel(45), code('INVALID_VALUE'));
});

test('handles: another DPA\'s, a destroyed object\'s, the wrong kind, and not a handle are refused on the DPA', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('03:00.0');
  const a = startDpa(t, dev);
  const b = startDpa(t, dev);
  const ev = events(a, dev);
  onCleanup(t, ev.close);
  const h = ev.comp.getDpaHandle(a);
  assert.equal(a.rpc('try_call', 1n, h, 0n, 0n), 0n, 'its own DPA takes it');
  assert.equal(ev.comp.get(), 1n);
  assert.equal(b.rpc('try_call', 1n, h, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'another DPA refuses it');
  assert.equal(a.rpc('try_call', 2n, h, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'an event is not a notification completion');
  const cq = DpaCompletion.create(a, 4);
  cq.start();
  const stale = cq.getDpaHandle();
  cq.stop();
  assert.equal(a.rpc('try_call', 3n, stale, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_BAD_STATE), 'a stopped completion');
  cq.destroy();
  assert.equal(a.rpc('try_call', 3n, stale, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_BAD_STATE), 'a destroyed completion');
  assert.throws(() => cq.getDpaHandle(), code('BAD_STATE', /destroyed/));
  const gone = SyncEvent.create();
  gone.addPublisherLocationDpa(a);
  gone.addSubscriberLocationCpu(dev);
  gone.start();
  const goneHandle = gone.getDpaHandle(a);
  gone.stop();
  gone.destroy();
  assert.equal(a.rpc('try_call', 4n, goneHandle, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_BAD_STATE), 'a destroyed event');
  const net = SyncEvent.create();
  net.addPublisherLocationRemoteNet();
  net.addSubscriberLocationCpu(dev);
  net.start();
  const remote = SyncEventRemoteNet.createFromExport(await net.exportToRemoteNet());
  const rh = remote.getDpaHandle(a);
  assert.equal(typeof rh, 'bigint');
  assert.equal(remote.getDpaHandle(a), rh, 'one handle per DPA');
  assert.equal(a.rpc('try_call', 4n, rh, 0n, 0n), BigInt(DocaErrorCode.DOCA_ERROR_INVALID_VALUE), 'a remote-net handle is not a local event handle');
  remote.destroy();
  assert.throws(() => remote.getDpaHandle(a), code('BAD_STATE'));
  net.stop();
  net.destroy();
  const imported = SyncEvent.createFromExport(dev, ev.wait.exportToRemotePci(dev));
  imported.start();
  assert.throws(() => imported.getDpaHandle(a), code('NOT_PERMITTED', /exported from|CPU handle/));
  imported.stop();
  imported.destroy();
});

test('a kernel that runs past the max run time makes the DPA fatal; later work fails with DRIVER, nothing hangs', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2, kernelMaxRunTimeMs: 1000 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const threads = threadCount();
  assert.equal(dpa.getKernelMaxRunTime(), 1);
  const pending = dpa.rpcAsync('add', 1n, 1n).then(() => 'ok');
  assert.equal(await pending, 'ok');
  const started = dpa.memAlloc(16);
  dpa.memset(started, 0, 16);
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 2, 'spin_forever', started);
  await eventually(() => {
    const marks = new Uint8Array(16);
    dpa.d2hMemcpy(marks, started);
    return marks[0] === 1 && marks[8] === 1;
  }, 'both execution units run spin_forever'); // so the RPC below can only wait
  // The blocking RPC ends with the DPA (the error says why), however long a loaded machine takes to see it.
  assert.throws(() => dpa.rpc('add', 1n, 2n), code('DRIVER', /ran \d+ ms on execution unit \d, past the kernel max run time of 1000 ms/));
  assert.match(dpa.peekAtLastError()!.message, /DOCA_ERROR_BAD_STATE/);
  await assert.rejects(dpa.rpcAsync('add', 1n, 1n), code('DRIVER', /fatal state/));
  assert.throws(() => dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'hello_world'), code('DRIVER'));
  dpa.destroy();
  await dpa.exited();
  assert.equal(threadCount(), threads - 2, 'the stuck execution units were terminated');
});

/** A pause between two tries of a race the test retries (each try starts from an event it waits for). */
const settle = () => new Promise((r) => setTimeout(r, 20));

test('the wake cursor past 2^31 still finds the idle execution unit: work is not left to a busy one', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 2, kernelMaxRunTimeMs: 20_000 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  assert.equal(await dpa.rpcAsync('add', 1n, 1n), 2n, 'both units came up');
  const sched = dpa._running('test').tables.sched;
  const idleMask = () => Atomics.load(sched.i32, H.IDLE / 4);
  // Unit 0 takes the spinning kernel (a negative cursor used to hide the units after 0 only).
  await eventually(() => idleMask() === 3, 'both units asleep');
  Atomics.store(sched.i32, H.WAKE_CURSOR / 4, 0);
  const started = dpa.memAlloc(16);
  dpa.memset(started, 0, 16);
  dpa.kernelLaunchUpdateSet(undefined, 0, undefined, 0, 1, 'spin_forever', started);
  await eventually(() => {
    const marks = new Uint8Array(8);
    dpa.d2hMemcpy(marks, started);
    return marks[0] === 1 && (idleMask() === 1 || idleMask() === 2);
  }, 'one execution unit spins, the other sleeps');
  const idle = idleMask() === 1 ? 0 : 1;
  const rung: number[] = [];
  const ringEu = sched.ringEu.bind(sched);
  sched.ringEu = (e, bit) => (rung.push(e), ringEu(e, bit));
  // The round-robin cursor is a shared i32 every wake adds to; after 2^31 wakes it reads negative.
  for (const cursor of [0x7ffffffe, 0x7fffffff, -0x80000000, -0x7fffffff, -2, -1]) {
    // The idle bit is set a moment before a unit that was just rung wakes again; then no unit is idle
    // and a wake rightly rings none. So try until one rings (a negative cursor used to ring none, ever).
    for (let attempt = 0; attempt < 50; attempt++) {
      await eventually(() => idleMask() === 1 << idle, 'the idle unit asleep again');
      Atomics.store(sched.i32, H.WAKE_CURSOR / 4, cursor);
      rung.length = 0;
      sched.wakeOne();
      if (rung.length > 0) break;
      await settle();
    }
    assert.deepEqual(rung, [idle], `a wake with the cursor at ${cursor} rings the idle unit ${idle}`);
  }
  assert.equal(await dpa.rpcAsync('add', 2n, 3n), 5n, 'and it serves work meanwhile');
});

test('DPA code that throws makes the DPA fatal too, and a pending promise-form RPC fails', { timeout: 30_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const dev = openDeviceByPci('b1:00.0');
  const dpa = startDpa(t, dev);
  await assert.rejects(dpa.rpcAsync('crash'), code('DRIVER', /Error: boom on the DPA/));
  assert.match(dpa.peekAtLastError()!.message, /boom on the DPA/);
});

test('the 29th DPA of a DPU fails start with DRIVER, across host and Arm sides; stopping one frees its place', { timeout: 60_000 }, async (t) => {
  dpaFabric(t, { numEus: 1 });
  const arm = openDeviceByPci('03:00.0');
  const host = openDeviceByPci('b1:00.0');
  const started: Dpa[] = [];
  onCleanup(t, async () => {
    for (const d of started) d.destroy();
    await Promise.all(started.map((d) => d.exited()));
  });
  for (let i = 0; i < 28; i++) {
    const dpa = Dpa.create(i % 2 ? host : arm);
    dpa.setApp(DpaApp.create(appPath('basic')));
    dpa.start();
    started.push(dpa);
  }
  const extra = Dpa.create(arm);
  extra.setApp(DpaApp.create(appPath('basic')));
  assert.throws(() => extra.start(), code('DRIVER', /already runs 28 DPAs/));
  started.shift()!.destroy();
  extra.start();
  started.push(extra);
  assert.equal(extra.rpc('add', 1n, 27n), 28n);
});
