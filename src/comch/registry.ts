/**
 * The fast-path registry in a connection segment (layout.ts): the connection's state, consumer and
 * producer ids, and the consumer table through which a consumer (in any thread of its side) is
 * announced to the peer by its side's context, and found by the peer's producers.
 *
 * Every thread that attaches to a connection (a producer or consumer created from a
 * `ComchConnectionRef`) maps the segment once; attachments are shared per thread and counted.
 */
import { DocaError } from '../core/error.js';
import { decodeDescriptor, descriptorKey, encodeDescriptor, Segment, type SegmentDescriptor } from '../fabric/segment.js';
import { CONN_CLOSED, CONN_CONNECTED, CONSUMER, type ConnLayout, ENTRY, entryOffset, FP, readLayout, type Side, sideIndex } from './layout.js';

/** What a worker thread needs to create producers and consumers on a connection (structured-cloneable). */
export interface ComchConnectionRef {
  readonly segment: SegmentDescriptor;
  readonly side: Side;
  /** The owning context's connection id, for messages. */
  readonly id: number;
  /** The device's fast-path capabilities, so a worker needs no device of its own. */
  readonly caps: {
    readonly maxNumTasks: number;
    readonly maxBufSize: number;
    readonly maxImmDataLen: number;
    readonly maxConsumers: number;
    readonly maxProducers: number;
  };
}

export class Registry {
  readonly i32: Int32Array;
  private readonly view: DataView;

  constructor(
    readonly segment: Segment,
    readonly layout: ConnLayout,
  ) {
    this.i32 = segment.i32;
    this.view = new DataView(segment.u8.buffer);
  }

  get connected(): boolean {
    return !this.segment.closed && Atomics.load(this.i32, FP.STATE / 4) === CONN_CONNECTED;
  }

  /** Marks the connection closed and wakes everything waiting on it (the owner, as it ends it). */
  close(): void {
    Atomics.store(this.i32, FP.STATE / 4, CONN_CLOSED);
    this.segment.wake(FP.STATE);
  }

  state(index: number): number {
    return Atomics.load(this.i32, (entryOffset(index) + ENTRY.STATE) / 4);
  }

  /** Sets an entry's state and wakes whoever waits on it (its consumer). */
  setState(index: number, state: number): void {
    Atomics.store(this.i32, (entryOffset(index) + ENTRY.STATE) / 4, state);
    this.segment.wake(entryOffset(index) + ENTRY.STATE);
  }

  id(index: number): number {
    return this.view.getUint32(entryOffset(index) + ENTRY.ID, true);
  }

  side(index: number): Side {
    return this.view.getUint32(entryOffset(index) + ENTRY.SIDE, true) === 0 ? 'server' : 'client';
  }

  generation(index: number): number {
    return Atomics.load(this.i32, (entryOffset(index) + ENTRY.GENERATION) / 4);
  }

  immLen(index: number): number {
    return this.view.getUint32(entryOffset(index) + ENTRY.IMM_LEN, true);
  }

  queue(index: number): SegmentDescriptor {
    return decodeDescriptor(this.view, entryOffset(index) + ENTRY.QUEUE, 'comch consumer registry');
  }

  memory(index: number): SegmentDescriptor {
    return decodeDescriptor(this.view, entryOffset(index) + ENTRY.MEMORY, 'comch consumer registry');
  }

  /** Consumers of `side` that exist (created and not destroyed). */
  consumers(side: Side): number {
    let n = 0;
    for (let i = 0; i < this.layout.entries; i++) if (this.state(i) !== CONSUMER.FREE && this.side(i) === side) n++;
    return n;
  }

  producers(side: Side): number {
    return Atomics.load(this.i32, FP.PRODUCERS[side] / 4);
  }

  /** Reserves an entry and an id for a new consumer of `side`; NO_MEMORY beyond `max` per side. */
  reserve(side: Side, max: number, call: string): { index: number; id: number } {
    if (this.consumers(side) >= max) throw new DocaError('NO_MEMORY', call, `the connection already has its maximum of ${max} consumers on this side`);
    for (let i = 0; i < this.layout.entries; i++) {
      const at = (entryOffset(i) + ENTRY.STATE) / 4;
      if (Atomics.compareExchange(this.i32, at, CONSUMER.FREE, CONSUMER.CREATED) === CONSUMER.FREE) {
        const id = Atomics.add(this.i32, FP.LAST_CONSUMER_ID / 4, 1) + 1;
        this.view.setUint32(entryOffset(i) + ENTRY.ID, id, true);
        this.view.setUint32(entryOffset(i) + ENTRY.SIDE, sideIndex(side), true);
        return { index: i, id };
      }
    }
    throw new DocaError('NO_MEMORY', call, `the connection's consumer table (${this.layout.entries} entries) is full`);
  }

  /** Fills a started consumer's entry in and asks its side's context to announce it. */
  request(index: number, side: Side, immLen: number, queue: SegmentDescriptor, memory: SegmentDescriptor): void {
    this.view.setUint32(entryOffset(index) + ENTRY.IMM_LEN, immLen, true);
    encodeDescriptor(queue, this.view, entryOffset(index) + ENTRY.QUEUE);
    encodeDescriptor(memory, this.view, entryOffset(index) + ENTRY.MEMORY);
    Atomics.add(this.i32, (entryOffset(index) + ENTRY.GENERATION) / 4, 1);
    this.setState(index, CONSUMER.REQUESTED);
    this.ringOwner(side);
  }

  /** Asks `side`'s context to look at the table (a consumer started or stopped). */
  ringOwner(side: Side): void {
    Atomics.add(this.i32, FP.REQUEST_BELL[side] / 4, 1);
    if (Atomics.load(this.i32, FP.OWNER_SLEEPING[side] / 4) !== 0) this.segment.wake(FP.REQUEST_BELL[side]);
  }

  /** The entry of the consumer with `id`, or -1. */
  find(id: number): number {
    for (let i = 0; i < this.layout.entries; i++) if (this.state(i) !== CONSUMER.FREE && this.id(i) === id) return i;
    return -1;
  }

  /** Allocates a producer id, counting it against `max` for `side` (NO_MEMORY beyond). */
  addProducer(side: Side, max: number, call: string): number {
    if (Atomics.add(this.i32, FP.PRODUCERS[side] / 4, 1) >= max) {
      Atomics.sub(this.i32, FP.PRODUCERS[side] / 4, 1);
      throw new DocaError('NO_MEMORY', call, `the connection already has its maximum of ${max} producers on this side`);
    }
    return Atomics.add(this.i32, FP.LAST_PRODUCER_ID / 4, 1) + 1;
  }

  removeProducer(side: Side): void {
    Atomics.sub(this.i32, FP.PRODUCERS[side] / 4, 1);
  }
}

interface Attachment {
  registry: Registry;
  refs: number;
}

const attached = new Map<string, Attachment>();
const keyOf = descriptorKey;

/** Maps a connection's segment in this thread (shared by the thread's producers and consumers). */
export function attach(ref: ComchConnectionRef, call: string): Registry {
  const key = keyOf(ref.segment);
  const known = attached.get(key);
  if (known && !known.registry.segment.closed) {
    known.refs++;
    return known.registry;
  }
  let segment: Segment;
  try {
    segment = Segment.open(ref.segment, call);
  } catch (err) {
    throw new DocaError('BAD_STATE', call, `connection ${ref.id} is not established (${(err as Error).message})`);
  }
  const layout = readLayout(segment);
  if (!layout) {
    segment.close();
    throw new DocaError('INVALID_VALUE', call, 'the connection reference does not name a comch connection');
  }
  const registry = new Registry(segment, layout);
  attached.set(key, { registry, refs: 1 });
  return registry;
}

/** Releases an attachment; the mapping goes with the last one (once no wait is pending on it). */
export function detach(registry: Registry): void {
  for (const [key, a] of attached) {
    if (a.registry !== registry) continue;
    if (--a.refs === 0) {
      attached.delete(key);
      try {
        registry.segment.close();
      } catch {
        // a cancelled wait is still being delivered; the finalizer unmaps it later
      }
    }
    return;
  }
}
