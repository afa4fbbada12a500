/**
 * A consumer's queue: the receive buffers it posted and their completions, in a segment it owns and its
 * producers (threads or processes on the other side) map (docs/protocol.md#consumer-queue).
 *
 *   64   u32 magic 'CQUE'   68 u32 version   72 u32 slots (a power of two)
 *   128  i32 post tail (the consumer appends posted buffers)
 *   192  i32 claim head (producers take the next posted buffer with a compare-and-swap)
 *   256  slots x 64 bytes:
 *          +0 i32 state (0 empty, 1 posted, 2 filled, 3 claimed)   +4 u32 capacity of the posted buffer
 *          +8 f64 byte offset of the buffer in its memory segment
 *          +16 u32 length written   +20 u32 producer id   +24 u32 immediate data length
 *          +28 u32 claimer (the producer's endpoint entry + 1, written right after its claim)
 *          +32 immediate data (up to 32 bytes)
 *
 * Positions are 32-bit counters that wrap; a position's slot is `position & (slots - 1)` (positions.ts
 * slotAt), which stays right across the wrap because the slot count is a power of two. A slot is posted only once its
 * previous use was completed, and completions are taken in slot order, so buffers are consumed in the
 * order posted even when several producers fill them concurrently. A producer that filled a slot rings
 * the consumer's bell (its entry in the connection's endpoint table).
 *
 * Trust: the consumer believes nothing a producer wrote but what it checks against its own records (the
 * capacity it posted, its immediate-data length); a producer checks the header, the indices and each
 * posted buffer's place in the memory segment before it claims, so a hostile consumer can make it fail
 * a send but never write outside that consumer's memory.
 */
import { copyInto } from '../fabric/copy.js';
import { SEGMENT_HEADER_SIZE, Segment } from '../fabric/segment.js';
import { isPowerOfTwo, powerOfTwoAtLeast, slotAt, startPosition } from '../fabric/positions.js';

const MAGIC = 0x45555143; // 'CQUE'
const VERSION = 2;
const OFF_MAGIC = 64;
const OFF_VERSION = 68;
const OFF_SLOTS = 72;
const POST_TAIL = 128 / 4;
const CLAIM_HEAD = 192 / 4;
const SLOTS = 256;
const SLOT_SIZE = 64;
const EMPTY = 0;
const POSTED = 1;
const FILLED = 2;
const CLAIMED = 3;
/** The most immediate data a fast-path message carries (`doca_comch_consumer_cap_get_max_imm_data_len` never says more). */
export const MAX_IMM = 32;
/**
 * How often a consumer that polls in a loop (a CPU consumer whose engine never slept, a DPA thread
 * polling get_completion) looks at who claimed its unfilled head: once in this many polls. The look
 * reads the claim head, which producers write with every claim; a look per poll took that cache line
 * from the producer on every message (docs/protocol.md, Dead claims). A power of two.
 */
export const CLAIM_LOOK_POLLS = 256;
/**
 * A slot's fields (offsets in the slot), as plain constants: the busy paths use them as they would
 * literals, where `SLOT.LENGTH` would be a property load in each, and bytes against V8's inlining budget.
 */
const SLOT_STATE = 0;
const SLOT_CAPACITY = 4;
const SLOT_OFFSET = 8;
const SLOT_LENGTH = 16;
const SLOT_PRODUCER = 20;
const SLOT_IMM_LEN = 24;
const SLOT_CLAIMER = 28;
const SLOT_IMM = 32;
/** The same fields by name, for the DPA's side (QUEUE_LAYOUT). */
const SLOT = { STATE: SLOT_STATE, CAPACITY: SLOT_CAPACITY, OFFSET: SLOT_OFFSET, LENGTH: SLOT_LENGTH, PRODUCER: SLOT_PRODUCER, IMM_LEN: SLOT_IMM_LEN, CLAIMER: SLOT_CLAIMER, IMM: SLOT_IMM } as const;

/** The layout above, for the DPA's implementation of a consumer's side (dpa/dev/comch-msgq.ts). */
export const QUEUE_LAYOUT = {
  SLOT_COUNT: OFF_SLOTS,
  POST_TAIL: POST_TAIL * 4,
  CLAIM_HEAD: CLAIM_HEAD * 4,
  SLOTS,
  SLOT_SIZE,
  SLOT,
  EMPTY,
  POSTED,
  FILLED,
  CLAIMED,
} as const;

/**
 * The consumer's side of posting (`view` and `i32` over the queue segment): writes the buffer into the
 * slot of `position` and publishes it, then moves the post tail. The one implementation, for CPU
 * consumers (ConsumerQueue) and DPA ones (dpa/dev/comch-msgq.ts, through postSlots), so both write the
 * same fields in the same order: the state last but the tail.
 */
export function postSlot(view: DataView, i32: Int32Array, slots: number, position: number, offset: number, capacity: number): void {
  writePosted(view, i32, slotAt(SLOTS, position, slots, SLOT_SIZE), offset, capacity);
  Atomics.store(i32, POST_TAIL, (position + 1) | 0);
}

/**
 * postSlot for `count` slots from `position`, the same buffer in each (DPA consumers post
 * immediate-only receives in batches): the post tail moves once, after the last.
 */
export function postSlots(view: DataView, i32: Int32Array, slots: number, position: number, offset: number, capacity: number, count: number): void {
  for (let i = 0; i < count; i++) writePosted(view, i32, slotAt(SLOTS, (position + i) | 0, slots, SLOT_SIZE), offset, capacity);
  Atomics.store(i32, POST_TAIL, (position + count) | 0);
}

/**
 * A posted buffer's fields into the slot at byte `at`, its state last. A function apart from postSlot so
 * that the CPU consumer's one-slot post stays small enough for V8 to inline into the submit path.
 */
function writePosted(view: DataView, i32: Int32Array, at: number, offset: number, capacity: number): void {
  view.setUint32(at + SLOT_CAPACITY, capacity, true);
  view.setFloat64(at + SLOT_OFFSET, offset, true);
  view.setUint32(at + SLOT_CLAIMER, 0, true);
  Atomics.store(i32, (at + SLOT_STATE) / 4, POSTED);
}

/** A filled slot, as the consumer reads it; `bad` names what the producer got wrong. */
export interface Filled {
  length: number;
  producerId: number;
  /** Where the slot's immediate data lies in the segment, and its length (0 when bad or none). */
  immAt: number;
  immLen: number;
  bad: string | undefined;
}

/** The consumer's side of its queue. */
export class ConsumerQueue {
  readonly segment: Segment;
  readonly slots: number;
  private tail: number;
  private head: number;
  private readonly mask: number;
  /** The segment's words: a filled slot's immediate data is read through it (ImmData.copyFrom). */
  readonly view: DataView;
  private readonly i32: Int32Array;
  /** What was posted in each slot, as this side knows it (never read back from shared memory). */
  private readonly capacity: number[];
  private readonly result: Filled = { length: 0, producerId: 0, immAt: 0, immLen: 0, bad: undefined };

  constructor(posted: number, private readonly immLen: number) {
    this.slots = powerOfTwoAtLeast(posted);
    this.mask = this.slots - 1;
    this.segment = Segment.create('consumer', SLOTS - SEGMENT_HEADER_SIZE + this.slots * SLOT_SIZE);
    this.view = new DataView(this.segment.u8.buffer);
    this.i32 = this.segment.i32;
    this.capacity = new Array<number>(this.slots).fill(0);
    this.tail = this.head = startPosition();
    this.view.setUint32(OFF_VERSION, VERSION, true);
    this.view.setUint32(OFF_SLOTS, this.slots, true);
    Atomics.store(this.i32, POST_TAIL, this.tail);
    Atomics.store(this.i32, CLAIM_HEAD, this.head);
    Atomics.store(this.i32, OFF_MAGIC / 4, MAGIC);
  }

  /** Appends a posted buffer; the caller never has more than `slots` outstanding. */
  post(offset: number, capacity: number): void {
    this.capacity[(this.tail & this.mask) >>> 0] = capacity;
    postSlot(this.view, this.i32, this.slots, this.tail, offset, capacity);
    this.tail = (this.tail + 1) | 0;
  }

  /**
   * The oldest posted buffer if a producer filled it, else undefined (the object is reused: read it at
   * once). A value outside what was posted is reported in `bad`, not used.
   */
  filled(): Filled | undefined {
    if (this.head === this.tail) return undefined;
    const at = this.at(this.head);
    if (Atomics.load(this.i32, (at + SLOT_STATE) / 4) !== FILLED) return undefined;
    const r = this.result;
    const length = this.view.getUint32(at + SLOT_LENGTH, true);
    const immLen = this.view.getUint32(at + SLOT_IMM_LEN, true);
    const capacity = this.capacity[(this.head & this.mask) >>> 0]!;
    r.length = length;
    r.producerId = this.view.getUint32(at + SLOT_PRODUCER, true);
    r.bad = length > capacity || immLen > Math.min(MAX_IMM, this.immLen) || r.producerId === 0 ? this.badFill(length, capacity, immLen) : undefined;
    r.immAt = at + SLOT_IMM;
    r.immLen = r.bad === undefined ? immLen : 0;
    return r;
  }

  /**
   * The oldest posted buffer when a producer claimed it but has not filled it: its claimer (entry + 1,
   * 0 while not yet written). Undefined when it is filled, or not claimed.
   */
  claimedBy(): number | undefined {
    if (this.head === this.tail || ((Atomics.load(this.i32, CLAIM_HEAD) - this.head) | 0) <= 0) return undefined;
    const at = this.at(this.head);
    const state = Atomics.load(this.i32, (at + SLOT_STATE) / 4);
    if (state === FILLED) return undefined;
    return state === CLAIMED ? this.view.getUint32(at + SLOT_CLAIMER, true) : 0;
  }

  /**
   * Frees the oldest slot after its completion was taken (or its claim was given up). Its state is left
   * as it is: nobody reads a slot outside [head, post tail), and its next post stores POSTED before the
   * tail reaches it (docs/protocol.md, Complete), so an EMPTY store would be a builtin call per message
   * that no reader needs.
   */
  release(): void {
    this.head = (this.head + 1) | 0;
  }

  /** The position of the oldest posted buffer (it moves on with every completion). */
  get headPosition(): number {
    return this.head;
  }

  /** Posted buffers not yet completed. */
  get outstanding(): number {
    return (this.tail - this.head) | 0;
  }

  /**
   * Withdraws every posted buffer not claimed yet (stopping): producers find nothing to claim any more.
   * Returns how many of the outstanding buffers were already claimed (they are still being filled).
   */
  withdraw(): number {
    for (;;) {
      const head = Atomics.load(this.i32, CLAIM_HEAD);
      if (Atomics.compareExchange(this.i32, CLAIM_HEAD, head, this.tail) === head) {
        const claimed = (head - this.head) | 0;
        return claimed >= 0 && claimed <= this.outstanding ? claimed : 0;
      }
    }
  }

  /** What a filled slot that failed a check of filled() got wrong (apart, so filled() stays small to inline). */
  private badFill(length: number, capacity: number, immLen: number): string {
    if (length > capacity) return `a producer reported ${length} bytes in a ${capacity}-byte buffer`;
    if (immLen > Math.min(MAX_IMM, this.immLen)) return `a producer reported ${immLen} bytes of immediate data (the consumer takes ${this.immLen})`;
    return 'a producer filled a buffer without its producer id';
  }

  private at(position: number): number {
    return slotAt(SLOTS, position, this.slots, SLOT_SIZE);
  }
}

export type ClaimResult = { slot: number; offset: number } | 'empty' | { tooSmall: number } | { bad: string };

/** A producer's view of a consumer's queue (mapped in the producer's thread). */
export class QueueView {
  private readonly view: DataView;
  private readonly i32: Int32Array;
  private readonly mask: number;
  private readonly claimed = { slot: 0, offset: 0 };
  /**
   * The post tail as last read: while it is ahead of the claim head, the buffers between are posted
   * (a tail only grows), so a claim need not read the tail, a word the consumer writes with every post:
   * a read of it per message is a cache line taken from the consumer per message.
   */
  private tail: number;

  /** Checks the header; throws a string naming what is wrong with a queue that cannot be one. */
  constructor(
    readonly segment: Segment,
    /** Size of the segment the posted buffers are in. */
    private readonly memorySize: number,
  ) {
    this.view = new DataView(segment.u8.buffer);
    this.i32 = segment.i32;
    const slots = this.view.getUint32(OFF_SLOTS, true);
    if (Atomics.load(this.i32, OFF_MAGIC / 4) !== MAGIC || this.view.getUint32(OFF_VERSION, true) !== VERSION) {
      throw new Error(`the consumer queue is not a queue of version ${VERSION}`);
    }
    if (!isPowerOfTwo(slots) || SLOTS + slots * SLOT_SIZE > segment.size) {
      throw new Error(`the consumer queue declares ${slots} slots in a ${segment.size}-byte segment`);
    }
    this.mask = slots - 1;
    this.tail = Atomics.load(this.i32, CLAIM_HEAD);
  }

  /** Whether the consumer has no posted buffer left to claim. */
  get empty(): boolean {
    return Atomics.load(this.i32, CLAIM_HEAD) === Atomics.load(this.i32, POST_TAIL);
  }

  /**
   * Takes the next posted buffer for a `length`-byte payload: 'empty' when none is posted, `tooSmall`
   * (with the buffer's capacity) when the next one cannot hold it, `bad` when the consumer wrote
   * something no buffer can be; nothing is taken in those cases. `claimer` is written into the slot.
   * A claim is one object the view reuses (nothing allocated per message): read it at once.
   */
  claim(length: number, claimer: number): ClaimResult {
    const i32 = this.i32;
    for (;;) {
      const head = Atomics.load(i32, CLAIM_HEAD);
      // A tail read before this head and still ahead of it bounds what is posted from head on: no more
      // than the slots (it is no later than the tail now), none claimed (the head is fresh).
      let waiting = (this.tail - head) | 0;
      if (waiting <= 0 || waiting > this.mask + 1) {
        const tail = Atomics.load(i32, POST_TAIL);
        if (Atomics.load(i32, CLAIM_HEAD) !== head) continue; // another producer claimed meanwhile: a stale pair proves nothing
        this.tail = tail;
        waiting = (tail - head) | 0;
        if (waiting === 0) return 'empty';
        if (waiting < 0 || waiting > this.mask + 1) return { bad: `its indices say ${waiting} buffers are posted in ${this.mask + 1} slots` };
      }
      const at = slotAt(SLOTS, head, this.mask + 1, SLOT_SIZE);
      const capacity = this.view.getUint32(at + SLOT_CAPACITY, true);
      const offset = this.view.getFloat64(at + SLOT_OFFSET, true);
      if (!Number.isInteger(offset) || offset < SEGMENT_HEADER_SIZE || offset + capacity > this.memorySize) {
        return { bad: `it posted a ${capacity}-byte buffer at byte ${offset} of a ${this.memorySize}-byte segment` };
      }
      if (length > capacity) return { tooSmall: capacity };
      if (Atomics.compareExchange(i32, CLAIM_HEAD, head, (head + 1) | 0) === head) {
        this.view.setUint32(at + SLOT_CLAIMER, claimer, true);
        Atomics.store(i32, (at + SLOT_STATE) / 4, CLAIMED);
        const claimed = this.claimed;
        claimed.slot = at;
        claimed.offset = offset;
        return claimed;
      }
    }
  }

  /** Publishes a claimed slot as filled, with `imm` (at most MAX_IMM bytes; the caller then rings the consumer). */
  fill(slot: number, length: number, producerId: number, imm: Uint8Array | undefined): void {
    this.view.setUint32(slot + SLOT_LENGTH, length, true);
    this.view.setUint32(slot + SLOT_PRODUCER, producerId, true);
    this.view.setUint32(slot + SLOT_IMM_LEN, imm?.length ?? 0, true);
    if (imm) copyInto(this.segment.u8, imm, slot + SLOT_IMM);
    Atomics.store(this.i32, (slot + SLOT_STATE) / 4, FILLED);
  }
}
