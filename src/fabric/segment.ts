/**
 * Shared segments: memfd mappings another process of the same user opens through
 * /proc/<owner pid>/fd/<fd>. A memfd disappears with the last process that holds it, so a `kill -9`
 * leaves nothing in /dev/shm. Every segment starts with a header that lets an opener check it reached
 * the segment it was told about (the owner's identity and a random token), not a reused pid or fd.
 *
 * Header (64 bytes, little-endian; docs/protocol.md#segments):
 *   0  u32 magic 'SDPU'        4  u16 layout version   6  u16 reserved
 *   8  u32 owner pid          12  u32 state (1 live, 2 revoked by its owner)
 *  16  f64 owner start time   24  f64 total size
 *  32  16 bytes token         48  16 bytes kind (ASCII, NUL-padded: 'mem', 'conn', 'exports'...)
 * Payload from byte 64 (cache-line aligned).
 *
 * The kind is checked by openers that name what they expect: a descriptor is a peer's word, and one that
 * names a genuine segment of the wrong kind (a process's export table given as an mmap's memory, say)
 * would otherwise let an importer write where only the owner may.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { DocaError } from '../core/error.js';
import { native } from '../native/load.js';
import { WaitResult } from '../native/native.js';
import { isAlive, type ProcessIdentity, self } from './liveness.js';
import { memfdLabel, segmentPath } from './names.js';

export const SEGMENT_HEADER_SIZE = 64;
const MAGIC = 0x55504453;
const LAYOUT_VERSION = 2;
const STATE_LIVE = 1;
const STATE_REVOKED = 2;
const OFF_MAGIC = 0;
const OFF_VERSION = 4;
const OFF_PID = 8;
const OFF_STATE = 12;
const OFF_START = 16;
const OFF_SIZE = 24;
const OFF_TOKEN = 32;
const TOKEN_SIZE = 16;
const OFF_KIND = 48;
const KIND_SIZE = 16;

/** What a peer needs to open a segment; `DESCRIPTOR_SIZE` (40) bytes when encoded. */
export interface SegmentDescriptor {
  readonly pid: number;
  readonly start: number;
  readonly fd: number;
  readonly size: number;
  readonly token: Uint8Array;
}

export const DESCRIPTOR_SIZE = 40;

/** A string naming the segment a descriptor names (owner, fd and token: fds are reused, tokens are not). */
export function descriptorKey(d: SegmentDescriptor): string {
  return `${d.pid}:${d.start}:${d.fd}:${Buffer.from(d.token).toString('hex')}`;
}

/** Writes a descriptor at `offset` of `view`. */
export function encodeDescriptor(d: SegmentDescriptor, view: DataView, offset: number): void {
  view.setUint32(offset, d.pid, true);
  view.setUint32(offset + 4, d.fd, true);
  view.setFloat64(offset + 8, d.start, true);
  view.setFloat64(offset + 16, d.size, true);
  new Uint8Array(view.buffer, view.byteOffset + offset + 24, TOKEN_SIZE).set(d.token);
}

/** Reads a descriptor; refuses values no segment could have (INVALID_VALUE). */
export function decodeDescriptor(view: DataView, offset: number, call: string): SegmentDescriptor {
  if (offset + DESCRIPTOR_SIZE > view.byteLength) throw new DocaError('INVALID_VALUE', call, 'segment descriptor is truncated');
  const d = {
    pid: view.getUint32(offset, true),
    fd: view.getUint32(offset + 4, true),
    start: view.getFloat64(offset + 8, true),
    size: view.getFloat64(offset + 16, true),
    token: new Uint8Array(view.buffer.slice(view.byteOffset + offset + 24, view.byteOffset + offset + 24 + TOKEN_SIZE)),
  };
  const ok = d.pid > 0 && Number.isSafeInteger(d.start) && d.start >= 0 && Number.isInteger(d.size) && d.size > SEGMENT_HEADER_SIZE && d.size <= 2 ** 32;
  if (!ok) throw new DocaError('INVALID_VALUE', call, `segment descriptor holds impossible values (pid ${d.pid}, size ${d.size})`);
  return d;
}

function fromNative(err: unknown, call: string): DocaError {
  const e = err as Error & { code?: string };
  const code =
    ({
      ERR_SOFTDPU_CLOSED: 'BAD_STATE',
      ERR_SOFTDPU_HANDLE: 'BAD_STATE',
      ERR_SOFTDPU_BUSY: 'IN_USE',
      ERR_SOFTDPU_RANGE: 'INVALID_VALUE',
      ERR_SOFTDPU_ARGS: 'INVALID_VALUE',
      ERR_SOFTDPU_NOT_FOUND: 'NOT_FOUND',
    } as const)[e.code ?? ''] ?? 'OPERATING_SYSTEM';
  return new DocaError(code, call, e.message, { cause: err });
}

/** How `Segment.wait` (a futex wait) ended: woken, the word did not hold the expected value, or timed out. */
export type WaitOutcome = 'ok' | 'not-equal' | 'timed-out';

/** `sched_yield(2)`: gives the CPU away (yielding waits). */
export function yieldCpu(): void {
  native.schedYield();
}

/**
 * A mapped shared segment (a memfd): the fabric's shared memory, no DOCA object of its own but what
 * stands behind the memory `doca_mmap_export_pci` shares, a `doca_sync_event`'s counter and a
 * `doca_comch_connection`'s rings (docs/protocol.md). Views over the whole segment, header included, are
 * `u8`, `i32` and `i64`; the payload starts after the 64-byte header.
 *
 * @example
 * ```ts
 * const seg = Segment.create('demo', 4096); // owner
 * const peer = Segment.open(seg.descriptor); // in another process of the same user, from the descriptor
 * Atomics.store(peer.i32, 16, 1); // word 16: the first payload word
 * seg.wait(64, 0, 0); // 'not-equal': the word is 1 now
 * ```
 */
export class Segment {
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  readonly i64: BigInt64Array;
  readonly size: number;
  private isClosed = false;

  private constructor(
    private readonly handle: number,
    buffer: ArrayBuffer,
    readonly descriptor: SegmentDescriptor,
    /** True in the process that created the segment. */
    readonly isOwner: boolean,
  ) {
    this.size = buffer.byteLength;
    this.u8 = new Uint8Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.i64 = new BigInt64Array(buffer);
  }

  /** Creates a segment with `payloadSize` usable bytes after the header. */
  static create(kind: string, payloadSize: number): Segment {
    if (!/^[a-z]{1,15}$/.test(kind)) throw new DocaError('INVALID_VALUE', 'segment create', `segment kind ${JSON.stringify(kind)} is not 1 to 15 lower-case letters`);
    if (!Number.isInteger(payloadSize) || payloadSize < 0 || payloadSize > 2 ** 32 - 4096) {
      throw new DocaError('INVALID_VALUE', 'segment create', `payload size ${payloadSize} is not an integer in [0, 4 GiB - 4 KiB]`);
    }
    const size = SEGMENT_HEADER_SIZE + Math.ceil(payloadSize / 64) * 64;
    let m;
    try {
      m = native.segmentCreate(size, memfdLabel(kind));
    } catch (err) {
      throw fromNative(err, 'segment create');
    }
    const token = randomBytes(TOKEN_SIZE);
    const seg = new Segment(m.handle, m.buffer, { pid: self.pid, start: self.start, fd: m.fd, size, token }, true);
    const v = new DataView(m.buffer);
    v.setUint16(OFF_VERSION, LAYOUT_VERSION, true);
    v.setUint32(OFF_PID, self.pid, true);
    v.setFloat64(OFF_START, self.start, true);
    v.setFloat64(OFF_SIZE, size, true);
    seg.u8.set(token, OFF_TOKEN);
    seg.u8.set(Buffer.from(kind, 'latin1'), OFF_KIND);
    Atomics.store(seg.i32, OFF_STATE / 4, STATE_LIVE);
    Atomics.store(seg.i32, OFF_MAGIC / 4, MAGIC);
    return seg;
  }

  /**
   * Opens a segment another process created. Stale or forged descriptors give NOT_FOUND; a genuine
   * segment whose kind is not one of `kinds` (when given) gives INVALID_VALUE.
   */
  static open(d: SegmentDescriptor, call = 'segment open', kinds?: readonly string[]): Segment {
    const owner: ProcessIdentity = { pid: d.pid, start: d.start };
    if (!isAlive(owner)) throw new DocaError('NOT_FOUND', call, `the owner of the segment (pid ${d.pid}) is gone`);
    let m;
    try {
      m = native.segmentOpen(segmentPath(d.pid, d.fd), d.size);
    } catch (err) {
      throw fromNative(err, call);
    }
    const seg = new Segment(m.handle, m.buffer, d, false);
    const v = new DataView(m.buffer);
    const problem =
      Atomics.load(seg.i32, OFF_MAGIC / 4) !== MAGIC || v.getUint16(OFF_VERSION, true) !== LAYOUT_VERSION
        ? 'is not a softdpu segment of this layout version'
        : v.getUint32(OFF_PID, true) !== d.pid || v.getFloat64(OFF_START, true) !== d.start || v.getFloat64(OFF_SIZE, true) !== d.size
          ? 'belongs to another owner'
          : !timingSafeEqual(seg.u8.subarray(OFF_TOKEN, OFF_TOKEN + TOKEN_SIZE), d.token)
            ? 'has another token'
            : seg.revoked
              ? 'was revoked by its owner'
              : Atomics.load(seg.i32, OFF_STATE / 4) !== STATE_LIVE
                ? `is not live (state ${Atomics.load(seg.i32, OFF_STATE / 4)})`
                : undefined;
    if (problem) {
      seg.close();
      throw new DocaError('NOT_FOUND', call, `the segment at pid ${d.pid} fd ${d.fd} ${problem}`);
    }
    if (kinds && !kinds.includes(seg.kind)) {
      const kind = seg.kind;
      seg.close();
      throw new DocaError('INVALID_VALUE', call, `the segment at pid ${d.pid} fd ${d.fd} is a ${JSON.stringify(kind)} segment, not ${kinds.map((k) => JSON.stringify(k)).join(' or ')}`);
    }
    return seg;
  }

  /** What the creator made it for (`Segment.create`'s kind). */
  get kind(): string {
    const end = this.u8.subarray(OFF_KIND, OFF_KIND + KIND_SIZE).indexOf(0);
    return Buffer.from(this.u8.subarray(OFF_KIND, OFF_KIND + (end < 0 ? KIND_SIZE : end))).toString('latin1');
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * The owner marked the segment as no longer valid (e.g. a stopped mmap); openers must stop using it.
   * A plain read of the state word, not Atomics.load: the word goes from live to revoked once and orders
   * nothing (no reader acts on data published before it), and an aligned Int32Array read cannot tear, so
   * it sees the revoke as soon as an atomic load would; V8 compiles it to one load where Atomics.load is
   * a builtin call, and ringers check it on every ring (PeerBell).
   */
  get revoked(): boolean {
    return !this.isClosed && this.i32[OFF_STATE / 4] === STATE_REVOKED;
  }

  /** Owner only: invalidates the segment for every process that opened it. */
  revoke(): void {
    this.check('segment revoke');
    if (!this.isOwner) throw new DocaError('NOT_PERMITTED', 'segment revoke', 'only the owner may revoke a segment');
    Atomics.store(this.i32, OFF_STATE / 4, STATE_REVOKED);
  }

  /** Blocking futex wait on the 32-bit word at `byteOffset` while it holds `expected`. */
  wait(byteOffset: number, expected: number, timeoutMs = Infinity): WaitOutcome {
    this.check('segment wait');
    try {
      const r = native.futexWait(this.handle, byteOffset, expected >>> 0, timeoutMs);
      return r === WaitResult.Ok ? 'ok' : r === WaitResult.NotEqual ? 'not-equal' : 'timed-out';
    } catch (err) {
      throw fromNative(err, 'segment wait');
    }
  }

  /** Wakes up to `count` waiters (any process) on the word at `byteOffset`; returns how many woke. */
  wake(byteOffset: number, count = 0x7fffffff): number {
    this.check('segment wake');
    try {
      return native.futexWake(this.handle, byteOffset, count);
    } catch (err) {
      throw fromNative(err, 'segment wake');
    }
  }

  /** Unmaps the segment (views become empty). */
  close(): void {
    if (this.isClosed) return;
    try {
      native.segmentClose(this.handle);
    } catch (err) {
      throw fromNative(err, 'segment close');
    }
    this.isClosed = true;
  }

  private check(call: string): void {
    if (this.isClosed) throw new DocaError('BAD_STATE', call, 'the segment is closed');
  }
}
