/**
 * A received control-path message is a copy the program may keep (fabric/copy.ts copyOut): each one
 * holds its own bytes after the ring slot it came from is written again, and writing into one changes
 * no other. Copies of 65 B to 4 KiB are views into shared chunks, so these are the sizes to try, with
 * the ones either side of each boundary.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { copyOut } from '../src/fabric/copy.js';
import { comchPair, until } from './helpers/comch-pair.js';

const SIZES = [0, 1, 63, 64, 65, 100, 1000, 1024, 4079, 4080];

/** Message `i` of `size` bytes: its bytes name both, so a copy holding another's bytes shows. */
function message(i: number, size: number): Uint8Array {
  const m = new Uint8Array(size);
  for (let k = 0; k < size; k++) m[k] = (i * 31 + k * 7) & 0xff;
  return m;
}

test('kept messages of every size keep their own bytes while the ring is reused', { timeout: 60_000 }, async (t) => {
  const kept: Uint8Array[] = [];
  const p = await comchPair(t, 'recv-copy', {
    recvQueueSize: 4, // 4 slots: each is written again dozens of times while the earlier copies are kept
    beforeStart: (server) => server.eventMsgRecvRegister((_e, data) => kept.push(data)),
  });
  const total = SIZES.length * 12;
  for (let i = 0; i < total; i++) await p.clientConn.send(message(i, SIZES[i % SIZES.length]!));
  await until(() => kept.length === total, `${total} messages at the server (it has ${kept.length})`, 30_000);
  for (let i = 0; i < total; i++) {
    const m = kept[i]!;
    assert.equal(Object.getPrototypeOf(m), Uint8Array.prototype, `message ${i} is a plain Uint8Array`);
    assert.deepEqual(m, message(i, SIZES[i % SIZES.length]!), `message ${i} (${m.length} B)`);
    if (m.length > 64) assert.equal(m.byteOffset % 8, 0, `message ${i} is 8-byte aligned`);
  }
  for (const m of kept) m.fill(0xee); // nobody shares a byte: every message changes only itself
  for (let i = 0; i < total; i++) assert.ok(kept[i]!.every((b) => b === 0xee), `message ${i} was overwritten by another's bytes`);
});

test('copyOut: any range of shared memory, copied at any size, is its bytes and only its own', () => {
  const shared = new Uint8Array(new SharedArrayBuffer(16384));
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(16384), fc.nat(8192)), { minLength: 1, maxLength: 40 }), fc.nat(255), (ranges, seed) => {
      const copies = ranges.map(([offset, length], i) => {
        const len = Math.min(length, 16384 - offset);
        for (let k = 0; k < len; k++) shared[offset + k] = (seed + i * 13 + k) & 0xff;
        return { i, len, copy: copyOut(shared, offset, len) };
      });
      shared.fill(0); // the source changes: the copies do not
      for (const { i, len, copy } of copies) {
        assert.equal(copy.length, len);
        for (let k = 0; k < len; k++) if (copy[k] !== ((seed + i * 13 + k) & 0xff)) return false;
      }
      for (const { copy } of copies) copy.fill(0xab);
      return copies.every(({ copy }) => copy.every((b) => b === 0xab));
    }),
    { numRuns: 200 },
  );
});
