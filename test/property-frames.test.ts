/**
 * Properties of the stream parsers a peer feeds bytes to: the comch handshake's FrameReader, the
 * remote-net NetReader and segment descriptors. Any byte stream, cut into chunks anywhere, gives the
 * frames a reference parse of the whole stream gives, or the parser's own refusal (a WireError, an
 * undefined, a DocaError INVALID_VALUE), never another exception; a bad length is refused as soon as
 * its four bytes are in. Encoders and decoders agree on every value of each field's domain.
 *
 * Replay a failure: SOFTDPU_FC_SEED=<seed> node --test dist/test/property-frames.test.js (the seed is
 * printed with each property and in the failure).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  encodeHello,
  encodeReady,
  encodeReject,
  encodeWelcome,
  type Frame,
  FrameReader,
  FrameType,
  type Hello,
  MAX_FRAME,
  type Reject,
  type Welcome,
  WIRE_MAGIC,
  WIRE_VERSION,
  WireError,
} from '../src/comch/wire.js';
import { decodeDescriptor, DESCRIPTOR_SIZE, encodeDescriptor, SEGMENT_HEADER_SIZE, type SegmentDescriptor } from '../src/fabric/segment.js';
import { frame, NetFrame, NetReader, NONCE_SIZE } from '../src/sync-event/remote-net-wire.js';
import { assertDocaError, checkProperty, chunked } from './helpers/property.js';

const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const cuts = fc.array(fc.nat(), { maxLength: 12 });

/** Text of at most 16 UTF-8 bytes without NUL: what a `text[16]` field holds. */
const text16 = fc
  .oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 16 }), fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('0000:b1:00.0', '03:00.0', ''))
  .filter((s) => !s.includes('\0'));

const descriptor: fc.Arbitrary<SegmentDescriptor> = fc.record({
  pid: fc.integer({ min: 1, max: 0xffffffff }),
  fd: u32,
  start: fc.maxSafeNat(),
  size: fc.oneof(fc.integer({ min: SEGMENT_HEADER_SIZE + 1, max: 2 ** 32 }), fc.constantFrom(SEGMENT_HEADER_SIZE + 1, 2 ** 32)),
  token: fc.uint8Array({ minLength: 16, maxLength: 16 }),
});

const hello: fc.Arbitrary<Hello> = fc.record({
  pid: fc.double(),
  start: fc.double(),
  clientPci: text16,
  armPci: text16,
  maxMsgSize: u32,
  recvQueueSize: u32,
  name: fc.oneof({ weight: 9, arbitrary: fc.uint8Array({ maxLength: 200 }) }, { weight: 1, arbitrary: fc.uint8Array({ minLength: MAX_FRAME - 8 - 58 - 64, maxLength: MAX_FRAME - 8 - 58 }) }),
});

const welcome: fc.Arbitrary<Welcome> = fc.record({ pid: fc.double(), start: fc.double(), segment: descriptor, msgSize: u32, c2sSlots: u32, s2cSlots: u32, connectionId: u32 });

/** A reason of at most 1024 UTF-8 bytes (protocol.md: REJECT `r ≤ 1024`). */
const reject: fc.Arbitrary<Reject> = fc.record({
  code: u16,
  reason: fc.string({ unit: 'binary', maxLength: 256 }).filter((s) => Buffer.byteLength(s) <= 1024),
});

const anyFrame: fc.Arbitrary<Frame> = fc.oneof(
  hello.map((h) => ({ type: FrameType.HELLO, hello: h })),
  welcome.map((w) => ({ type: FrameType.WELCOME, welcome: w })),
  fc.constant({ type: FrameType.READY }),
  reject.map((r) => ({ type: FrameType.REJECT, reject: r })),
);

function encode(f: Frame): Buffer {
  switch (f.type) {
    case FrameType.HELLO:
      return encodeHello(f.hello);
    case FrameType.WELCOME:
      return encodeWelcome(f.welcome);
    case FrameType.READY:
      return encodeReady();
    case FrameType.REJECT:
      return encodeReject(f.reject);
  }
}

/** A frame as plain data (byte arrays as arrays), so frames holding Buffers and Uint8Arrays compare equal. */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return [...v];
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
}

/**
 * What FrameReader gives for a stream fed in chunks: the frames, then the error that ended it (if any)
 * and the stream bytes [from, to) of the chunk it came with.
 */
function readFrames(chunks: readonly Buffer[]): { frames: Frame[]; error?: WireError; chunk?: { from: number; to: number }; partial?: boolean } {
  const reader = new FrameReader();
  const frames: Frame[] = [];
  let fed = 0;
  for (const chunk of chunks) {
    fed += chunk.length;
    try {
      frames.push(...reader.push(chunk));
    } catch (err) {
      assert.ok(err instanceof WireError, `FrameReader threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}, not a WireError`);
      return { frames, error: err, chunk: { from: fed - chunk.length, to: fed } };
    }
  }
  return { frames, partial: reader.partial };
}

/** The refusal came with the chunk that brought byte `end - 1` of the stream: nothing after it was waited for. */
function refusedWith(chunk: { from: number; to: number } | undefined, end: number | undefined): void {
  assert.ok(chunk && end !== undefined && chunk.from < end && end <= chunk.to, `refused with stream bytes [${chunk?.from}, ${chunk?.to}), the bad frame's decisive byte is ${end === undefined ? 'none' : end - 1}`);
}

/** The reference parse of a whole stream: its frames (each decoded on its own, whole) and how it ends. */
function referenceFrames(bytes: Uint8Array): { frames: Frame[]; end: 'complete' | 'partial' | 'error'; errorEnd?: number } {
  const frames: Frame[] = [];
  let at = 0;
  while (bytes.length - at >= 4) {
    const length = Buffer.from(bytes.buffer, bytes.byteOffset + at, 4).readUInt32LE(0);
    if (length > MAX_FRAME) return { frames, end: 'error', errorEnd: at + 4 };
    if (bytes.length - at - 4 < length) return { frames, end: 'partial' };
    try {
      frames.push(...new FrameReader().push(Buffer.from(bytes.subarray(at, at + 4 + length))));
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      return { frames, end: 'error', errorEnd: at + 4 + length };
    }
    at += 4 + length;
  }
  return { frames, end: at === bytes.length ? 'complete' : 'partial' };
}

test('handshake frames: every HELLO, WELCOME, READY and REJECT decodes to what was encoded', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(anyFrame, (f) => {
      const [decoded, ...rest] = new FrameReader().push(encode(f));
      assert.equal(rest.length, 0);
      assert.deepEqual(plain(decoded!), plain(f));
    }),
    1500,
  );
});

test('handshake frames: a stream of valid frames cut anywhere gives the same frames, and nothing left over', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(fc.array(anyFrame, { maxLength: 6 }), cuts, (frames, at) => {
      const whole = Buffer.concat(frames.map(encode));
      const reader = new FrameReader();
      const got = chunked(whole, at).flatMap((c) => reader.push(c));
      assert.deepEqual(got.map(plain), frames.map(plain));
      assert.equal(reader.partial, false);
    }),
    800,
  );
});

/** Streams worth feeding: random bytes, valid frames with bytes changed, and bodies with a real header. */
const hostileStream = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .tuple(fc.array(anyFrame, { minLength: 1, maxLength: 4 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }))
    .map(([frames, flips]) => {
      const bytes = new Uint8Array(Buffer.concat(frames.map(encode)));
      for (const [at, xor] of flips) bytes[at % bytes.length]! ^= xor;
      return bytes;
    }),
  fc
    .tuple(fc.constantFrom(WIRE_MAGIC, WIRE_MAGIC ^ 1), fc.constantFrom(WIRE_VERSION, WIRE_VERSION + 1, 1, 0), fc.integer({ min: 0, max: 6 }), fc.uint8Array({ maxLength: 120 }), fc.integer({ min: -2, max: 2 }))
    .map(([magic, version, type, fields, skew]) => {
      const body = Buffer.alloc(8 + fields.length);
      body.writeUInt32LE(magic, 0);
      body.writeUInt16LE(version, 4);
      body.writeUInt16LE(type, 6);
      body.set(fields, 8);
      const head = Buffer.alloc(4);
      head.writeUInt32LE(Math.max(0, body.length + skew), 0);
      return new Uint8Array(Buffer.concat([head, body]));
    }),
);

test('handshake frames: any bytes, cut anywhere, give the reference frames then a WireError, never another exception', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(hostileStream, cuts, (bytes, at) => {
      const ref = referenceFrames(bytes);
      const got = readFrames(chunked(bytes, at));
      assert.equal(got.error !== undefined, ref.end === 'error', `error ${got.error?.message}, reference ${ref.end}`);
      if (got.error) assert.deepEqual(got.frames.map(plain), ref.frames.slice(0, got.frames.length).map(plain));
      else {
        assert.deepEqual(got.frames.map(plain), ref.frames.map(plain));
        assert.equal(got.partial, ref.end === 'partial', 'a frame still incomplete is reported as partial');
      }
      // Bounded buffering: the refusal comes with the chunk that completed the bad frame (its header, for an oversized one).
      if (got.error) refusedWith(got.chunk, ref.errorEnd);
    }),
    2000,
  );
});

test('handshake frames: a length over MAX_FRAME is refused as soon as its four bytes are in, whatever follows', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(fc.array(anyFrame, { maxLength: 2 }), fc.integer({ min: MAX_FRAME + 1, max: 0xffffffff }), fc.uint8Array({ maxLength: 64 }), cuts, (before, length, tail, at) => {
      const head = Buffer.alloc(4);
      head.writeUInt32LE(length, 0);
      const prefix = Buffer.concat(before.map(encode));
      const got = readFrames(chunked(Buffer.concat([prefix, head, tail]), at));
      assert.match(got.error?.message ?? '', /exceeds the 8192-byte limit/);
      refusedWith(got.chunk, prefix.length + 4);
      assert.deepEqual(got.frames.map(plain), before.map(plain).slice(0, got.frames.length));
    }),
    1000,
  );
});

test('handshake frames: a well-formed frame of another version is refused as such (REJECT UNSUPPORTED_VERSION follows)', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(anyFrame, u16.filter((v) => v !== WIRE_VERSION), (f, version) => {
      const bytes = encode(f);
      bytes.writeUInt16LE(version, 8);
      assert.throws(() => new FrameReader().push(bytes), (err: unknown) => err instanceof WireError && err.version && err.message.includes(`version ${version}`));
    }),
    500,
  );
});

/** The longest remote-net body (protocol.md: 1 to 65 bytes, the AUTH frame's type and two 32-byte fields). */
const MAX_NET_BODY = 1 + 2 * NONCE_SIZE;

/** The reference parse of a remote-net stream: its bodies and how it ends. */
function referenceBodies(bytes: Uint8Array): { bodies: Buffer[]; malformed: boolean; badHeaderEnd?: number } {
  const b = Buffer.from(bytes);
  const bodies: Buffer[] = [];
  let at = 0;
  while (b.length - at >= 4) {
    const length = b.readUInt32LE(at);
    if (length < 1 || length > MAX_NET_BODY) return { bodies, malformed: true, badHeaderEnd: at + 4 };
    if (b.length - at - 4 < length) break;
    bodies.push(b.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return { bodies, malformed: false };
}

const netBodies = fc.array(fc.uint8Array({ minLength: 1, maxLength: MAX_NET_BODY }), { maxLength: 12 });
const netFrames = (bodies: Uint8Array[]) =>
  Buffer.concat(
    bodies.map((body) => {
      const head = Buffer.alloc(4);
      head.writeUInt32LE(body.length, 0);
      return Buffer.concat([head, body]);
    }),
  );

test('remote-net frames: valid frames cut anywhere give the same bodies', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(netBodies, cuts, (bodies, at) => {
      const reader = new NetReader();
      const got: Buffer[] = [];
      for (const chunk of chunked(netFrames(bodies), at)) got.push(...reader.push(chunk)!);
      assert.deepEqual(got.map((b) => [...b]), bodies.map((b) => [...b]));
    }),
    800,
  );
});

test('remote-net frames: any bytes cut anywhere never throw; a bad length gives undefined at once, and from then on', { timeout: 150_000 }, async (t) => {
  const stream = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.tuple(netBodies, fc.uint32Array({ minLength: 1, maxLength: 3 }), fc.uint8Array({ maxLength: 80 })).map(([bodies, lengths, tail]) => {
      const heads = Buffer.alloc(4 * lengths.length);
      lengths.forEach((l, i) => heads.writeUInt32LE(l % 3 === 0 ? l : l % 70, 4 * i));
      return new Uint8Array(Buffer.concat([netFrames(bodies), heads, tail]));
    }),
  );
  await checkProperty(
    t,
    fc.property(stream, cuts, fc.uint8Array({ maxLength: 8 }), (bytes, at, after) => {
      const ref = referenceBodies(bytes);
      const reader = new NetReader();
      const got: Buffer[] = [];
      let fed = 0;
      let refused: { from: number; to: number } | undefined;
      for (const chunk of chunked(bytes, at)) {
        fed += chunk.length;
        const bodies = reader.push(chunk);
        if (!bodies) {
          refused = { from: fed - chunk.length, to: fed };
          break;
        }
        got.push(...bodies);
      }
      assert.equal(refused !== undefined, ref.malformed);
      if (refused) {
        refusedWith(refused, ref.badHeaderEnd);
        assert.equal(reader.push(Buffer.from(after)), undefined, 'a malformed stream stays malformed');
        assert.deepEqual(got.map((b) => [...b]), ref.bodies.slice(0, got.length).map((b) => [...b]));
      } else {
        assert.deepEqual(got.map((b) => [...b]), ref.bodies.map((b) => [...b]));
      }
    }),
    2000,
  );
});

test('remote-net frames: REQUEST and REPLY fields come out at the offsets protocol.md gives', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(u32, fc.integer({ min: 0, max: 255 }), u16, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (id, op, status, value) => {
      const request = frame(NetFrame.REQUEST, (v) => (v.setUint32(0, id, true), v.setUint8(4, op), v.setBigUint64(5, value, true)), 13);
      const reply = frame(NetFrame.REPLY, (v) => (v.setUint32(0, id, true), v.setUint16(4, status, true), v.setBigUint64(6, value, true)), 14);
      const [req, rep] = new NetReader().push(Buffer.concat([request, reply]))!;
      assert.deepEqual([req!.length, req![0], req!.readUInt32LE(1), req![5], req!.readBigUInt64LE(6)], [14, NetFrame.REQUEST, id, op, value]);
      assert.deepEqual([rep!.length, rep![0], rep!.readUInt32LE(1), rep!.readUInt16LE(5), rep!.readBigUInt64LE(7)], [15, NetFrame.REPLY, id, status, value]);
    }),
    500,
  );
});

test('segment descriptors: valid ones round trip; any 40 bytes decode to a possible descriptor or INVALID_VALUE', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(descriptor, fc.uint8Array({ minLength: DESCRIPTOR_SIZE, maxLength: DESCRIPTOR_SIZE }), fc.integer({ min: 0, max: DESCRIPTOR_SIZE - 1 }), (d, raw, short) => {
      const view = new DataView(new ArrayBuffer(8 + DESCRIPTOR_SIZE));
      encodeDescriptor(d, view, 8);
      assert.deepEqual(decodeDescriptor(view, 8, 'test'), { ...d });
      try {
        const got = decodeDescriptor(new DataView(raw.buffer), 0, 'test');
        assert.ok(got.pid > 0 && Number.isSafeInteger(got.start) && got.start >= 0 && Number.isInteger(got.size) && got.size > SEGMENT_HEADER_SIZE && got.size <= 2 ** 32);
      } catch (err) {
        assertDocaError(err, ['INVALID_VALUE'], 'decodeDescriptor of random bytes');
      }
      assert.throws(() => decodeDescriptor(new DataView(raw.buffer, 0, short), 0, 'test'), (err: unknown) => assertDocaError(err, ['INVALID_VALUE'], 'truncated') === 'INVALID_VALUE');
    }),
    2000,
  );
});
