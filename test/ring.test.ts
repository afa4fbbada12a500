/**
 * The control path's ring (src/fabric/ring.ts, docs/protocol.md#rings): packed records, each side's own
 * offset, the same back-to-0 rule on both sides. A model queue against any interleaving of pushes and
 * reads of any lengths, from any start position (the 2^32 wrap included): every record comes out whole
 * and in order, a push is refused exactly when `slots` records are unread, and nothing outside the ring
 * is ever written. The two implementations (this and capi/fabric/ring.c) meet in capi-comch-peers.
 *
 * Replay a failure: SOFTDPU_FC_SEED=<seed> node --test dist/test/ring.test.js
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { initRing, RING_WRAP, RingReader, RingWriter, ringSize } from '../src/fabric/ring.js';
import { Segment } from '../src/fabric/segment.js';
import { checkProperty } from './helpers/property.js';

/** Canary bytes on each side of the ring: a write outside it changes one. */
const GUARD = 256;
const CANARY = 0xa5;

function ringIn(slots: number, payload: number, position: number) {
  const size = ringSize(slots, payload);
  const segment = Segment.create('test', GUARD + size + GUARD);
  const base = 64 + GUARD;
  segment.u8.fill(CANARY, 64, segment.size);
  initRing(segment, base, position);
  return { segment, base, size, writer: new RingWriter(segment, base, slots, payload), reader: new RingReader(segment, base, slots, payload) };
}

function guardsIntact(segment: Segment, base: number, size: number): boolean {
  for (let i = 64; i < base; i++) if (segment.u8[i] !== CANARY) return false;
  for (let i = base + size; i < segment.size; i++) if (segment.u8[i] !== CANARY) return false;
  return true;
}

type Op = { push: number } | { read: number };

/**
 * The model property over rings of `slots` and `payload` drawn from the given ranges, pushes of up to
 * `maxPush` bytes: small areas (the back-to-0 rule at the end), and areas past 64 KiB (the writer's early
 * wrap when it finds the ring empty, too).
 */
function modelProperty(slotRange: [number, number], payloadRange: [number, number], maxPush: number, maxOps: number) {
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.nat(maxPush).map((push) => ({ push })) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 8 }).map((read) => ({ read })) },
    { weight: 1, arbitrary: fc.constant({ read: Infinity }) }, // reads all: the ring is empty after it
  );
  return fc.property(
    fc.integer({ min: slotRange[0], max: slotRange[1] }),
    fc.integer({ min: payloadRange[0], max: payloadRange[1] }),
    fc.constantFrom(0, 2 ** 31 - 3, -5, -1),
    fc.array(op, { minLength: maxOps / 2, maxLength: maxOps, size: 'max' }), // long enough to wrap, often
    (slots, payload, position, ops) => {
      const { segment, base, size, writer, reader } = ringIn(slots, payload, position);
      try {
        const model: Uint8Array[] = [];
        let made = 0;
        for (const o of ops) {
          if ('push' in o) {
            const bytes = new Uint8Array(Math.min(o.push, payload)).map((_, i) => (made * 31 + i) & 0xff);
            const pushed = writer.push(1 + (made % 7), bytes);
            assert.equal(pushed, model.length < slots, `push with ${model.length} of ${slots} unread`);
            if (pushed) {
              model.push(bytes);
              made++;
            }
            if (made % 3 === 0) writer.publish(); // batches of any size
          } else {
            writer.publish();
            for (let i = 0; i < o.read; i++) {
              const rec = reader.peek();
              if (model.length === 0) {
                assert.equal(rec, undefined);
                break;
              }
              assert.ok(rec, 'a published record is seen');
              const want = model.shift()!;
              assert.equal(rec.length, want.length);
              assert.deepEqual(reader.copy(rec), want);
              reader.advance();
            }
            reader.release();
          }
          assert.ok(guardsIntact(segment, base, size), 'a write landed outside the ring');
        }
        assert.equal(writer.corrupt, false);
      } finally {
        segment.close();
      }
    },
  );
}

test('any interleaving of pushes and reads of any lengths: whole records in order, full at exactly `slots`, nothing written outside', { timeout: 180_000 }, async (t) => {
  await checkProperty(t, modelProperty([1, 12], [0, 400], 400, 300), 300);
});

test('the same past 64 KiB of area, where a writer that finds the ring empty goes back to its start early', { timeout: 180_000 }, async (t) => {
  await checkProperty(t, modelProperty([17, 64], [3000, 4080], 4080, 600), 100);
});

test('a reader that keeps up keeps the ring in its first pages: a 4096-deep ring of 4080-byte messages, 64 B at a time', () => {
  // 16 MiB of area; without the early wrap 20 000 messages of 64 B walk 1.4 MiB of it (a page fault every
  // 57 messages in each process), with it they stay within 64 KiB and a look's worth of records past it.
  const { segment, base, writer, reader } = ringIn(4096, 4080, 0);
  try {
    let furthest = 0;
    let wraps = 0;
    for (let i = 0; i < 20_000; i++) {
      assert.ok(writer.push(1, new Uint8Array(64).fill(i & 0xff)));
      writer.publish();
      const rec = reader.peek()!;
      const at = rec.offset - 8 - base - 128;
      if (at === 0 && i > 0) wraps++;
      furthest = Math.max(furthest, at);
      assert.equal(segment.u8[rec.offset + 63], i & 0xff);
      reader.advance();
      reader.release();
    }
    assert.ok(furthest <= 64 * 1024 + 72, `records went as far as ${furthest}`);
    assert.ok(wraps >= 20, `${wraps} wraps`);
  } finally {
    segment.close();
  }
});

test('past 64 KiB a writer whose reader has not caught up does not go back early: nothing unread is overwritten', () => {
  const { segment, writer, reader } = ringIn(64, 4080, 0);
  try {
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) assert.ok(writer.push(1, new Uint8Array(4080).fill(i + round)), `push ${i}`); // 160 KiB unread
      writer.publish();
      for (let i = 0; i < 40; i++) {
        const rec = reader.peek()!;
        assert.equal(rec.length, 4080);
        assert.ok(segment.u8[rec.offset] === i + round && segment.u8[rec.offset + 4079] === i + round, `record ${i} of round ${round}`);
        reader.advance();
      }
      reader.release();
    }
  } finally {
    segment.close();
  }
});

test('records are packed: a 64-byte message takes 72 bytes of a ring whose largest is 4080, and the area holds slots + 1 largest', () => {
  const { segment, base, size, writer, reader } = ringIn(4, 4080, 0);
  try {
    assert.equal(size, 128 + Math.ceil((5 * (8 + 4080)) / 64) * 64);
    for (let i = 0; i < 3; i++) assert.ok(writer.push(1, new Uint8Array(64).fill(i + 1)));
    writer.publish();
    const view = new DataView(segment.u8.buffer);
    for (let i = 0; i < 3; i++) {
      assert.equal(view.getUint32(base + 128 + i * 72, true), 64, `record ${i} at ${i * 72}`);
      assert.equal(segment.u8[base + 128 + i * 72 + 8], i + 1);
    }
    for (let i = 0; i < 3; i++) {
      const rec = reader.peek()!;
      assert.equal(rec.offset, base + 128 + i * 72 + 8);
      reader.advance();
    }
  } finally {
    segment.close();
  }
});

test('the writer goes back to the area start when less than a largest record is left, and the reader follows', () => {
  // 2 slots of up to 100 bytes (8 + 104 = 112 each): an area of ceil(3 x 112 / 64) x 64 = 384 bytes.
  // Records of 100 bytes at 0, 112, 224; after the third (336) only 48 are left, so the fourth goes at 0.
  const { segment, base, writer, reader } = ringIn(2, 100, 0);
  try {
    const view = new DataView(segment.u8.buffer);
    const starts: number[] = [];
    for (let i = 0; i < 6; i++) {
      assert.ok(writer.push(1, new Uint8Array(100).fill(i)));
      writer.publish();
      const rec = reader.peek()!;
      starts.push(rec.offset - base - 128 - 8);
      assert.equal(segment.u8[rec.offset], i);
      reader.advance();
      reader.release();
    }
    assert.deepEqual(starts, [0, 112, 224, 0, 112, 224]);
    assert.equal(view.getUint32(base + 128, true), 100);
  } finally {
    segment.close();
  }
});

test('a length beyond the payload size or an impossible tail is corruption, not a read outside the ring', () => {
  const { segment, base, writer, reader } = ringIn(4, 64, 0);
  try {
    writer.push(1, new Uint8Array(8));
    writer.publish();
    new DataView(segment.u8.buffer).setUint32(base + 128, 65, true);
    assert.equal(reader.peek()!.length, -1);
    // A WRAP where a record starts at 0 is no way back: it is reported as the record's type (unknown).
    new DataView(segment.u8.buffer).setUint16(base + 128 + 4, RING_WRAP, true);
    new DataView(segment.u8.buffer).setUint32(base + 128, 0, true);
    assert.equal(new RingReader(segment, base, 4, 64).peek()!.type, RING_WRAP);
    Atomics.store(segment.i32, base / 4, 9); // 9 records in a 4-slot ring
    const fresh = new RingReader(segment, base, 4, 64);
    assert.equal(fresh.peek()!.length, -1);
    Atomics.store(segment.i32, (base + 64) / 4, 100); // the consumer claims to be ahead of the producer
    const w = new RingWriter(segment, base, 4, 64);
    assert.equal(w.push(1, new Uint8Array(1)), false);
    assert.equal(w.corrupt, true);
  } finally {
    segment.close();
  }
});
