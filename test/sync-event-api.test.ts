/** Sync event rules and semantics: configuration, modes, 64-bit values, every wait operator and mask. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { BufInventory } from '../src/core/buf.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { U64_MAX } from '../src/sync-event/condition.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { tempFabricDir } from './helpers/fabric.js';
import { code } from './helpers/errors.js';

function started(t: TestContext): { event: SyncEvent; host: ReturnType<typeof openDeviceByPci> } {
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const event = SyncEvent.create();
  event.addPublisherLocationRemotePci();
  event.addSubscriberLocationCpu(host);
  event.start();
  return { event, host };
}

test('locations: one publisher and one subscriber; GPU is NOT_SUPPORTED, a DPA location needs a Dpa; configuration only before start', (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const event = SyncEvent.create();
  assert.throws(() => event.start(), code('DOCA_ERROR_BAD_STATE', /set a publisher and a subscriber/));
  assert.throws(() => event.addPublisherLocationGpu({}), code('DOCA_ERROR_NOT_SUPPORTED', /GPU features are not supported/));
  assert.throws(() => event.addSubscriberLocationDpa({} as never), code('DOCA_ERROR_INVALID_VALUE', /needs a Dpa/));
  event.addPublisherLocationCpu(host);
  assert.throws(() => event.addPublisherLocationRemotePci(), code('DOCA_ERROR_INVALID_VALUE', /publisher location is already cpu/));
  event.addSubscriberLocationRemotePci();
  assert.equal(event.placement, 'remote_pci');
  event.start();
  for (const configure of [() => event.addSubscriberLocationCpu(host), () => event.setAddr(allocSharedMemory(8))]) assert.throws(configure, code('DOCA_ERROR_BAD_STATE', /configure it before start/));
  assert.throws(() => event.getGpuHandle(), code('DOCA_ERROR_NOT_SUPPORTED'));
  event.stop();
  event.destroy();
});

test('the two modes exclude each other; task configuration after the context started is NOT_PERMITTED', (t) => {
  const { event } = started(t);
  assert.throws(() => event.asCtx(), code('DOCA_ERROR_BAD_STATE', /cannot be a context/));
  event.stop();
  event.destroy();
  const host = openDeviceByPci('b1:00.0');
  const other = SyncEvent.create();
  other.addPublisherLocationCpu(host);
  other.addSubscriberLocationCpu(host);
  const ctx = other.asCtx();
  const pe = ProgressEngine.create();
  pe.connectCtx(ctx);
  ctx.taskGetSetConf(() => {}, () => {}, 2);
  assert.equal(ctx.start(), 'DOCA_SUCCESS');
  assert.throws(() => other.start(), code('DOCA_ERROR_BAD_STATE', /used as a context/));
  assert.throws(() => ctx.taskWaitEqSetConf(() => {}, () => {}, 1), code('DOCA_ERROR_NOT_PERMITTED', /configuration is allowed only while IDLE/));
  assert.throws(() => other.destroy(), code('DOCA_ERROR_IN_USE'));
  ctx.stop();
  other.destroy();
});

test('set_addr and set_doca_buf: 8 aligned bytes, DOCA permissions, and the counter really lives there', (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const mem = allocSharedMemory(64);
  const event = SyncEvent.create();
  assert.throws(() => event.setAddr(mem.subarray(0, 4)), code('DOCA_ERROR_INVALID_VALUE', /must be 8 bytes, not 4/));
  assert.throws(() => event.setAddr(mem.subarray(4, 12)), code('DOCA_ERROR_INVALID_VALUE', /not 8-byte aligned/));
  const map = Mmap.create();
  map.setMemrange(mem);
  map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  map.start();
  const inv = BufInventory.create(4);
  inv.start();
  assert.throws(() => event.setDocaBuf(inv.bufGetByData(map, mem.subarray(8, 16))), code('DOCA_ERROR_NOT_PERMITTED', /needs local read\/write and RDMA read, write and atomic/));
  const full = Mmap.create();
  full.setMemrange(mem);
  full.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.RDMA_READ | AccessFlag.RDMA_WRITE | AccessFlag.RDMA_ATOMIC | AccessFlag.PCI_READ_WRITE);
  full.start();
  assert.throws(() => event.setDocaBuf(inv.bufGetByData(full, mem.subarray(8, 20))), code('DOCA_ERROR_NOT_PERMITTED', /holds 12 data bytes/));
  event.setDocaBuf(inv.bufGetByData(full, mem.subarray(16, 24)));
  event.addPublisherLocationCpu(host);
  event.addSubscriberLocationRemotePci();
  event.start();
  event.updateSet(0x0102030405060708n);
  assert.deepEqual([...mem.subarray(16, 24)], [8, 7, 6, 5, 4, 3, 2, 1]);
  const imported = SyncEvent.createFromExport(openDeviceByPci('03:00.0'), event.exportToRemotePci(host));
  imported.start();
  assert.equal(imported.get(), 0x0102030405060708n);
  assert.throws(() => imported.addPublisherLocationCpu(host), code('DOCA_ERROR_NOT_PERMITTED', /cannot be configured/));
  const local = SyncEvent.create();
  local.setAddr(new Uint8Array(new ArrayBuffer(8)));
  local.addPublisherLocationCpu(host);
  local.addSubscriberLocationCpu(host);
  local.start();
  assert.throws(() => local.exportToRemotePci(host), code('DOCA_ERROR_NOT_SUPPORTED', /not shared memory/));
});

test('values are u64: add returns the value before, wraps at 2^64; out-of-range values are INVALID_VALUE', (t) => {
  const { event } = started(t);
  event.updateSet(U64_MAX);
  assert.equal(event.updateAdd(1n), U64_MAX);
  assert.equal(event.get(), 0n);
  event.updateSet(5);
  assert.equal(event.updateAdd(U64_MAX), 5n);
  assert.equal(event.get(), 4n);
  for (const bad of [-1n, 1n << 64n, 1.5]) assert.throws(() => event.updateSet(bad as bigint), code('DOCA_ERROR_INVALID_VALUE'));
  event.stop();
  assert.throws(() => event.get(), code('DOCA_ERROR_BAD_STATE', /not started/));
});

test('every wait operator with masks and across the wrap-around, busy and yielding, with an optional timeout', (t) => {
  const { event } = started(t);
  event.updateSet(0xffff_ffff_ffff_fff0n);
  const ok = (fn: () => void) => assert.doesNotThrow(fn);
  const times = (fn: () => void) => assert.throws(fn, code('DOCA_ERROR_TIME_OUT'));
  for (const [gt, eq, neq] of [[(v: bigint, m: bigint) => event.waitGt(v, m, { timeoutMs: 5 }), (v: bigint, m: bigint) => event.waitEq(v, m, { timeoutMs: 5 }), (v: bigint, m: bigint) => event.waitNeq(v, m, { timeoutMs: 5 })], [(v: bigint, m: bigint) => event.waitGtYield(v, m, { timeoutMs: 5 }), (v: bigint, m: bigint) => event.waitEqYield(v, m, { timeoutMs: 5 }), (v: bigint, m: bigint) => event.waitNeqYield(v, m, { timeoutMs: 5 })]] as const) {
    ok(() => gt(0xffff_ffff_ffff_ffefn, U64_MAX));
    times(() => gt(0xffff_ffff_ffff_fff0n, U64_MAX));
    ok(() => eq(0xf0n, 0xffn));
    ok(() => eq(0n, 0n));
    times(() => eq(0xf1n, 0xffn));
    ok(() => neq(0n, 0xf0n));
    times(() => neq(0xff00n, 0xff00n));
    ok(() => gt(0xfn, 0xf0n));
  }
  event.updateAdd(0x20n); // wraps to 0x10
  assert.equal(event.get(), 0x10n);
  times(() => event.waitGt(0x10n, -1n, { timeoutMs: 5 }));
  assert.doesNotThrow(() => event.waitEq(0x10n, -1n, { timeoutMs: 5000 }));
});

test('async tasks: get, notify_set, notify_add with the fetched value, wait_eq/neq with byte masks', { timeout: 60_000 }, async (t) => {
  const { event } = started(t);
  event.stop();
  event.destroy();
  const host = openDeviceByPci('b1:00.0');
  const ev = SyncEvent.create();
  ev.addPublisherLocationCpu(host);
  ev.addSubscriberLocationCpu(host);
  const ctx = ev.asCtx();
  const pe = ProgressEngine.create();
  pe.connectCtx(ctx);
  const noop = () => {};
  ctx.taskGetSetConf(noop, noop, 2);
  ctx.taskNotifySetSetConf(noop, noop, 2);
  ctx.taskNotifyAddSetConf(noop, noop, 2);
  ctx.taskWaitEqSetConf(noop, noop, 4);
  ctx.taskWaitNeqSetConf(noop, noop, 2);
  ctx.start();
  const run = async <T extends { submitAsync(): Promise<T>; free(): void; readonly inFlight: boolean }>(task: T): Promise<T> => {
    const done = task.submitAsync();
    while (pe.progress());
    // Nothing progresses the engine after this: a task still in flight would leave `await done` hanging.
    assert.equal(task.inFlight, false, 'the task completed within progress()');
    const r = await done;
    r.free();
    return r;
  };
  await run(ctx.taskNotifySetAllocInit(U64_MAX));
  const add = await run(ctx.taskNotifyAddAllocInit(3n));
  assert.equal(add.getFetchedVal(), U64_MAX);
  assert.equal((await run(ctx.taskGetAllocInit())).getRetVal(), 2n);
  for (const bad of [0x0ff0n, 0xfffn, 0xff00ffn, 0xffff00n, 0xffffffff00n]) assert.throws(() => ctx.taskWaitEqAllocInit(0n, bad), code('DOCA_ERROR_INVALID_VALUE', /consecutive 0xff bytes/));
  const wait = ctx.taskWaitEqAllocInit(0x0500n, 0xff00n);
  const settled = wait.submitAsync();
  assert.equal(pe.progress(), false, 'nothing happens while the condition does not hold');
  await run(ctx.taskNotifySetAllocInit(0x0542n));
  while (pe.progress());
  (await settled).free();
  // The event holds 0x0542 now: wait_neq(0, mask 0xffff) holds at once and completes successfully.
  const neq = ctx.taskWaitNeqAllocInit(0n, 0xffffn);
  const neqDone = neq.submitAsync();
  while (pe.progress());
  assert.equal(neq.inFlight, false, 'wait_neq completed: 0x0542 & 0xffff != 0');
  assert.equal(neq.getStatus(), 'DOCA_SUCCESS');
  assert.equal(await neqDone, neq);
  neq.free();
  await run(ctx.taskNotifySetAllocInit(7n));
  const stuck = ctx.taskWaitNeqAllocInit(7n, -1n);
  const flushed = stuck.submitAsync();
  ctx.stop();
  while (pe.progress());
  await assert.rejects(flushed, code('DOCA_ERROR_SHUTDOWN'));
  stuck.free();
  while (pe.progress());
  assert.equal(ctx.state, 'IDLE');
  ev.destroy();
});

test('bad blobs are refused: truncated, corrupted, another fabric, destroyed; remote_pci export needs cpu/remote_pci/dpa', (t) => {
  const { event, host } = started(t);
  const blob = event.exportToRemotePci(host);
  const arm = openDeviceByPci('03:00.0');
  const reseal = (b: Uint8Array) => (new DataView(b.buffer).setUint32(12, crc32(b.subarray(16)), true), b);
  assert.throws(() => SyncEvent.createFromExport(arm, blob.subarray(0, 30)), code('DOCA_ERROR_INVALID_VALUE', /truncated/));
  const bent = new Uint8Array(blob);
  bent[60]! ^= 1;
  assert.throws(() => SyncEvent.createFromExport(arm, bent), code('DOCA_ERROR_INVALID_VALUE', /corrupted/));
  const foreign = new Uint8Array(blob);
  foreign[17]! ^= 1;
  assert.throws(() => SyncEvent.createFromExport(arm, reseal(foreign)), code('DOCA_ERROR_INVALID_VALUE', /another fabric/));
  const forged = new Uint8Array(blob);
  forged[24 + 24]! ^= 1; // the control segment's token
  assert.throws(() => SyncEvent.createFromExport(arm, reseal(forged)), code('DOCA_ERROR_NOT_FOUND', /has another token/));
  const net = SyncEvent.create();
  net.addPublisherLocationRemoteNet();
  net.addSubscriberLocationCpu(host);
  net.start();
  assert.throws(() => net.exportToRemotePci(host), code('DOCA_ERROR_NOT_SUPPORTED', /publisher and subscriber at cpu, remote_pci or dpa, not remote_net and cpu/));
  event.stop();
  event.destroy();
  assert.throws(() => SyncEvent.createFromExport(arm, blob), code('DOCA_ERROR_NOT_FOUND', /stale/));
});

test('await using: a sync event with a running context and a pending wait is stopped and destroyed', { timeout: 60_000 }, async (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const pe = ProgressEngine.create();
  let pending: Promise<unknown> | undefined;
  let kept: SyncEvent | undefined;
  {
    await using event = SyncEvent.create();
    kept = event;
    event.addPublisherLocationCpu(host);
    event.addSubscriberLocationCpu(host);
    const ctx = event.asCtx();
    pe.connectCtx(ctx);
    ctx.taskWaitEqSetConf(() => {}, () => {}, 1);
    ctx.start();
    const task = ctx.taskWaitEqAllocInit(1n, U64_MAX);
    // As in DOCA, a stopping context reaches IDLE once its flushed tasks are freed.
    pending = task.submitAsync().catch((err: unknown) => {
      task.free();
      throw err;
    });
    pending.catch(() => {});
  }
  await assert.rejects(pending!, code('DOCA_ERROR_SHUTDOWN'));
  assert.throws(() => kept!.get(), code('DOCA_ERROR_BAD_STATE'));
});
