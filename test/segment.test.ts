/** Segments opened by another process share bytes; stale, forged or revoked descriptors are refused. */
import assert from 'node:assert/strict';
import { openSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { self } from '../src/fabric/liveness.js';
import { decodeDescriptor, Segment, type SegmentDescriptor } from '../src/fabric/segment.js';
import { descriptorHex } from './fixtures/lib.js';
import { spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const notFound = (pattern: RegExp) => (err: unknown) => err instanceof DocaError && err.code === 'DOCA_ERROR_NOT_FOUND' && pattern.test(err.message);

test('another process opens a segment and reads and writes the same bytes', { timeout: 60_000 }, async (t) => {
  const seg = Segment.create('test', 8192);
  t.after(() => seg.close());
  assert.equal(seg.size, 64 + 8192);
  const payload = seg.u8.subarray(64);
  for (let i = 0; i < 4096; i++) payload[i] = (i * 7) % 251;
  const peer = spawnChild(t, 'segpeer', [descriptorHex(seg.descriptor)]);
  assert.equal((await peer.waitFor(/^read (.*)$/))[1], `ok size ${seg.size}`);
  assert.equal((await peer.exited).code, 0);
  for (let i = 0; i < 4096; i++) assert.equal(payload[4096 + i], (i * 13) % 241);
});

test('forged and stale descriptors are refused with NOT_FOUND, never mapped wrongly', (t) => {
  const seg = Segment.create('test', 256);
  t.after(() => seg.close());
  const d = seg.descriptor;
  const forge = (change: Partial<SegmentDescriptor>) => () => Segment.open({ ...d, ...change });
  assert.throws(forge({ token: new Uint8Array(16) }), notFound(/has another token/));
  assert.throws(forge({ start: d.start + 1 }), notFound(/owner of the segment \(pid \d+\) is gone/));
  assert.throws(forge({ pid: 0x7ffffff0 }), notFound(/is gone/));
  assert.throws(forge({ size: d.size + 64 }), notFound(/is not a segment of/));
  assert.throws(forge({ fd: 100000 }), notFound(/No such file/));
  // An fd that is a regular file of the right size: mapped, then refused by the header check.
  const file = join(tempFabricDir(t), 'impostor');
  writeFileSync(file, Buffer.alloc(d.size, 0xab));
  const fd = openSync(file, 'r+');
  t.after(() => closeSync(fd));
  assert.throws(forge({ pid: self.pid, start: self.start, fd }), notFound(/is not a softdpu segment/));
  const twin = Segment.open(d);
  twin.close();
  // A state word that is neither LIVE nor REVOKED (the header's i32 at 12): refused, not trusted.
  Atomics.store(seg.i32, 3, 7);
  assert.throws(forge({}), notFound(/is not live \(state 7\)/));
  Atomics.store(seg.i32, 3, 1);
  seg.revoke();
  assert.throws(forge({}), notFound(/was revoked by its owner/));
});

test('only the owner may revoke; truncated or impossible descriptors are INVALID_VALUE', (t) => {
  const seg = Segment.create('test', 64);
  t.after(() => seg.close());
  const twin = Segment.open(seg.descriptor);
  assert.throws(() => twin.revoke(), (err: unknown) => DocaError.is(err, 'NOT_PERMITTED'));
  twin.close();
  assert.throws(() => decodeDescriptor(new DataView(new ArrayBuffer(39)), 0, 'test'), (err: unknown) => DocaError.is(err, 'INVALID_VALUE') && /truncated/.test((err as Error).message));
  assert.throws(() => decodeDescriptor(new DataView(new ArrayBuffer(40)), 0, 'test'), (err: unknown) => DocaError.is(err, 'INVALID_VALUE') && /impossible/.test((err as Error).message));
});

test('segment sizes outside [0, 4 GiB - 4 KiB] are refused', () => {
  for (const size of [-1, 1.5, 2 ** 32]) {
    assert.throws(() => Segment.create('test', size), (err: unknown) => DocaError.is(err, 'INVALID_VALUE') && (err as Error).message.includes(String(size)));
  }
});
