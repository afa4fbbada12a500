/**
 * The entries of a DPA's object table (layout.ts), by kind: the fields after the common state,
 * generation and kind words. The owner (the CPU thread that created the DPA) allocates and configures
 * entries; EUs read them when they resolve a handle and update the words marked "EUs" below.
 * docs/protocol.md#object-table gives the layouts.
 *
 * Every cross-object reference is an object index plus the generation it had, so an EU that follows it
 * can tell a destroyed (or reused) target from the one that was configured.
 */
import { DocaError } from '../core/error.js';
import { FreeList } from '../core/free-list.js';
import type { Segment } from '../fabric/segment.js';
import { type DpaLayout, EU, makeHandle, OBJ, OBJECT_SIZE, WorkKind } from './layout.js';

/**
 * DPA thread (`doca_dpa_thread`). STATE is the thread state machine below. STATS: the slot + 1 of its
 * record in the owner's stats segment (0: none), whose activations counter the EU that runs it adds to.
 */
export const THREAD = { FUNC: 16, ARG: 24, LOCAL: 32, STATS: 40 } as const;
export const ThreadState = {
  FREE: 0,
  /** Configured, not started. */
  CREATED: 1,
  /** Started, not yet runnable (`doca_dpa_thread_run` not called): activations are remembered. */
  STARTED: 2,
  STARTED_PENDING: 3,
  /** Runnable, waiting for an activation. */
  IDLE: 4,
  /** Activated: its bit is set in the thread ready bitmap. */
  QUEUED: 5,
  /** An EU runs it; RUNNING_AGAIN: and it was activated meanwhile (it runs again after). */
  RUNNING: 6,
  RUNNING_AGAIN: 7,
  /** `thread_finish`: never activated again. */
  FINISHED: 8,
  /** Stopped by its owner while running: the EU stores STOPPED when the run ends. */
  STOPPING: 9,
  STOPPED: 10,
} as const;

/** Common to the objects that activate a thread: the thread and the generation it had. */
export const ATTACHED = { THREAD: 16, THREAD_GEN: 20, ARMED: 24 } as const;

/** `doca_dpa_completion`: a ring of elements (COMPLETION_ELEMENT) in the arena. */
export const COMPLETION = { SIZE: 28, RING: 32, RESERVE: 36, READ: 40, ACK: 44 } as const;
/** A completion ring element (16 bytes): the sequence (i32, position + 1 once written), then u32 type, user data and immediate. */
export const CQE = { SEQUENCE: 0, TYPE: 4, USER_DATA: 8, IMMEDIATE: 12 } as const;
export const CQE_SIZE = 16;
/** Largest queue of a completion or async ops (elements): element handles carry 16 bits of position. */
export const MAX_QUEUE = 1 << 16;

/** `doca_dpa_notification_completion`: only the attached thread (ATTACHED). */

/** `doca_dpa_async_ops`: posted waits (WAIT_SIZE each) in the arena, completing into a completion. */
export const ASYNC_OPS = { SIZE: 16, LIST: 20, COMPLETION: 24, COMPLETION_GEN: 28, USER_DATA: 32 } as const;
/** A posted wait: i32 state (WaitState), u32 op (WaitOp), u32 event index, i32 event generation, u32 value. */
export const WAIT = { STATE: 0, OP: 4, EVENT: 8, EVENT_GEN: 12, VALUE: 16 } as const;
export const WAIT_SIZE = 32;
/** A wait's state word: free, posted (its fields are whole), or being written by the poster. */
export const WaitState = { FREE: 0, POSTED: 1, WRITING: 2 } as const;
export const WaitOp = { GT: 1, NE: 2 } as const;

/** A sync event the DPA may use (`doca_sync_event_get_dpa_handle`). */
export const SYNC_EVENT = { CONTROL: 16, VALUE: 56, VALUE_OFFSET: 96, FLAGS: 104 } as const;
/** FLAGS: the DPA waits on it (its subscriber location is the DPA). */
export const SE_SUBSCRIBER = 1;

/** `doca_comch_consumer_completion`: consumers (i32 index + i32 generation each) and returned elements. */
export const CONSUMER_COMPLETION = { MAX_CONSUMERS: 28, MAX_RECV: 32, IMM_LEN: 36, LIST: 40, RETURNED: 44, RET_HEAD: 48, RET_TAIL: 52, CURSOR: 56 } as const;
/** A returned element: +0 i32 consumer index +4 i32 position in its queue. */
export const RETURNED_SIZE = 8;

/**
 * A DPA comch consumer (CPU -> DPA MsgQ): its receive queue is a consumer queue segment (QUEUE), its
 * entry in the MsgQ's endpoint table is found by its id in the MsgQ segment (MSGQ), where an EU also
 * looks up who claimed a receive (a producer that died before filling it) and ends the consumer.
 */
export const CONSUMER = { CC: 16, CC_GEN: 20, USER_DATA: 24, SLOTS: 28, IMM_LEN: 32, ID: 36, HEAD: 40, RELEASED: 44, QUEUE: 48, MSGQ: 88 } as const;

/** A DPA comch producer (DPA -> CPU MsgQ): finds its consumers in the MsgQ segment. */
export const PRODUCER = { COMPLETION: 16, COMPLETION_GEN: 20, ID: 24, MAX_SEND: 28, MSGQ: 32, MSGQ_ID: 72, ENTRY: 76 } as const;

/** Object entry state for the kinds other than threads. */
export const ObjState = { FREE: 0, CREATED: 1, STARTED: 2 } as const;

/**
 * The fields of the object table's entries, by index: what the owner's table and every thread's tables
 * (DpaTables, tables.ts) read and write alike.
 */
export class ObjectFields {
  readonly i32: Int32Array;
  readonly view: DataView;

  constructor(
    readonly segment: Segment,
    readonly layout: DpaLayout,
  ) {
    this.i32 = segment.i32;
    this.view = new DataView(segment.u8.buffer);
  }

  /** Byte offset of field `field` of entry `index`. */
  at(index: number, field: number): number {
    return this.layout.object(index) + field;
  }

  load(index: number, field: number): number {
    return Atomics.load(this.i32, (this.layout.object(index) + field) / 4);
  }

  /**
   * A plain read of a field another thread may be writing (docs/protocol.md, Conventions: plain reads):
   * for a check whose stale answer only delays seeing a change (a generation, a state, a fault word
   * compared with what was checked), never before reading what the field publishes. `load` is a
   * builtin call in Node 20's V8 (~10-17 ns); this is a move.
   */
  peek(index: number, field: number): number {
    return this.i32[(this.layout.object(index) + field) >> 2]!;
  }

  /** `peek` when `plain`, else `load`: for a check made plainly first and atomically again before it fails. */
  read(index: number, field: number, plain: boolean): number {
    return plain ? this.peek(index, field) : this.load(index, field);
  }

  store(index: number, field: number, value: number): void {
    Atomics.store(this.i32, (this.layout.object(index) + field) / 4, value);
  }
}

/**
 * The owner's side of the object table: allocation and the fields every entry has. A thread destroyed
 * while an execution unit still runs it (its stop timed out: a function that never returns) gives its
 * entry back only once no unit runs it any more (the EU table's work words), so that the unit, whenever
 * it comes back, finds a free entry and not another object at that index.
 */
export class ObjectTable extends ObjectFields {
  private readonly entries: FreeList;
  /** Freed entries an execution unit still runs. */
  private readonly held = new Set<number>();

  constructor(
    segment: Segment,
    layout: DpaLayout,
    private readonly tag: number,
  ) {
    super(segment, layout);
    this.entries = new FreeList(layout.dims.objects);
  }

  /** A new entry of `kind` (CREATED, a new generation); NO_MEMORY when the table is full. */
  allocate(kind: number, call: string): number {
    for (const index of this.held) {
      if (this.running(index)) continue;
      this.held.delete(index);
      this.entries.give(index);
    }
    const index = this.entries.take();
    if (index < 0) throw new DocaError('NO_MEMORY', call, `the DPA already holds its maximum of ${this.layout.dims.objects} objects`);
    const base = this.layout.object(index);
    this.segment.u8.fill(0, base + 12, base + OBJECT_SIZE);
    Atomics.add(this.i32, (base + OBJ.GEN) / 4, 1);
    this.view.setUint32(base + OBJ.KIND, kind, true);
    Atomics.store(this.i32, (base + OBJ.STATE) / 4, ObjState.CREATED);
    return index;
  }

  /** Frees an entry: its generation moves on, so every handle of it is refused from now on. */
  release(index: number): void {
    const base = this.layout.object(index);
    Atomics.add(this.i32, (base + OBJ.GEN) / 4, 1);
    Atomics.store(this.i32, (base + OBJ.STATE) / 4, ObjState.FREE);
    if (this.running(index)) this.held.add(index);
    else this.entries.give(index);
  }

  /** Whether an execution unit runs object `index` (a thread) now. */
  private running(index: number): boolean {
    const work = (WorkKind.THREAD << 24) | index;
    for (let eu = 0; eu < this.layout.dims.eus; eu++) if (Atomics.load(this.i32, (this.layout.eu(eu) + EU.RUNNING) / 4) === work) return true;
    return false;
  }

  handle(kind: number, index: number): bigint {
    return makeHandle(this.tag, kind, index, this.generation(index));
  }

  generation(index: number): number {
    return Atomics.load(this.i32, (this.layout.object(index) + OBJ.GEN) / 4);
  }

  state(index: number): number {
    return Atomics.load(this.i32, (this.layout.object(index) + OBJ.STATE) / 4);
  }

  setState(index: number, state: number): void {
    Atomics.store(this.i32, (this.layout.object(index) + OBJ.STATE) / 4, state);
  }
}
