/**
 * A consumer's queue: the receive buffers it posted and their completions, in a segment it owns and its
 * producers (threads or processes on the other side) map (docs/protocol.md#consumer-queue).
 *
 *   64   i32 post tail (the consumer appends posted buffers)
 *   128  i32 claim head (producers take the next posted buffer with a compare-and-swap)
 *   256  slots x 64 bytes:
 *          +0 i32 state (0 empty, 1 posted, 2 filled)   +4 u32 capacity of the posted buffer
 *          +8 f64 byte offset of the buffer in its memory segment
 *          +16 u32 length written   +20 u32 producer id   +24 u32 immediate data length
 *          +32 immediate data (up to 32 bytes)
 *
 * A slot is posted only once its previous use was completed, and completions are taken in slot order, so
 * buffers are consumed in the order posted even when several producers fill them concurrently. A
 * producer that filled a slot rings the consumer's bell (its entry in the connection's endpoint table).
 */
import { SEGMENT_HEADER_SIZE, Segment } from '../fabric/segment.js';

const POST_TAIL = 64 / 4;
const CLAIM_HEAD = 128 / 4;
const SLOTS = 256;
const SLOT_SIZE = 64;
const EMPTY = 0;
const POSTED = 1;
const FILLED = 2;
export const MAX_IMM = 32;

/** A filled slot, as the consumer reads it. */
export interface Filled {
  length: number;
  producerId: number;
  imm: Uint8Array;
}

function slotAt(slots: number, position: number): number {
  return SLOTS + ((position >>> 0) % slots) * SLOT_SIZE;
}

/** The consumer's side of its queue. */
const NO_IMM = new Uint8Array(0);

export class ConsumerQueue {
  readonly segment: Segment;
  private tail = 0;
  private head = 0;
  private readonly view: DataView;
  private readonly result: Filled = { length: 0, producerId: 0, imm: NO_IMM };

  constructor(readonly slots: number) {
    this.segment = Segment.create('consumer', SLOTS - SEGMENT_HEADER_SIZE + slots * SLOT_SIZE);
    this.view = new DataView(this.segment.u8.buffer);
  }

  /** Appends a posted buffer; the caller never posts more than `slots` at once. */
  post(offset: number, capacity: number): void {
    const at = slotAt(this.slots, this.tail);
    this.view.setUint32(at + 4, capacity, true);
    this.view.setFloat64(at + 8, offset, true);
    Atomics.store(this.segment.i32, at / 4, POSTED);
    this.tail = (this.tail + 1) | 0;
    Atomics.store(this.segment.i32, POST_TAIL, this.tail);
  }

  /** The oldest posted buffer if a producer filled it, else undefined (the object is reused: read it at once). */
  filled(): Filled | undefined {
    if (this.head === this.tail) return undefined;
    const at = slotAt(this.slots, this.head);
    if (Atomics.load(this.segment.i32, at / 4) !== FILLED) return undefined;
    const immLen = Math.min(this.view.getUint32(at + 24, true), MAX_IMM);
    const r = this.result;
    r.length = this.view.getUint32(at + 16, true);
    r.producerId = this.view.getUint32(at + 20, true);
    r.imm = immLen > 0 ? this.segment.u8.slice(at + 32, at + 32 + immLen) : NO_IMM;
    return r;
  }

  /** Frees the oldest slot after its completion was taken. */
  release(): void {
    Atomics.store(this.segment.i32, slotAt(this.slots, this.head) / 4, EMPTY);
    this.head = (this.head + 1) | 0;
  }

  /** Posted buffers not yet completed. */
  get outstanding(): number {
    return (this.tail - this.head) | 0;
  }

  /** Withdraws every posted buffer (stopping): producers find nothing to claim any more. */
  withdraw(): void {
    Atomics.store(this.segment.i32, CLAIM_HEAD, Atomics.load(this.segment.i32, POST_TAIL));
  }
}

export type ClaimResult = { slot: number; offset: number } | 'empty' | { tooSmall: number };

/** A producer's view of a consumer's queue (mapped in the producer's thread). */
export class QueueView {
  private readonly view: DataView;
  readonly slots: number;

  constructor(readonly segment: Segment) {
    this.view = new DataView(segment.u8.buffer);
    this.slots = Math.floor((segment.size - SLOTS) / SLOT_SIZE);
  }

  /**
   * Takes the next posted buffer for a `length`-byte payload: 'empty' when none is posted, `tooSmall`
   * (with the buffer's capacity) when the next one cannot hold it (and nothing was taken).
   */
  claim(length: number): ClaimResult {
    const i32 = this.segment.i32;
    for (;;) {
      const head = Atomics.load(i32, CLAIM_HEAD);
      if (head === Atomics.load(i32, POST_TAIL)) return 'empty';
      const at = slotAt(this.slots, head);
      const capacity = this.view.getUint32(at + 4, true);
      if (length > capacity) return { tooSmall: capacity };
      const offset = this.view.getFloat64(at + 8, true);
      if (Atomics.compareExchange(i32, CLAIM_HEAD, head, (head + 1) | 0) === head) return { slot: at, offset };
    }
  }

  /** Publishes a claimed slot as filled (the caller then rings the consumer). */
  fill(slot: number, length: number, producerId: number, imm: Uint8Array | undefined): void {
    this.view.setUint32(slot + 16, length, true);
    this.view.setUint32(slot + 20, producerId, true);
    this.view.setUint32(slot + 24, imm?.length ?? 0, true);
    if (imm) this.segment.u8.set(imm, slot + 32);
    Atomics.store(this.segment.i32, slot / 4, FILLED);
  }
}
