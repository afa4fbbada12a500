/**
 * A single-producer single-consumer ring of variable-size records in a shared segment: the control
 * path's receive queues (docs/protocol.md#rings). The producer owns `tail`, the consumer owns `head`,
 * each on its own cache line, both counting records; each side caches the other's index and reloads it
 * only when the cached value says full (or empty), and stores its own once per batch (`publish()`,
 * `release()`), so the common case touches no shared line but the records themselves.
 *
 *   base +   0  i32 tail (producer)        base + 64  i32 head (consumer)
 *   base + 128  records, packed: [u32 length][u16 type][u16 reserved][payload, padded to 8] ...
 *
 * Records are packed one after another, so a 64-byte message takes 72 bytes of the ring however large
 * its largest message may be (with fixed slots of that largest size, every message of a 64 KiB queue
 * touched a fresh page). Both sides keep their own byte offset into the record area, from 0 when they
 * attach (rings are attached empty), and move it by the same rule: past the record, and back to 0 when
 * less than the largest record would be left. The area holds `slots + 1` largest records, so `slots`
 * records in flight and the gap the rule leaves at the end always fit.
 *
 * A writer that finds the ring empty past WRAP_AFTER bytes goes back to 0 early: it writes a WRAP header
 * where its next record would have gone, and the record at 0; a reader that finds WRAP there goes to 0.
 * So a connection whose reader keeps up stays in the first pages of its area: walking all 16 MiB of a
 * 4096-deep queue of 4 KiB messages, 72 bytes a message, faulted a fresh page into both processes every
 * 57 messages for the first 230 000 (docs/protocol.md#rings has what that did to a round trip's p99).
 *
 * Trust: each side reads one word the other writes (the other's index) and the records. An index that
 * puts more records in the ring than it has slots, or fewer than none, and a length beyond the payload
 * size are reported as corruption (the connection then ends); offsets are computed locally from lengths
 * that passed that check, so nothing a peer writes can move a read or a write outside the ring.
 */
import { copyInto, copyOut } from './copy.js';
import type { Segment } from './segment.js';

export const RING_HEADER_SIZE = 128;
const RECORD_HEADER_SIZE = 8;
/** The type of a header that sends the reader back to the area's start; it is no record (counts none). */
export const RING_WRAP = 0xffff;
/** Past this offset a writer that finds the ring empty goes back to 0 (its own policy: readers just follow). */
const WRAP_AFTER = 64 * 1024;
/** While past WRAP_AFTER, the writer looks at the consumer's index once in this many records. */
const WRAP_LOOK_EVERY = 64;

/** Sets a fresh ring's positions (both sides start counting from what the segment says). */
export function initRing(segment: Segment, base: number, position: number): void {
  Atomics.store(segment.i32, base / 4, position);
  Atomics.store(segment.i32, (base + 64) / 4, position);
}

/** Bytes a record of `length` payload bytes takes in the ring. */
function recordSize(length: number): number {
  return RECORD_HEADER_SIZE + ((length + 7) & ~7);
}

/** Bytes of the record area: `slots + 1` largest records, a 64-byte multiple (none for no slot). */
function areaSize(slots: number, payload: number): number {
  return slots === 0 ? 0 : Math.ceil(((slots + 1) * recordSize(payload)) / 64) * 64;
}

/** Bytes a ring of `slots` records of up to `payload` bytes takes (64-byte multiple). */
export function ringSize(slots: number, payload: number): number {
  return RING_HEADER_SIZE + areaSize(slots, payload);
}

abstract class RingSide {
  protected readonly tailIndex: number;
  protected readonly headIndex: number;
  protected readonly first: number;
  /** Offsets past this one leave less than a largest record: the next record goes at 0. */
  protected readonly lastStart: number;
  protected readonly u8: Uint8Array;
  protected readonly i32: Int32Array;
  protected readonly view: DataView;
  /** Where this side's own index lives (`tailIndex` or `headIndex`). */
  private readonly ownIndex: number;
  /** This side's index as last stored for the other side (`storeOwn()`). */
  private stored: number;
  /** Byte offset of this side's next record in the area (both sides start at 0: the ring is empty). */
  protected at = 0;

  constructor(
    segment: Segment,
    base: number,
    readonly slots: number,
    /** Largest payload a record holds. */
    readonly payload: number,
    owns: 'tail' | 'head',
  ) {
    this.tailIndex = base / 4;
    this.headIndex = (base + 64) / 4;
    this.first = base + RING_HEADER_SIZE;
    this.lastStart = areaSize(slots, payload) - recordSize(payload);
    this.u8 = segment.u8;
    this.i32 = segment.i32;
    this.view = new DataView(segment.u8.buffer);
    this.ownIndex = owns === 'tail' ? this.tailIndex : this.headIndex;
    this.stored = Atomics.load(this.i32, this.ownIndex);
  }

  /**
   * Stores this side's index for the other side, if it moved since the last store. One store for a
   * batch: the other side reads this line when it has caught up (consumer) or waits for room
   * (producer), so a store per record would pull the line back to this side once per message.
   */
  protected storeOwn(position: number): void {
    if (position !== this.stored) {
      this.stored = position;
      Atomics.store(this.i32, this.ownIndex, position);
    }
  }

  /** Writes a record header (or a WRAP header: length 0) at byte `at` of the segment. */
  protected header(at: number, type: number, length: number): void {
    this.view.setUint32(at, length, true);
    this.view.setUint16(at + 4, type, true);
  }

  /** The offset after a record of `length` bytes at `at`: the same rule on both sides. */
  protected after(at: number, length: number): number {
    const next = at + recordSize(length);
    return next > this.lastStart ? 0 : next;
  }
}

/** The producing side of a ring. */
export class RingWriter extends RingSide {
  private tail: number;
  private headSeen: number;
  /** Records written past WRAP_AFTER since the last look at the consumer's index for an early wrap. */
  private past = 0;
  /** The consumer's index is impossible (more free room than slots, or less than none). */
  corrupt = false;

  /** Attaches to a ring, empty, at its start position (fabric/positions.ts: 0, or near 2^32 in tests). */
  constructor(segment: Segment, base: number, slots: number, payload: number) {
    super(segment, base, slots, payload, 'tail');
    this.tail = Atomics.load(this.i32, this.tailIndex);
    this.headSeen = Atomics.load(this.i32, this.headIndex);
  }

  /** True when at least one record fits. */
  hasRoom(): boolean {
    if (((this.tail - this.headSeen) | 0) >>> 0 < this.slots) return true; // 0 <= used < slots
    this.headSeen = Atomics.load(this.i32, this.headIndex);
    const used = (this.tail - this.headSeen) | 0;
    if (used < 0 || used > this.slots) this.corrupt = true;
    return !this.corrupt && used < this.slots;
  }

  /**
   * Writes a record (`payload.length` must not exceed the ring's payload size) for the next `publish()`;
   * false when full.
   */
  push(type: number, payload: Uint8Array): boolean {
    if (!this.hasRoom()) return false;
    if (this.at > WRAP_AFTER && (this.past++ & (WRAP_LOOK_EVERY - 1)) === 0) this.wrapIfEmpty();
    const at = this.first + this.at;
    this.header(at, type, payload.length);
    copyInto(this.u8, payload, at + RECORD_HEADER_SIZE);
    this.at = this.after(this.at, payload.length);
    this.tail = (this.tail + 1) | 0;
    return true;
  }

  /** Publishes the tail: every record pushed since is the consumer's to read (one store a batch). */
  publish(): void {
    this.storeOwn(this.tail);
  }

  /**
   * Goes back to the area's start if the consumer has read every record (then nothing unread lies
   * anywhere): a WRAP header where the consumer looks next, published with the record that follows it.
   */
  private wrapIfEmpty(): void {
    this.headSeen = Atomics.load(this.i32, this.headIndex);
    if (this.headSeen !== this.tail) return; // not empty (or corrupt: hasRoom() says so at its next reload)
    this.header(this.first + this.at, RING_WRAP, 0);
    this.at = 0;
    this.past = 0;
  }
}

/** A record the consumer is looking at: valid until `advance()`. */
export interface RingRecord {
  type: number;
  length: number;
  /** Byte offset of the payload in the segment. */
  offset: number;
}

/** The consuming side of a ring. */
export class RingReader extends RingSide {
  private head: number;
  private tailSeen: number;
  private abandoned = false;
  private readonly record: RingRecord = { type: 0, length: 0, offset: 0 };

  constructor(segment: Segment, base: number, slots: number, payload: number) {
    super(segment, base, slots, payload, 'head');
    this.head = Atomics.load(this.i32, this.headIndex);
    this.tailSeen = Atomics.load(this.i32, this.tailIndex);
  }

  /** True when a record is waiting. */
  hasRecord(): boolean {
    if (this.abandoned) return false;
    if (this.head !== this.tailSeen) return true;
    this.tailSeen = Atomics.load(this.i32, this.tailIndex);
    return this.head !== this.tailSeen;
  }

  /**
   * The oldest record, or undefined when empty. A length beyond the payload size, or a producer index
   * that cannot be (a corrupt or hostile peer), is reported as such: `length` is -1 so the caller can
   * drop the connection (and must not `advance()`).
   */
  peek(): RingRecord | undefined {
    if (!this.hasRecord()) return undefined;
    const pending = (this.tailSeen - this.head) | 0;
    if (pending < 0 || pending > this.slots) {
      this.record.type = 0;
      this.record.length = -1;
      return this.record;
    }
    let at = this.first + this.at;
    let type = this.view.getUint16(at + 4, true);
    if (type === RING_WRAP && this.at !== 0) {
      this.at = 0; // the writer went back early (a WRAP at 0 is corruption: the record's own type says so)
      at = this.first;
      type = this.view.getUint16(at + 4, true);
    }
    const length = this.view.getUint32(at, true);
    this.record.type = type;
    this.record.length = length <= this.payload ? length : -1;
    this.record.offset = at + RECORD_HEADER_SIZE;
    return this.record;
  }

  /** A copy of a record's payload. */
  copy(record: RingRecord): Uint8Array {
    return copyOut(this.u8, record.offset, record.length);
  }

  /** Stops reading (the producer corrupted the ring): no record is ever reported again. */
  abandon(): void {
    this.abandoned = true;
  }

  /** Moves past the record `peek()` returned; its room goes back to the producer at the next `release()`. */
  advance(): void {
    this.at = this.after(this.at, this.record.length);
    this.head = (this.head + 1) | 0;
  }

  /** Publishes the head: every record `advance()` moved past is the producer's room again (one store a batch). */
  release(): void {
    this.storeOwn(this.head);
  }

  /** Records waiting (as of the last look at the producer's index). */
  get pending(): number {
    return (this.tailSeen - this.head) | 0;
  }
}
