/**
 * Doorbells: how anything in the fabric wakes a sleeping progress engine. docs/wakeup.md draws the
 * protocol, its states and why it cannot lose a wake-up; this file is its only implementation.
 *
 * Every engine owns one bell: a pipe, whose read end the engine's own thread polls (its event loop,
 * registered once for the engine's life) and whose write end any process of the fabric opens once as
 * /proc/<pid>/fd/<n>; and a small segment with the engine's state word and one ready bit per source
 * (a connection, a consumer's queue, a sync event it waits on). A ringer publishes its data, sets the
 * source's bit, and writes one byte into the pipe only if the engine said it sleeps (ARMED) and this
 * ringer is the one that moves it to RUNG: at most one write per sleep, none while the engine polls or
 * is awake. The engine learns which sources to look at from the bits, so a wake-up costs the same with
 * one connection or five hundred.
 *
 * Bell segment, after the 64-byte segment header (fabric/segment.ts; docs/protocol.md#doorbells):
 *   64   u32 magic 'BELL'   68 u32 version   72 u32 capacity (bits)   76 u32 owner thread id
 *   80   f64 pipe inode     88 u32 pipe write fd
 *   128  i32 state: POLL 0 | AWAKE 1 | ARMED 2 | RUNG 3 (its own cache line)
 *   192  u32 ready bits [capacity / 32]
 *
 * A bell reference, which other segments publish so that peers can ring one source (64 bytes):
 *   0  i32 published (1 once the rest is written)   8  segment descriptor [40]   48 u32 bit
 * Everything a peer reads here is checked before use: the segment's header and token (Segment.open),
 * the magic and version, the bit against the capacity, and the pipe's inode after opening it.
 */
import { threadId } from 'node:worker_threads';
import { DocaError } from '../core/error.js';
import { FreeList } from '../core/free-list.js';
import { native } from '../native/load.js';
import { RingResult } from '../native/native.js';
import { decodeDescriptor, DESCRIPTOR_SIZE, descriptorKey, encodeDescriptor, Segment, SEGMENT_HEADER_SIZE, type SegmentDescriptor } from './segment.js';
import { segmentPath } from './names.js';

const MAGIC = 0x4c4c4542; // 'BELL'
const VERSION = 1;
const OFF_MAGIC = 64;
const OFF_VERSION = 68;
const OFF_CAPACITY = 72;
const OFF_THREAD = 76;
const OFF_INODE = 80;
const OFF_WRITE_FD = 88;
const STATE = 128 / 4;
const BITS = 192 / 4;

/** The engine's state, as ringers see it. */
export const BellState = {
  /** The engine has never slept: it polls every source, so ringers do nothing. */
  POLL: 0,
  /** Awake: ringers set ready bits, and write nothing. */
  AWAKE: 1,
  /** About to sleep or asleep: the first ringer moves it to RUNG and writes the pipe. */
  ARMED: 2,
  RUNG: 3,
} as const;

/** Sources one engine can have (connections, consumers, events it waits on). */
export const BELL_CAPACITY = 16384;

/** Bytes a published bell reference takes in another segment. */
export const BELL_REF_SIZE = 64;

/** What a peer needs to ring one source of an engine. */
export interface BellRef {
  readonly segment: SegmentDescriptor;
  readonly bit: number;
}

/** Writes `ref` at `offset` of `segment` and then marks it published. */
export function publishBellRef(segment: Segment, offset: number, ref: BellRef): void {
  const view = new DataView(segment.u8.buffer);
  encodeDescriptor(ref.segment, view, offset + 8);
  view.setUint32(offset + 8 + DESCRIPTOR_SIZE, ref.bit, true);
  Atomics.store(segment.i32, offset / 4, 1);
}

/** Withdraws a published reference (its source is gone). */
export function unpublishBellRef(segment: Segment, offset: number): void {
  if (!segment.closed) Atomics.store(segment.i32, offset / 4, 0);
}

/** The reference published at `offset`, or undefined while none is. INVALID_VALUE if it cannot be one. */
export function readBellRef(segment: Segment, offset: number, call: string): BellRef | undefined {
  if (Atomics.load(segment.i32, offset / 4) !== 1) return undefined;
  const view = new DataView(segment.u8.buffer);
  return { segment: decodeDescriptor(view, offset + 8, call), bit: view.getUint32(offset + 8 + DESCRIPTOR_SIZE, true) };
}

/** An engine's own bell. */
export class Bell {
  readonly segment: Segment;
  readonly readFd: number;
  private readonly writeFd: number;
  private readonly i32: Int32Array;
  private readonly bits: FreeList;
  private words = 0;
  private closed = false;

  constructor(readonly capacity = BELL_CAPACITY) {
    this.bits = new FreeList(capacity);
    this.segment = Segment.create('bell', BITS * 4 - SEGMENT_HEADER_SIZE + capacity / 8);
    let pipe;
    try {
      pipe = native.pipeCreate();
    } catch (err) {
      this.segment.close();
      throw new DocaError('OPERATING_SYSTEM', 'doca_pe_create', `cannot create the engine's doorbell: ${(err as Error).message}`);
    }
    this.readFd = pipe.readFd;
    this.writeFd = pipe.writeFd;
    this.i32 = this.segment.i32;
    const v = new DataView(this.segment.u8.buffer);
    v.setUint32(OFF_VERSION, VERSION, true);
    v.setUint32(OFF_CAPACITY, capacity, true);
    v.setUint32(OFF_THREAD, threadId, true);
    v.setFloat64(OFF_INODE, pipe.inode, true);
    v.setUint32(OFF_WRITE_FD, pipe.writeFd, true);
    Atomics.store(this.i32, OFF_MAGIC / 4, MAGIC);
  }

  /** A new source's bit; NO_MEMORY once `capacity` sources exist. */
  allocate(call: string): number {
    const bit = this.bits.take();
    if (bit < 0) throw new DocaError('NO_MEMORY', call, `the progress engine already watches ${this.capacity} sources (connections, consumers, events)`);
    this.words = Math.max(this.words, (bit >>> 5) + 1);
    return bit;
  }

  /** Frees a source's bit (a ring still in flight for it is dropped by the engine). */
  release(bit: number): void {
    if (this.closed) return;
    Atomics.and(this.i32, BITS + (bit >>> 5), ~(1 << (bit & 31)));
    this.bits.give(bit);
  }

  ref(bit: number): BellRef {
    return { segment: this.segment.descriptor, bit };
  }

  get state(): number {
    return Atomics.load(this.i32, STATE);
  }

  /** Announces that the engine is about to sleep; true if a ringer already set a bit (then do not). */
  arm(): boolean {
    Atomics.store(this.i32, STATE, BellState.ARMED);
    return this.anyReady();
  }

  /** The engine itself found work while armed: ARMED -> RUNG, so no ringer writes. False if one did. */
  claim(): boolean {
    return Atomics.compareExchange(this.i32, STATE, BellState.ARMED, BellState.RUNG) === BellState.ARMED;
  }

  /** Awake again; returns the state it left (RUNG: a byte may wait in the pipe). */
  disarm(): number {
    return Atomics.exchange(this.i32, STATE, BellState.AWAKE);
  }

  /** Takes every set bit (clearing it) and passes it to `visit`. */
  harvest(visit: (bit: number) => void): void {
    const i32 = this.i32;
    for (let w = 0; w < this.words; w++) {
      if (Atomics.load(i32, BITS + w) === 0) continue;
      let bits = Atomics.exchange(i32, BITS + w, 0);
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        visit(w * 32 + 31 - Math.clz32(low));
      }
    }
  }

  anyReady(): boolean {
    for (let w = 0; w < this.words; w++) if (Atomics.load(this.i32, BITS + w) !== 0) return true;
    return false;
  }

  /** Writes our own pipe (the engine's handle was given out, so its readiness must show there too). */
  ringSelf(): void {
    native.pipeRing(this.writeFd);
  }

  drain(): void {
    native.pipeDrain(this.readFd);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Ringers that hold the write end open get EPIPE from now on; the segment goes with its last mapping.
    native.fdClose(this.readFd);
    native.fdClose(this.writeFd);
    this.segment.revoke();
    this.segment.close();
  }
}

/** A peer's bell, mapped in this thread to ring it. */
export class RemoteBell {
  private readonly i32: Int32Array;
  refs = 1;
  private gone = false;

  constructor(
    readonly segment: Segment,
    private readonly fd: number,
    readonly capacity: number,
    readonly key: string,
  ) {
    this.i32 = segment.i32;
  }

  /**
   * Source `bit` has work (its data is already published): set its bit, and wake the engine if it
   * sleeps and nobody woke it yet. No syscall unless it does. False once a wake-up found its pipe
   * without a reader (the engine is gone).
   */
  ring(bit: number): boolean {
    const i32 = this.i32;
    if (Atomics.load(i32, STATE) === BellState.POLL) return !this.gone;
    const word = BITS + (bit >>> 5);
    const mask = 1 << (bit & 31);
    if ((Atomics.load(i32, word) & mask) === 0) Atomics.or(i32, word, mask);
    if (Atomics.load(i32, STATE) === BellState.ARMED) this.wake();
    return !this.gone;
  }

  /**
   * The engine sleeps (ARMED): the ringer that moves it to RUNG writes its pipe. Apart from ring(), which
   * a busy engine's ringers run with the bell AWAKE or POLL, so that ring() stays small enough for V8 to
   * inline where it is rung on every message.
   */
  private wake(): void {
    if (Atomics.compareExchange(this.i32, STATE, BellState.ARMED, BellState.RUNG) === BellState.ARMED && !this.gone) {
      if (native.pipeRing(this.fd) === RingResult.Gone) this.gone = true;
    }
  }

  /** True once the owner closed its bell or died (its segment is revoked, or its pipe has no reader). */
  get dead(): boolean {
    return this.gone || this.segment.revoked;
  }

  /** @internal the last user let go (releaseRemoteBell). */
  _close(): void {
    native.fdClose(this.fd);
    this.segment.close();
  }
}

const remotes = new Map<string, RemoteBell>();

/**
 * The bell `ref` names, mapped and opened in this thread (shared by every user in it, counted); its bit
 * checked against the capacity. NOT_FOUND for a bell that is gone, INVALID_VALUE for one that cannot be.
 */
export function openRemoteBell(ref: BellRef, call: string): RemoteBell {
  const key = descriptorKey(ref.segment);
  let bell = remotes.get(key);
  if (bell && !bell.segment.closed) {
    bell.refs++;
  } else {
    const segment = Segment.open(ref.segment, call, ['bell']);
    try {
      const v = new DataView(segment.u8.buffer);
      const capacity = v.getUint32(OFF_CAPACITY, true);
      if (Atomics.load(segment.i32, OFF_MAGIC / 4) !== MAGIC || v.getUint32(OFF_VERSION, true) !== VERSION || capacity % 32 !== 0 || BITS * 4 + capacity / 8 > segment.size) {
        throw new DocaError('INVALID_VALUE', call, `the segment at pid ${ref.segment.pid} fd ${ref.segment.fd} is not a doorbell of version ${VERSION}`);
      }
      let fd: number;
      try {
        fd = native.pipeOpen(segmentPath(ref.segment.pid, v.getUint32(OFF_WRITE_FD, true)), v.getFloat64(OFF_INODE, true));
      } catch (err) {
        throw new DocaError('NOT_FOUND', call, `the doorbell of pid ${ref.segment.pid} is gone (${(err as Error).message})`);
      }
      bell = new RemoteBell(segment, fd, capacity, key);
    } catch (err) {
      segment.close();
      throw err;
    }
    remotes.set(key, bell);
  }
  if (!(ref.bit < bell.capacity)) {
    releaseRemoteBell(bell);
    throw new DocaError('INVALID_VALUE', call, `doorbell bit ${ref.bit} is beyond the bell's ${bell.capacity} sources`);
  }
  return bell;
}

/** Lets go of a bell from `openRemoteBell`; the last user closes the pipe and the mapping. */
export function releaseRemoteBell(bell: RemoteBell): void {
  if (--bell.refs > 0) return;
  if (remotes.get(bell.key) === bell) remotes.delete(bell.key);
  bell._close();
}

/** Rings source `ref` once (opening and releasing its bell), ignoring a bell that is gone. */
export function ringOnce(ref: BellRef | undefined, call: string): void {
  if (!ref) return;
  let bell: RemoteBell;
  try {
    bell = openRemoteBell(ref, call);
  } catch {
    return; // its engine is gone: nobody to wake
  }
  bell.ring(ref.bit);
  releaseRemoteBell(bell);
}

/**
 * One source of a peer's bell, as every ringer needs it: the reference read and the bell opened at the
 * first ring, kept for the next ones, and looked up again once its engine is gone (another may have
 * published itself since). It never throws: a reference not published yet, an engine that is gone or
 * nonsense in the reference means there is nobody to wake, and a bell found gone is not opened again
 * until the reference names another.
 */
export class PeerBell {
  private bell: RemoteBell | undefined;
  private bit = 0;
  /** The bell (descriptor key) last found gone or unusable. */
  private failed: string | undefined;

  private constructor(
    private readonly find: () => BellRef | undefined,
    private readonly call: string,
  ) {}

  /** The bell whose reference is published at `offset` of `segment` (read again whenever the one open is gone). */
  static at(segment: Segment, offset: number, call: string): PeerBell {
    return new PeerBell(() => readBellRef(segment, offset, call), call);
  }

  /** The bell `ref` names (none: nobody to wake). */
  static of(ref: BellRef | undefined, call: string): PeerBell {
    return new PeerBell(() => ref, call);
  }

  /**
   * Sets `bit` (the reference's own by default) and wakes the source's engine if it sleeps (no syscall
   * otherwise); false when there is nobody to wake (then nothing was set).
   */
  ring(bit?: number): boolean {
    const bell = this.bell;
    if (bell === undefined || bell.dead) return this.ringAfresh(bit);
    return bell.ring(bit ?? this.bit); // every ring but the first: small, for V8 to inline where it is rung per message
  }

  /** True when there is nobody to wake (checked now: it opens the bell if it can). */
  get unreachable(): boolean {
    return !this.reach();
  }

  /** Lets go of the bell; a later ring looks it up again. */
  release(): void {
    if (this.bell) releaseRemoteBell(this.bell);
    this.bell = undefined;
  }

  /** ring() when no bell is open, or the one open is gone: looks it up (again) first. */
  private ringAfresh(bit: number | undefined): boolean {
    return this.reach() && this.bell!.ring(bit ?? this.bit);
  }

  private reach(): boolean {
    if (this.bell && !this.bell.dead) return true;
    if (this.bell) {
      this.failed = this.bell.key;
      this.release();
    }
    let ref: BellRef | undefined;
    try {
      ref = this.find();
      if (!ref || descriptorKey(ref.segment) === this.failed) return false;
      this.bell = openRemoteBell(ref, this.call);
      this.bit = ref.bit;
      return true;
    } catch {
      if (ref) this.failed = descriptorKey(ref.segment);
      return false;
    }
  }
}
