/**
 * Properties of the export blob importers, fed what a peer can hand over: blobs the real exporters
 * made (they import to the same memory, the same counter); the same blobs with every byte changed to
 * every other value, every truncation, several bytes changed, extended, or replaced by random bytes
 * (refused: INVALID_VALUE); and blobs whose payload fields were changed and whose checksum was made
 * right again (imported within the named segment, or refused with a DOCA error the protocol names for
 * that blob). Never another exception, never more than a bound per import (they are synchronous),
 * never a mapping left behind (/proc/self/maps).
 *
 * Replay a failure: SOFTDPU_FC_SEED=<seed> node --test dist/test/property-blobs.test.js (the seed is
 * printed with each property and in the failure).
 */
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { isIP } from 'node:net';
import { type TestContext, test } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { type Dev, openDeviceByPci } from '../src/core/dev.js';
import type { DocaErrorShortName } from '../src/core/error.js';
import { allocSharedMemory, freeSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { useFabric } from '../src/fabric/fabric.js';
import { self } from '../src/fabric/liveness.js';
import { SEGMENT_HEADER_SIZE } from '../src/fabric/segment.js';
import { SyncEventRemoteNet } from '../src/sync-event/remote-net.js';
import { netBlob } from '../src/sync-event/remote-net-server.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { checkProperty, outcome, softdpuMappings } from './helpers/property.js';

const HEADER = 24;
/** protocol.md: envelope failures are INVALID_VALUE; a payload can also name a segment that does not open (NOT_FOUND, OPERATING_SYSTEM for open errors but ENOENT). */
const ENVELOPE: readonly DocaErrorShortName[] = ['INVALID_VALUE'];
const PCI_PAYLOAD: readonly DocaErrorShortName[] = ['INVALID_VALUE', 'NOT_FOUND', 'OPERATING_SYSTEM'];

function reseal(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(12, crc32(bytes.subarray(16)), true);
  return bytes;
}

/** Several bytes changed, an extension, or random bytes: the envelope refuses each one (single bytes: everySmallDamage). */
function envelopeDamage(blob: Uint8Array): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    fc.uniqueArray(fc.tuple(fc.nat(blob.length - 1), fc.integer({ min: 1, max: 255 })), { minLength: 2, maxLength: 8, selector: ([at]) => at }).map((changes) => {
      const b = new Uint8Array(blob);
      for (const [at, xor] of changes) b[at]! ^= xor;
      return b;
    }),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((tail) => new Uint8Array(Buffer.concat([blob, tail]))),
    fc.uint8Array({ maxLength: 2 * blob.length }),
    fc.uint8Array({ minLength: blob.length, maxLength: blob.length }),
  );
}

/** Every change of one byte to each of its 255 other values, and every truncation: all refused by the envelope. Returns the count. */
function everySmallDamage(blob: Uint8Array, importer: (b: Uint8Array) => unknown, what: string): number {
  let cases = 0;
  const refused = (b: Uint8Array) => {
    assert.ok('error' in outcome(() => importer(b), ENVELOPE, what), `${what}: accepted`);
    cases++;
  };
  for (let at = 0; at < blob.length; at++) {
    for (let xor = 1; xor < 256; xor++) {
      const b = new Uint8Array(blob);
      b[at]! ^= xor;
      refused(b);
    }
    refused(blob.slice(0, at));
  }
  return cases;
}

type FieldType = 'u16' | 'u32' | 'i32' | 'f64';
interface Layout {
  /** Payload offsets of numeric fields. */
  fields: [number, FieldType][];
  /** Payload offsets of segment descriptors (40 bytes: u32 pid, u32 fd, f64 start, f64 size, token). */
  descriptors: number[];
}

const descriptorFields = (at: number): [number, FieldType][] => [
  [at, 'u32'],
  [at + 4, 'u32'],
  [at + 8, 'f64'],
  [at + 16, 'f64'],
];

/** Payload layouts, protocol.md "Export blobs". */
const MMAP_LAYOUT: Layout = {
  fields: [...descriptorFields(0), [40, 'f64'], [48, 'f64'], [56, 'u32'], [60, 'u32'], [64, 'i32'], ...descriptorFields(68)],
  descriptors: [0, 68],
};
const SYNC_EVENT_LAYOUT: Layout = {
  fields: [...descriptorFields(0), ...descriptorFields(40), [80, 'f64'], [88, 'u32'], [92, 'i32'], ...descriptorFields(96)],
  descriptors: [0, 40, 96],
};

/** Our own fds that are not devices (a tty opened through /proc could become a controlling terminal). */
function ownFds(): number[] {
  return readdirSync('/proc/self/fd')
    .map(Number)
    .filter((fd) => {
      try {
        return !readlinkSync(`/proc/self/fd/${fd}`).startsWith('/dev/');
      } catch {
        return false;
      }
    });
}

function interesting(type: FieldType, pids: number[]): fc.Arbitrary<number> {
  switch (type) {
    case 'u16':
      return fc.oneof(fc.constantFrom(0, 1, 0xffff), fc.integer({ min: 0, max: 0xffff }));
    case 'u32':
      return fc.oneof(fc.constantFrom(0, 1, 4095, 4096, 0x7fffffff, 0x80000000, 0xffffffff, ...pids), fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 0xffffffff }));
    case 'i32':
      return fc.oneof(fc.constantFrom(0, 1, -1, 0x7fffffff, -0x80000000), fc.integer({ min: -0x80000000, max: 0x7fffffff }));
    case 'f64':
      return fc.oneof(
        fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, -1, 0.5, 63, 64, 65, 72, 4096, 32832, 65536, 65600, 2 ** 32, 2 ** 32 + 64, 2 ** 53, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE),
        fc.integer({ min: -(2 ** 31), max: 2 ** 33 }),
        fc.double(),
      );
  }
}

/**
 * Changes to a blob's payload (fields set to edge values, a descriptor pointed at one of our own fds
 * or at another descriptor of the blob, bytes flipped), and sometimes to its kind or fabric id, with
 * the checksum made right: what a forger who knows the format hands over.
 */
function forged(blob: Uint8Array, layout: Layout, pids: number[]): fc.Arbitrary<Uint8Array> {
  const fds = ownFds();
  const payload = blob.length - HEADER;
  const change = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...layout.fields).chain(([at, type]) => interesting(type, pids).map((value) => ({ what: 'field' as const, at, type, value }))) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...layout.descriptors), fc.constantFrom(...fds)).map(([at, fd]) => ({ what: 'own fd' as const, at, fd })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...layout.descriptors), fc.constantFrom(...layout.descriptors)).map(([at, from]) => ({ what: 'copy descriptor' as const, at, from })) },
    { weight: 3, arbitrary: fc.tuple(fc.nat(payload - 1), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => ({ what: 'flip' as const, at: HEADER + at, xor })) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 6, max: 23 }), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => ({ what: 'flip' as const, at, xor })) },
  );
  return fc.array(change, { minLength: 1, maxLength: 3 }).map((changes) => {
    const b = new Uint8Array(blob);
    const v = new DataView(b.buffer, HEADER);
    for (const c of changes) {
      if (c.what === 'flip') b[c.at]! ^= c.xor;
      else if (c.what === 'copy descriptor') b.copyWithin(HEADER + c.at, HEADER + c.from, HEADER + c.from + 40);
      else if (c.what === 'own fd') {
        v.setUint32(c.at, self.pid, true);
        v.setUint32(c.at + 4, c.fd, true);
        v.setFloat64(c.at + 8, self.start, true);
      } else if (c.type === 'u16') v.setUint16(c.at, c.value, true);
      else if (c.type === 'u32') v.setUint32(c.at, c.value >>> 0, true);
      else if (c.type === 'i32') v.setInt32(c.at, c.value | 0, true);
      else v.setFloat64(c.at, c.value, true);
    }
    return reseal(b);
  });
}

/** Runs `body` and asserts that every shared mapping it made is gone afterwards. */
async function noMappingLeft(what: string, body: () => Promise<void>): Promise<void> {
  const before = softdpuMappings();
  await body();
  assert.equal(softdpuMappings(), before, `${what}: shared mappings left behind`);
}

/** The bytes [start, end) a view covers lie in its segment's payload. */
function insidePayload(view: { byteOffset: number; byteLength: number; buffer: ArrayBufferLike }, what: string): void {
  assert.ok(view.byteOffset >= SEGMENT_HEADER_SIZE && view.byteOffset + view.byteLength <= view.buffer.byteLength, `${what}: [${view.byteOffset}, ${view.byteOffset + view.byteLength}) of a ${view.buffer.byteLength}-byte segment`);
}

function fabric(t: TestContext): { dir: string; arm: Dev; host: Dev } {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const arm = openDeviceByPci('03:00.0');
  const host = openDeviceByPci('b1:00.0');
  t.after(() => {
    host.close();
    arm.close();
  });
  return { dir, arm, host };
}

/** PCI permissions `setPermissions` accepts: one PCI flag, and RDMA write/atomic only with local write. */
const pciPermissions = fc.record({ pci: fc.constantFrom(AccessFlag.PCI_READ_ONLY, AccessFlag.PCI_READ_WRITE), local: fc.boolean(), read: fc.boolean(), write: fc.boolean(), atomic: fc.boolean(), relaxed: fc.boolean() }).map(
  (p) =>
    p.pci |
    (p.local ? AccessFlag.LOCAL_READ_WRITE : 0) |
    (p.read ? AccessFlag.RDMA_READ : 0) |
    (p.local && p.write ? AccessFlag.RDMA_WRITE : 0) |
    (p.local && p.atomic ? AccessFlag.RDMA_ATOMIC : 0) |
    (p.relaxed ? AccessFlag.PCI_RELAXED_ORDERING : 0),
);

test('mmap blobs: any map the exporter makes imports on the other side over the same bytes, with its permissions', { timeout: 150_000 }, async (t) => {
  const { arm, host } = fabric(t);
  const range = fc.integer({ min: 1, max: 16384 }).chain((size) => fc.tuple(fc.constant(size), fc.nat(size - 1)).chain(([s, off]) => fc.tuple(fc.constant(s), fc.constant(off), fc.integer({ min: 1, max: s - off }))));
  const exportOnArm = fc.boolean();
  const probe = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }));
  // The first export makes this process's export table: it stays, as it should.
  const warmMemory = allocSharedMemory(64);
  const warm = Mmap.create();
  warm.setMemrange(warmMemory);
  warm.setPermissions(AccessFlag.PCI_READ_WRITE);
  warm.addDev(arm);
  warm.start();
  warm.exportPci(arm);
  await noMappingLeft('mmap round trips', () =>
    checkProperty(
      t,
      fc.property(range, pciPermissions, exportOnArm, probe, ([size, off, len], permissions, onArm, [at, byte]) => {
        const [from, to] = onArm ? [arm, host] : [host, arm];
        const memory = allocSharedMemory(size);
        const map = Mmap.create();
        map.setMemrange(memory.subarray(off, off + len));
        map.setPermissions(permissions);
        map.addDev(from);
        map.start();
        const imported = Mmap.createFromExport(map.exportPci(from), to);
        const view = imported.getMemrange();
        assert.equal(view.length, len);
        insidePayload(view, 'imported range');
        assert.equal(imported.getPermissions(), permissions);
        assert.ok(imported.getFromExport());
        memory[off + (at % len)] = byte;
        assert.equal(view[at % len], byte, 'a byte the exporter wrote is seen by the importer');
        view[(at + 1) % len] = byte ^ 0xff;
        assert.equal(memory[off + ((at + 1) % len)], byte ^ 0xff, 'and the other way round');
        imported.destroy();
        map.destroy();
        freeSharedMemory(memory);
      }),
      200,
    ),
  );
  warm.destroy();
  freeSharedMemory(warmMemory);
});

/**
 * The damage and forgery properties for one blob from another process: damage is refused by the
 * envelope, forgeries are imported (`imported` checks and destroys the object) or refused with a code
 * of PCI_PAYLOAD; no mapping is left behind.
 */
async function damageAndForgery<T>(t: TestContext, blob: Uint8Array, layout: Layout, pids: number[], what: string, importer: (b: Uint8Array) => T, imported: (value: T) => void): Promise<void> {
  await noMappingLeft(what, async () => {
    t.diagnostic(`${everySmallDamage(blob, importer, what)} single-byte changes and truncations refused`);
    await checkProperty(
      t,
      fc.property(envelopeDamage(blob), (bad) => assert.ok('error' in outcome(() => importer(bad), ENVELOPE, `damaged ${what}`), `a damaged ${what} was imported`)),
      1000,
    );
    const outcomes = new Map<string, number>();
    await checkProperty(
      t,
      fc.property(forged(blob, layout, pids), (bad) => {
        const got = outcome(() => importer(bad), PCI_PAYLOAD, `forged ${what}`);
        const key = 'error' in got ? got.error : 'imported';
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if ('value' in got) imported(got.value);
      }),
      1500,
    );
    t.diagnostic(`forged ${what}s: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });
}

test('mmap blobs from another process: damage is refused with INVALID_VALUE, forgeries import within the segment or fail with a DOCA error', { timeout: 150_000 }, async (t) => {
  const { dir, host } = fabric(t);
  const exporter = spawnChild(t, 'mmap-exporter', [], { env: { SOFTDPU_FABRIC: dir } });
  const blob = new Uint8Array(Buffer.from((await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!, 'hex'));
  // The first import maps the exporter's export table, which importers keep while it lives.
  Mmap.createFromExport(blob, host).destroy();
  await damageAndForgery(t, blob, MMAP_LAYOUT, [exporter.pid, self.pid], 'mmap blob', (b) => Mmap.createFromExport(b, host), (map) => {
    insidePayload(map.getMemrange(), 'forged import');
    map.destroy();
  });
});

test('sync event blobs: any event the exporter makes imports on the other side onto the same counter', { timeout: 150_000 }, async (t) => {
  const { arm, host } = fabric(t);
  const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
  const counter = fc.option(fc.integer({ min: 1, max: 64 }).chain((words) => fc.tuple(fc.constant(words), fc.nat(words - 1))), { nil: undefined });
  // The first export makes this process's export table: it stays, as it should.
  const warm = SyncEvent.create();
  warm.addPublisherLocationRemotePci();
  warm.addSubscriberLocationCpu(arm);
  warm.start();
  warm.exportToRemotePci(arm);
  await noMappingLeft('sync event round trips', () =>
    checkProperty(
      t,
      fc.property(counter, fc.boolean(), u64, u64, (place, onArm, value, delta) => {
        const [from, to] = onArm ? [arm, host] : [host, arm];
        const event = SyncEvent.create();
        event.addPublisherLocationRemotePci();
        event.addSubscriberLocationCpu(from);
        const memory = place && allocSharedMemory(8 * place[0]);
        if (memory) event.setAddr(memory.subarray(8 * place[1], 8 * place[1] + 8));
        event.start();
        event.updateSet(value);
        const imported = SyncEvent.createFromExport(to, event.exportToRemotePci(from));
        imported.start();
        assert.equal(imported.get(), value);
        assert.equal(imported.updateAdd(delta), value);
        assert.equal(event.get(), BigInt.asUintN(64, value + delta));
        imported.stop();
        imported.destroy();
        event.stop();
        event.destroy();
        if (memory) freeSharedMemory(memory);
      }),
      200,
    ),
  );
  warm.stop();
  warm.destroy();
});

test('sync event blobs from another process: damage is refused with INVALID_VALUE, forgeries import within the segment or fail with a DOCA error', { timeout: 150_000 }, async (t) => {
  const { dir, host } = fabric(t);
  const exporter = spawnChild(t, 'se-exporter', ['03:00.0'], { env: { SOFTDPU_FABRIC: dir } });
  const blob = new Uint8Array(Buffer.from((await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!, 'hex'));
  SyncEvent.createFromExport(host, blob).destroy();
  await damageAndForgery(t, blob, SYNC_EVENT_LAYOUT, [exporter.pid, self.pid], 'sync event blob', (b) => SyncEvent.createFromExport(host, b), (event) => {
    outcome(() => (event.start(), event.get()), ['NOT_CONNECTED'], 'start and get on a forged import');
    event.destroy(); // stops it too
  });
});

test('remote-net blobs: damage is refused with INVALID_VALUE; a payload gives a handle exactly when it names an IP address and a port', { timeout: 150_000 }, async (t) => {
  const { host } = fabric(t);
  const event = SyncEvent.create();
  event.addPublisherLocationRemoteNet();
  event.addSubscriberLocationCpu(host);
  event.start();
  t.after(() => {
    event.stop();
    event.destroy();
  });
  const blob = await event.exportToRemoteNet();
  const options = { timeoutMs: 1000 };
  t.diagnostic(`${everySmallDamage(blob, (b) => SyncEventRemoteNet.createFromExport(b, undefined, options), 'net blob')} single-byte changes and truncations refused`);
  await checkProperty(
    t,
    fc.property(envelopeDamage(blob), (bad) => {
      const got = outcome(() => SyncEventRemoteNet.createFromExport(bad, undefined, options), ENVELOPE, 'damaged net blob');
      assert.ok('error' in got, 'a damaged blob was accepted');
    }),
    1000,
  );
  const hostText = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('127.0.0.1', '::1', 'localhost', '127.0.0.1\0junk', ''), fc.string({ unit: 'binary', maxLength: 16 }));
  await checkProperty(
    t,
    fc.property(hostText, fc.integer({ min: 0, max: 0xffff }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (text, port, secret) => {
      const got = outcome(() => SyncEventRemoteNet.createFromExport(netBlob(text, port, secret), undefined, options), ENVELOPE, 'net blob');
      const named = text.split('\0')[0]!;
      assert.equal('value' in got, isIP(named) !== 0 && port !== 0, `host ${JSON.stringify(named)} port ${port}`);
      if ('value' in got) got.value.destroy();
    }),
    1000,
  );
});
