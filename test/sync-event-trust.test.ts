/**
 * Sync events trust nothing another process wrote: an import naming the wrong segment is refused without
 * a leak, a waiter killed asleep gives its place back, and DOCA's rules on modes, capabilities and
 * permissions hold.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { BufInventory } from '../src/core/buf.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';
import { currentFabric, useFabric } from '../src/fabric/fabric.js';
import { encodeDescriptor, Segment } from '../src/fabric/segment.js';
import { frame, NetFrame, NetOp, NetReader, proof } from '../src/sync-event/remote-net-wire.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { hex } from './fixtures/se-lib.js';
import { spawnChild } from './helpers/child.js';
import { code } from './helpers/errors.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

const WAITING = 192 / 4; // src/sync-event/layout.ts

function exported(t: TestContext) {
  useFabric({ dir: tempFabricDir(t) });
  const arm = openDeviceByPci('03:00.0');
  const host = openDeviceByPci('b1:00.0');
  const event = SyncEvent.create();
  event.addPublisherLocationRemotePci();
  event.addSubscriberLocationCpu(arm);
  event.start();
  t.after(() => event.destroy());
  return { arm, host, event, blob: event.exportToRemotePci(arm) };
}

/** Memory mappings of this process (segments included). */
const mappings = () => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.includes('memfd:softdpu')).length;

test('a blob whose valid token names a smaller segment as the control block is refused with INVALID_VALUE, mapping nothing', (t) => {
  const { host, blob } = exported(t);
  const small = Segment.create('syncevent', 64); // the right kind, so the size check is what refuses it
  t.after(() => small.close());
  const forged = new Uint8Array(blob);
  encodeDescriptor(small.descriptor, new DataView(forged.buffer), 24); // the payload starts with the control descriptor
  new DataView(forged.buffer).setUint32(12, crc32(forged.subarray(16)), true);
  const before = mappings();
  assert.throws(() => SyncEvent.createFromExport(host, forged), code('DOCA_ERROR_INVALID_VALUE', /is not a sync event control block/));
  assert.equal(mappings(), before, 'both mappings were released');
});

test('a blob naming a genuine segment of another kind as the control block is refused with INVALID_VALUE, mapping nothing', (t) => {
  const { host, blob } = exported(t);
  const other = Segment.create('mem', 4096);
  t.after(() => other.close());
  const forged = new Uint8Array(blob);
  encodeDescriptor(other.descriptor, new DataView(forged.buffer), 24);
  new DataView(forged.buffer).setUint32(12, crc32(forged.subarray(16)), true);
  const before = mappings();
  assert.throws(() => SyncEvent.createFromExport(host, forged), code('DOCA_ERROR_INVALID_VALUE', /is a "mem" segment, not "syncevent"/));
  assert.equal(mappings(), before, 'nothing stays mapped');
});

test('a blob with a valid control block but an impossible value descriptor is refused with INVALID_VALUE, mapping nothing', (t) => {
  const { host, blob } = exported(t);
  const forged = new Uint8Array(blob);
  new DataView(forged.buffer).setFloat64(24 + 40 + 8, NaN, true); // the value descriptor's owner start time
  new DataView(forged.buffer).setUint32(12, crc32(forged.subarray(16)), true);
  const before = mappings();
  assert.throws(() => SyncEvent.createFromExport(host, forged), code('DOCA_ERROR_INVALID_VALUE', /segment descriptor holds impossible values/));
  assert.equal(mappings(), before, 'the control block mapping was released');
});

test('a blob pointing the counter elsewhere in the control block (at the waiter counts) is refused, mapping nothing', (t) => {
  const { host, blob } = exported(t);
  const forged = new Uint8Array(blob);
  new DataView(forged.buffer).setFloat64(24 + 80, 192, true); // the value offset, after both descriptors
  new DataView(forged.buffer).setUint32(12, crc32(forged.subarray(16)), true);
  const before = mappings();
  assert.throws(() => SyncEvent.createFromExport(host, forged), code('DOCA_ERROR_INVALID_VALUE', /counter at byte 192 of the event's control block, where the counter is at byte 128/));
  assert.equal(mappings(), before, 'the control block mapping was released');
  SyncEvent.createFromExport(host, blob).destroy(); // the genuine blob still imports
});

test('a waiter killed while asleep gives its place back: the waiting count comes down after updates', { timeout: 60_000 }, async (t) => {
  const { event, blob } = exported(t);
  const waiter = spawnChild(t, 'se-waiter', [hex(blob), 'b1:00.0', 'async', 'eq', '7', '-1', '0'], { env: { SOFTDPU_FABRIC: currentFabric().dir } });
  await waiter.waitFor(/^armed$/);
  const control = event._control!;
  assert.equal(Atomics.load(control.i32, WAITING), 1, 'the waiter announced itself');
  waiter.proc.kill('SIGKILL');
  await waiter.exited;
  event.updateSet(1n); // rings it: nobody reads its doorbell any more
  event.updateSet(2n); // finds its doorbell dead and gives the entry back
  assert.equal(Atomics.load(control.i32, WAITING), 0);
});

test('the synchronous calls are refused on an event running as a context, and the tasks on a started one', (t) => {
  const { event } = exported(t);
  assert.throws(() => event.asCtx(), code('DOCA_ERROR_BAD_STATE', /doca_sync_event_start/));
  const other = SyncEvent.create();
  other.addPublisherLocationCpu(openDeviceByPci('b1:00.0'));
  other.addSubscriberLocationCpu(openDeviceByPci('b1:00.0'));
  const ctx = other.asCtx();
  ProgressEngine.create().connectCtx(ctx);
  ctx.start();
  for (const call of [() => other.get(), () => other.updateSet(1n), () => other.updateAdd(1n), () => other.waitEq(0n)]) {
    assert.throws(call, code('DOCA_ERROR_BAD_STATE', /runs as a context: use its tasks/));
  }
  ctx.stop();
  other.destroy();
});

test('capabilities a topology switches off are refused where they are used', (t) => {
  const dir = tempFabricDir(t);
  const topology = join(dir, 'topo.json');
  writeFileSync(topology, JSON.stringify({ caps: { syncEvent: { taskGet: false, taskWaitEq: false, exportToRemoteNet: false } }, dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0' }] }] }));
  useFabric({ dir, topology });
  const host = openDeviceByPci('b1:00.0');
  const event = SyncEvent.create();
  event.addPublisherLocationRemoteNet();
  event.addSubscriberLocationCpu(host);
  const ctx = event.asCtx();
  assert.throws(() => ctx.taskGetSetConf(() => {}, () => {}, 1), code('DOCA_ERROR_NOT_SUPPORTED', /does not support the get task/));
  assert.throws(() => ctx.taskWaitEqSetConf(() => {}, () => {}, 1), code('DOCA_ERROR_NOT_SUPPORTED', /wait_eq/));
  ctx.taskNotifySetSetConf(() => {}, () => {}, 1);
  event.start();
  return assert.rejects(event.exportToRemoteNet(), code('DOCA_ERROR_NOT_SUPPORTED', /cannot export sync events to remote net/)).finally(() => {
    event.stop();
    event.destroy();
  });
});

test('a counter in a DocaBuf exports over PCI only when its map has PCI_READ_WRITE', (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const arm = openDeviceByPci('03:00.0');
  for (const pci of [false, true]) {
    const mem = allocSharedMemory(64);
    const map = Mmap.create();
    map.setMemrange(mem);
    map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.RDMA_READ | AccessFlag.RDMA_WRITE | AccessFlag.RDMA_ATOMIC | (pci ? AccessFlag.PCI_READ_WRITE : 0));
    map.addDev(arm);
    map.start();
    const inv = BufInventory.create(1);
    inv.start();
    const event = SyncEvent.create();
    event.addPublisherLocationRemotePci();
    event.addSubscriberLocationCpu(arm);
    event.setDocaBuf(inv.bufGetByData(map, mem.subarray(0, 8)));
    event.start();
    if (pci) assert.ok(event.exportToRemotePci(arm).length > 0);
    else assert.throws(() => event.exportToRemotePci(arm), code('DOCA_ERROR_NOT_PERMITTED', /needs PCI_READ_WRITE/));
    event.stop();
    event.destroy();
  }
});

test('remote net is bounded: one secret however many exports, a peer limit, and no reply queue for a peer that never reads', { timeout: 60_000 }, async (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const event = SyncEvent.create();
  event.addPublisherLocationRemoteNet();
  event.addSubscriberLocationCpu(openDeviceByPci('b1:00.0'));
  event.start();
  t.after(() => (event.stop(), event.destroy()));
  const blobs = await Promise.all(Array.from({ length: 20 }, () => event.exportToRemoteNet()));
  const secrets = new Set(blobs.map((b) => Buffer.from(b.subarray(24 + 66, 24 + 98)).toString('hex')));
  assert.equal(secrets.size, 1, 'every blob carries the event\'s one secret');
  const blob = blobs[0]!;
  const port = new DataView(blob.buffer, blob.byteOffset).getUint16(24 + 64, true);
  const secret = blob.subarray(24 + 66, 24 + 98);
  // A peer that authenticates, then floods requests and never reads a reply.
  const flood = connect({ host: '127.0.0.1', port });
  const admitted = new Promise<void>((resolve) => {
    const reader = new NetReader();
    flood.on('data', (chunk: Buffer) => {
      for (const body of reader.push(chunk) ?? []) {
        const mine = Buffer.alloc(32, 7);
        if (body[0] === NetFrame.CHALLENGE) flood.write(frame(NetFrame.AUTH, (v) => new Uint8Array(v.buffer, v.byteOffset, 64).set(Buffer.concat([mine, proof('client', secret, body.subarray(1, 33), mine)])), 64));
        if (body[0] === NetFrame.ADMITTED) {
          flood.pause(); // from now on it reads nothing
          resolve();
        }
      }
    });
  });
  t.after(() => flood.destroy());
  await admitted;
  const request = frame(NetFrame.REQUEST, (v) => v.setUint8(4, NetOp.GET), 13);
  // More replies than the kernel's socket buffers hold: past them, the exporter must stop reading.
  const many = Buffer.concat(Array.from({ length: 1000 }, () => request));
  for (let i = 0; i < 1000; i++) flood.write(many); // 19 MB of replies: more than any socket buffer holds
  const served = () => [...(event as unknown as { netServer: { sockets: Set<import('node:net').Socket> } }).netServer.sockets];
  // The exporter stops reading a peer whose replies back up.
  await until(() => served().length === 1 && served()[0]!.isPaused(), () => `the exporter to stop reading the peer that reads nothing (${served().length} peers)`);
  // Stays: a window for an exporter that read on regardless to queue its replies. With backpressure it
  // holds little at any time, so a slow machine can make the check weaker, never fail it wrongly.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(served().length, 1);
  // Without backpressure the exporter would queue what the kernel could not take: many megabytes.
  assert.ok(served()[0]!.writableLength < 1024 * 1024, `the exporter holds ${served()[0]!.writableLength} bytes of replies for a peer that reads none`);
  // Beyond the peer limit a connection is refused at once.
  const extra = Array.from({ length: 64 }, () => connect({ host: '127.0.0.1', port }));
  t.after(() => extra.forEach((s) => s.destroy()));
  const closed = await Promise.all(extra.map((s) => new Promise<boolean>((resolve) => (s.once('close', () => resolve(true)), s.once('data', () => resolve(false)), s.on('error', () => {})))));
  assert.equal(closed.filter(Boolean).length, 1, 'one of the 65 peers is refused');
});
