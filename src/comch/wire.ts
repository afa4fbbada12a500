/**
 * The comch handshake on a connection's Unix socket (docs/protocol.md#comch-handshake). Frames are
 * `u32 length` + body; every body starts with magic, version and type. After the handshake the socket
 * carries nothing: its end-of-file is how each side sees the other go. Anything malformed is refused by
 * `FrameReader`, which names the problem so the server can log it and drop that one peer.
 *
 *   HELLO   client -> server  pid f64, start f64, client pci [16], arm pci [16], max_msg_size u32,
 *                             recv_queue_size u32, name length u16, name
 *   WELCOME server -> client  pid f64, start f64, segment descriptor [40], msg size u32,
 *                             c2s slots u32, s2c slots u32, connection id u32
 *   READY   client -> server  (nothing)
 *   REJECT  server -> client  DOCA error value u16, reason length u16, reason
 */
import { decodeDescriptor, DESCRIPTOR_SIZE, encodeDescriptor, type SegmentDescriptor } from '../fabric/segment.js';

export const WIRE_MAGIC = 0x5348434d; // 'MCHS'
/**
 * The handshake's version. 2: doorbell pipes and the version-2 connection segment; no bytes on the
 * socket after READY. 3 and 4: imply connection segment version 3 and 4 (docs/protocol.md#versions).
 */
export const WIRE_VERSION = 4;
/** Larger frames are refused: no handshake needs more (a name is at most a few KiB). */
export const MAX_FRAME = 8192;

export const FrameType = { HELLO: 1, WELCOME: 2, READY: 3, REJECT: 4 } as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

export interface Hello {
  pid: number;
  start: number;
  clientPci: string;
  armPci: string;
  maxMsgSize: number;
  recvQueueSize: number;
  name: Uint8Array;
}

export interface Welcome {
  pid: number;
  start: number;
  segment: SegmentDescriptor;
  msgSize: number;
  c2sSlots: number;
  s2cSlots: number;
  connectionId: number;
}

export interface Reject {
  code: number;
  reason: string;
}

/** A frame that could not be accepted; `version` marks a well-formed frame of another version. */
export class WireError extends Error {
  constructor(
    message: string,
    readonly version = false,
  ) {
    super(message);
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: false });

function frame(type: FrameType, bodySize: number, fill: (v: DataView, bytes: Uint8Array) => void): Buffer {
  const buf = Buffer.alloc(4 + 8 + bodySize);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  v.setUint32(0, 8 + bodySize, true);
  v.setUint32(4, WIRE_MAGIC, true);
  v.setUint16(8, WIRE_VERSION, true);
  v.setUint16(10, type, true);
  fill(new DataView(buf.buffer, buf.byteOffset + 12, bodySize), buf.subarray(12));
  return buf;
}

function putText(bytes: Uint8Array, offset: number, size: number, text: string): void {
  bytes.set(enc.encode(text).subarray(0, size), offset);
}

function getText(bytes: Uint8Array, offset: number, size: number): string {
  const raw = bytes.subarray(offset, offset + size);
  const end = raw.indexOf(0);
  return dec.decode(end < 0 ? raw : raw.subarray(0, end));
}

export function encodeHello(h: Hello): Buffer {
  return frame(FrameType.HELLO, 58 + h.name.length, (v, b) => {
    v.setFloat64(0, h.pid, true);
    v.setFloat64(8, h.start, true);
    putText(b, 16, 16, h.clientPci);
    putText(b, 32, 16, h.armPci);
    v.setUint32(48, h.maxMsgSize, true);
    v.setUint32(52, h.recvQueueSize, true);
    v.setUint16(56, h.name.length, true);
    b.set(h.name, 58);
  });
}

export function encodeWelcome(w: Welcome): Buffer {
  return frame(FrameType.WELCOME, 16 + DESCRIPTOR_SIZE + 16, (v) => {
    v.setFloat64(0, w.pid, true);
    v.setFloat64(8, w.start, true);
    encodeDescriptor(w.segment, v, 16);
    v.setUint32(16 + DESCRIPTOR_SIZE, w.msgSize, true);
    v.setUint32(20 + DESCRIPTOR_SIZE, w.c2sSlots, true);
    v.setUint32(24 + DESCRIPTOR_SIZE, w.s2cSlots, true);
    v.setUint32(28 + DESCRIPTOR_SIZE, w.connectionId, true);
  });
}

export function encodeReady(): Buffer {
  return frame(FrameType.READY, 0, () => {});
}

export function encodeReject(r: Reject): Buffer {
  const reason = enc.encode(r.reason).subarray(0, 1024);
  return frame(FrameType.REJECT, 4 + reason.length, (v, b) => {
    v.setUint16(0, r.code, true);
    v.setUint16(2, reason.length, true);
    b.set(reason, 4);
  });
}

/** A decoded frame. */
export type Frame =
  | { type: typeof FrameType.HELLO; hello: Hello }
  | { type: typeof FrameType.WELCOME; welcome: Welcome }
  | { type: typeof FrameType.READY }
  | { type: typeof FrameType.REJECT; reject: Reject };

function need(body: Uint8Array, size: number, what: string): void {
  if (body.length < size) throw new WireError(`${what} frame is truncated (${body.length} of ${size} bytes)`);
}

/** The WELCOME's segment descriptor; one no segment could have is a bad frame like any other (WireError). */
function welcomeSegment(f: DataView): SegmentDescriptor {
  try {
    return decodeDescriptor(f, 16, 'comch handshake');
  } catch (err) {
    throw new WireError(`WELCOME frame: ${(err as Error).message}`);
  }
}

function decode(body: Uint8Array): Frame {
  need(body, 8, 'a');
  const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
  if (v.getUint32(0, true) !== WIRE_MAGIC) throw new WireError('not a comch handshake frame (bad magic)');
  const version = v.getUint16(4, true);
  if (version !== WIRE_VERSION) throw new WireError(`handshake version ${version} is not ${WIRE_VERSION}`, true);
  const type = v.getUint16(6, true);
  const b = body.subarray(8);
  const f = new DataView(b.buffer, b.byteOffset, b.byteLength);
  switch (type) {
    case FrameType.HELLO: {
      need(b, 58, 'HELLO');
      const nameLength = f.getUint16(56, true);
      if (b.length !== 58 + nameLength) throw new WireError(`HELLO frame has ${b.length} bytes for a ${nameLength}-byte name`);
      return {
        type,
        hello: {
          pid: f.getFloat64(0, true),
          start: f.getFloat64(8, true),
          clientPci: getText(b, 16, 16),
          armPci: getText(b, 32, 16),
          maxMsgSize: f.getUint32(48, true),
          recvQueueSize: f.getUint32(52, true),
          name: b.slice(58, 58 + nameLength),
        },
      };
    }
    case FrameType.WELCOME:
      need(b, 32 + DESCRIPTOR_SIZE, 'WELCOME');
      return {
        type,
        welcome: {
          pid: f.getFloat64(0, true),
          start: f.getFloat64(8, true),
          segment: welcomeSegment(f),
          msgSize: f.getUint32(16 + DESCRIPTOR_SIZE, true),
          c2sSlots: f.getUint32(20 + DESCRIPTOR_SIZE, true),
          s2cSlots: f.getUint32(24 + DESCRIPTOR_SIZE, true),
          connectionId: f.getUint32(28 + DESCRIPTOR_SIZE, true),
        },
      };
    case FrameType.READY:
      return { type };
    case FrameType.REJECT: {
      need(b, 4, 'REJECT');
      const length = f.getUint16(2, true);
      need(b, 4 + length, 'REJECT');
      return { type, reject: { code: f.getUint16(0, true), reason: dec.decode(b.subarray(4, 4 + length)) } };
    }
    default:
      throw new WireError(`unknown handshake frame type ${type}`);
  }
}

/** Splits a byte stream into frames; throws WireError on the first bad one. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  /** Feeds bytes; returns the complete frames they finished. */
  push(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const frames: Frame[] = [];
    while (this.buffered.length >= 4) {
      const length = this.buffered.readUInt32LE(0);
      if (length > MAX_FRAME) throw new WireError(`a ${length}-byte handshake frame exceeds the ${MAX_FRAME}-byte limit`);
      if (this.buffered.length < 4 + length) break;
      frames.push(decode(this.buffered.subarray(4, 4 + length)));
      this.buffered = this.buffered.subarray(4 + length);
    }
    return frames;
  }

  /** Bytes received after the last complete frame (doorbells once the handshake is over). */
  takeRest(): Buffer {
    const rest = this.buffered;
    this.buffered = Buffer.alloc(0);
    return rest;
  }

  /** True if the stream ended in the middle of a frame. */
  get partial(): boolean {
    return this.buffered.length > 0;
  }
}
