/** Memory maps exported over PCI: another process reads and writes the same bytes; bad blobs are refused. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { BufInventory } from '../src/core/buf.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { allocSharedMemory, freeSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { useFabric } from '../src/fabric/fabric.js';
import { type Child, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { code } from './helpers/errors.js';

function exporter(t: TestContext, pci = '03:00.0') {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const dev = openDeviceByPci(pci);
  const mem = allocSharedMemory(65536);
  for (let i = 0; i < 1024; i++) mem[i] = (i * 31) % 256;
  const map = Mmap.create();
  map.setMemrange(mem);
  map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  map.addDev(dev);
  map.start();
  t.after(() => {
    try {
      map.destroy();
      dev.close();
    } catch {
      // the test already tore it down
    }
  });
  return { dir, dev, mem, map, blob: map.exportPci(dev) };
}

function importer(t: TestContext, dir: string, pci: string, blob: Uint8Array): Child {
  return spawnChild(t, 'mmap-importer', [pci, Buffer.from(blob).toString('hex')], { env: { SOFTDPU_FABRIC: dir } });
}

for (const [exportSide, importSide] of [['03:00.0', 'b1:00.0'], ['b1:00.2', '03:00.0']]) {
  test(`a map exported on ${exportSide} is read and written by another process on ${importSide}`, { timeout: 60_000 }, async (t) => {
    const { dir, mem, blob } = exporter(t, exportSide);
    const child = importer(t, dir, importSide, blob);
    assert.equal((await child.waitFor(/^imported (.*)$/))[1], 'ok 65536 fromExport=true');
    for (let i = 0; i < 1024; i++) assert.equal(mem[4096 + i], (i * 17) % 256);
    child.send('check');
    assert.equal((await child.waitFor(/^(valid|invalid.*)$/))[1], 'valid');
  });
}

test('destroying the exported map invalidates the import: an error on use, never a crash', { timeout: 60_000 }, async (t) => {
  const { dir, dev, map, blob } = exporter(t);
  const child = importer(t, dir, 'b1:00.0', blob);
  await child.waitFor(/^imported ok/);
  assert.throws(() => map.stop(), code('DOCA_ERROR_NOT_PERMITTED', /was exported; destroy it/));
  map.destroy();
  dev.close();
  child.send('check');
  assert.match((await child.waitFor(/^invalid (.*)$/))[1]!, /^DOCA_ERROR_BAD_STATE: .*no longer valid/);
  assert.equal((await child.waitFor(/^stale view length (\d+)$/))[1], '0', 'old views read as empty');
  const late = importer(t, dir, 'b1:00.0', blob);
  assert.match((await late.waitFor(/^import failed (.*)$/))[1]!, /^DOCA_ERROR_NOT_FOUND: .*stale/);
});

test('when the exporter is killed, the importer gets an error on its next use', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const exp = spawnChild(t, 'mmap-exporter', [], { env: { SOFTDPU_FABRIC: dir } });
  const hex = (await exp.waitFor(/^blob ([0-9a-f]+)$/))[1]!;
  const child = importer(t, dir, 'b1:00.0', new Uint8Array(Buffer.from(hex, 'hex')));
  await child.waitFor(/^imported ok/);
  exp.kill('SIGKILL');
  await exp.exited;
  // Stays: a liveness answer is trusted for 20 ms (fabric/liveness.ts ANSWER_TTL_MS) and is asked again
  // on use after that; this only lets it age, so a slower machine makes it older, never younger.
  await sleep(100);
  child.send('check');
  assert.match((await child.waitFor(/^invalid (.*)$/))[1]!, /^DOCA_ERROR_BAD_STATE/);
});

function reseal(blob: Uint8Array): Uint8Array {
  const copy = new Uint8Array(blob);
  new DataView(copy.buffer).setUint32(12, crc32(copy.subarray(16)), true);
  return copy;
}

test('bad blobs are refused: truncated, corrupted, wrong kind, another fabric, forged, stale', (t) => {
  const { dev, map, blob } = exporter(t);
  const host = openDeviceByPci('b1:00.0');
  const refused = (b: Uint8Array, name: Parameters<typeof code>[0], pattern: RegExp) => assert.throws(() => Mmap.createFromExport(b, host), code(name, pattern));
  refused(blob.subarray(0, 10), 'DOCA_ERROR_INVALID_VALUE', /truncated \(10 bytes\)/);
  refused(blob.subarray(0, blob.length - 1), 'DOCA_ERROR_INVALID_VALUE', /truncated or padded/);
  const flipped = new Uint8Array(blob);
  flipped[40]! ^= 0xff;
  refused(flipped, 'DOCA_ERROR_INVALID_VALUE', /corrupted \(checksum mismatch\)/);
  refused(new TextEncoder().encode('not a blob at all, not at all'), 'DOCA_ERROR_INVALID_VALUE', /not a softdpu export blob/);
  const kind = new Uint8Array(blob);
  kind[6] = 2;
  refused(reseal(kind), 'DOCA_ERROR_INVALID_VALUE', /sync event PCI export blob, not a mmap PCI export blob/);
  const otherFabric = new Uint8Array(blob);
  otherFabric[16]! ^= 1;
  refused(reseal(otherFabric), 'DOCA_ERROR_INVALID_VALUE', /another fabric/);
  const forgedToken = new Uint8Array(blob);
  forgedToken[24 + 24]! ^= 0x55; // first byte of the segment descriptor's token
  refused(reseal(forgedToken), 'DOCA_ERROR_NOT_FOUND', /has another token/);
  const outside = new Uint8Array(blob);
  new DataView(outside.buffer).setFloat64(24 + 48, 1 << 30, true); // length
  refused(reseal(outside), 'DOCA_ERROR_INVALID_VALUE', /outside its/);
  // A genuine segment of the exporter, with its real token, but not memory: the export table the
  // trailer names (payload 60 + 8). Mapped as the map's memory, an importer could revive revoked exports.
  const tableAsMemory = new Uint8Array(blob);
  tableAsMemory.set(blob.subarray(24 + 68, 24 + 68 + 40), 24 + 0);
  tableAsMemory.set([0, 0, 0, 0, 0, 0, 0, 0], 24 + 40); // offset 0, so the length check cannot refuse it first
  refused(reseal(tableAsMemory), 'DOCA_ERROR_INVALID_VALUE', /is a "exports" segment, not "mem"/);
  map.destroy();
  dev.close();
  refused(blob, 'DOCA_ERROR_NOT_FOUND', /stale/);
});

test('export needs a started map with a PCI permission, shared memory and the device added', (t) => {
  const { dev, mem } = exporter(t);
  const host = openDeviceByPci('b1:00.0');
  const local = Mmap.create();
  local.setMemrange(Buffer.alloc(64));
  local.addDev(dev);
  assert.throws(() => local.exportPci(dev), code('DOCA_ERROR_BAD_STATE', /not started/));
  local.start();
  assert.throws(() => local.exportPci(dev), code('DOCA_ERROR_NOT_PERMITTED', /no PCI permission/));
  assert.throws(() => local.exportPci(host), code('DOCA_ERROR_NOT_PERMITTED'));
  const plain = Mmap.create();
  plain.setMemrange(Buffer.alloc(64));
  plain.setPermissions(AccessFlag.PCI_READ_WRITE);
  assert.throws(() => plain.start(), code('DOCA_ERROR_INVALID_VALUE', /must come from allocSharedMemory/));
  const shared = Mmap.create();
  shared.setMemrange(allocSharedMemory(128));
  shared.setPermissions(AccessFlag.PCI_READ_ONLY);
  shared.start();
  assert.throws(() => shared.exportPci(dev), code('DOCA_ERROR_NOT_FOUND', /was not added/));
  assert.throws(() => freeSharedMemory(mem), code('DOCA_ERROR_IN_USE', /1 mmap/));
});

test('map configuration: memrange once and before start, permissions validated, devices added once', (t) => {
  const { dev } = exporter(t);
  const map = Mmap.create();
  assert.throws(() => map.start(), code('DOCA_ERROR_INVALID_VALUE', /no memory range/));
  map.setMemrange(Buffer.alloc(16));
  assert.throws(() => map.setMemrange(Buffer.alloc(16)), code('DOCA_ERROR_NOT_PERMITTED', /already set/));
  assert.throws(() => map.setPermissions(1 << 9), code('DOCA_ERROR_INVALID_VALUE', /not access flags/));
  assert.throws(() => map.setPermissions(AccessFlag.PCI_READ_ONLY | AccessFlag.PCI_READ_WRITE), code('DOCA_ERROR_INVALID_VALUE', /exclude each other/));
  map.addDev(dev);
  assert.throws(() => map.addDev(dev), code('DOCA_ERROR_ALREADY_EXIST'));
  assert.throws(() => dev.close(), code('DOCA_ERROR_IN_USE', /mmap/));
  map.start();
  assert.throws(() => map.start(), code('DOCA_ERROR_BAD_STATE', /already started/));
  assert.throws(() => map.setPermissions(AccessFlag.LOCAL_READ_WRITE), code('DOCA_ERROR_BAD_STATE'));
  assert.throws(() => map.addDev(dev), code('DOCA_ERROR_NOT_PERMITTED'));
  const inv = BufInventory.create(1);
  inv.start();
  const buf = inv.bufGetByAddr(map, map.getMemrange().subarray(0, 8));
  assert.throws(() => map.stop(), code('DOCA_ERROR_NOT_PERMITTED', /1 buffer/));
  assert.throws(() => map.destroy(), code('DOCA_ERROR_NOT_PERMITTED', /1 buffer/));
  buf.decRefcount();
  map.stop();
  map.rmDev(dev);
  assert.throws(() => map.rmDev(dev), code('DOCA_ERROR_NOT_FOUND'));
  let freed: Uint8Array | undefined;
  map.setFreeCb((m) => (freed = m));
  map.destroy();
  assert.equal(freed?.length, 16);
  assert.throws(() => map.getMemrange(), code('DOCA_ERROR_BAD_STATE', /destroyed/));
});
