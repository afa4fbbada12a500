/**
 * A single-producer single-consumer ring of fixed-size records in a shared segment: the control path's
 * receive queues (docs/protocol.md#rings). The producer owns `tail`, the consumer owns `head`, each on
 * its own cache line; each side caches the other's index and reloads it only when the cached value says
 * full (or empty), and stores its own once per batch (`publish()`, `release()`), so the common case
 * touches no shared line but the slots themselves.
 *
 *   base +   0  i32 tail (producer)        base + 64  i32 head (consumer)
 *   base + 128  slots: [u32 length][u16 type][u16 reserved][payload, padded to 8] x slots
 *
 * Trust: each side reads one word the other writes (the other's index) and the records. An index that
 * puts more records in the ring than it has slots, or fewer than none, and a length beyond the payload
 * size are reported as corruption (the connection then ends); slots are computed locally, so nothing a
 * peer writes can move a read or a write outside the ring.
 */
import { copyInto, copyOut } from './copy.js';
import type { Segment } from './segment.js';

export const RING_HEADER_SIZE = 128;
const RECORD_HEADER_SIZE = 8;

/** Sets a fresh ring's positions (both sides start counting from what the segment says). */
export function initRing(segment: Segment, base: number, position: number): void {
  Atomics.store(segment.i32, base / 4, position);
  Atomics.store(segment.i32, (base + 64) / 4, position);
}

/** Bytes a ring of `slots` records of up to `payload` bytes takes (64-byte multiple). */
export function ringSize(slots: number, payload: number): number {
  return RING_HEADER_SIZE + Math.ceil((slots * slotSize(payload)) / 64) * 64;
}

function slotSize(payload: number): number {
  return RECORD_HEADER_SIZE + Math.ceil(payload / 8) * 8;
}

abstract class RingSide {
  protected readonly tailIndex: number;
  protected readonly headIndex: number;
  protected readonly slotBytes: number;
  protected readonly first: number;
  protected readonly u8: Uint8Array;
  protected readonly i32: Int32Array;
  protected readonly view: DataView;
  /** Where this side's own index lives (`tailIndex` or `headIndex`). */
  private readonly ownIndex: number;
  /** This side's index as last stored for the other side (`storeOwn()`). */
  private stored: number;

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
    this.slotBytes = slotSize(payload);
    this.first = base + RING_HEADER_SIZE;
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

  /**
   * Offset of slot `slot`. Each side takes its first slot from its index when it attaches (both attach
   * while the ring is empty, at its start position) and then counts it modulo `slots` itself: the slot
   * follows the number of records, not the 32-bit position, so the 2^32 wrap is harmless for any slot count.
   */
  protected slotOffset(slot: number): number {
    return this.first + slot * this.slotBytes;
  }
}

/** The producing side of a ring. */
export class RingWriter extends RingSide {
  private tail: number;
  private slot: number;
  private headSeen: number;
  /** The consumer's index is impossible (more free room than slots, or less than none). */
  corrupt = false;

  /** Attaches to a ring, empty, at its start position (fabric/positions.ts: 0, or near 2^32 in tests). */
  constructor(segment: Segment, base: number, slots: number, payload: number) {
    super(segment, base, slots, payload, 'tail');
    this.tail = Atomics.load(this.i32, this.tailIndex);
    this.slot = (this.tail >>> 0) % slots;
    this.headSeen = Atomics.load(this.i32, this.headIndex);
  }

  /** True when at least one record fits. */
  hasRoom(): boolean {
    if (((this.tail - this.headSeen) | 0) < this.slots) return true;
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
    const at = this.slotOffset(this.slot);
    this.view.setUint32(at, payload.length, true);
    this.view.setUint16(at + 4, type, true);
    copyInto(this.u8, payload, at + RECORD_HEADER_SIZE);
    this.slot = this.slot + 1 === this.slots ? 0 : this.slot + 1;
    this.tail = (this.tail + 1) | 0;
    return true;
  }

  /** Publishes the tail: every record pushed since is the consumer's to read (one store a batch). */
  publish(): void {
    this.storeOwn(this.tail);
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
  private slot: number;
  private tailSeen: number;
  private abandoned = false;
  private readonly record: RingRecord = { type: 0, length: 0, offset: 0 };

  constructor(segment: Segment, base: number, slots: number, payload: number) {
    super(segment, base, slots, payload, 'head');
    this.head = Atomics.load(this.i32, this.headIndex);
    this.slot = (this.head >>> 0) % slots;
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
   * drop the connection.
   */
  peek(): RingRecord | undefined {
    if (!this.hasRecord()) return undefined;
    const pending = (this.tailSeen - this.head) | 0;
    if (pending < 0 || pending > this.slots) {
      this.record.type = 0;
      this.record.length = -1;
      return this.record;
    }
    const at = this.slotOffset(this.slot);
    const length = this.view.getUint32(at, true);
    this.record.type = this.view.getUint16(at + 4, true);
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

  /** Moves past the oldest record; its slot goes back to the producer at the next `release()`. */
  advance(): void {
    this.slot = this.slot + 1 === this.slots ? 0 : this.slot + 1;
    this.head = (this.head + 1) | 0;
  }

  /** Publishes the head: every slot `advance()` moved past is the producer's again (one store a batch). */
  release(): void {
    this.storeOwn(this.head);
  }

  /** Records waiting (as of the last look at the producer's index). */
  get pending(): number {
    return (this.tailSeen - this.head) | 0;
  }
}
