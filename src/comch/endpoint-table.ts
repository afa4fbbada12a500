/**
 * The endpoint table of a connection segment (layout.ts; a MsgQ's too): the connection's fast-path
 * state, consumer and producer ids, and one entry per producer and consumer, through which a consumer
 * (in any thread of its side) is announced to the peer by its side's context and found by the peer's
 * producers, and through which every endpoint is rung when something it waits for changes. The control
 * path does not go through it: a connection rings its peer with bells of its own (connection.ts).
 *
 * Every thread that attaches to a connection (a producer or consumer created from a
 * `ComchConnectionRef`) maps the segment once; attachments are shared per thread and counted.
 */
import { DocaError } from '../core/error.js';
import { type BellRef, PeerBell, publishBellRef, readBellRef, ringOnce } from '../fabric/doorbell.js';
import { isAlive, recentlyAlive, selfThread, type ThreadIdentity } from '../fabric/liveness.js';
import { decodeDescriptor, descriptorKey, encodeDescriptor, Segment, type SegmentDescriptor } from '../fabric/segment.js';
import { CONN_CLOSED, CONN_CONNECTED, CONSUMER, type ConnLayout, ENTRY, entryOffset, FP, KIND_CONSUMER, KIND_PRODUCER, readLayout, SIDE, type Side, sideIndex } from './layout.js';

/** What a worker thread needs to create producers and consumers on a connection (structured-cloneable). */
export interface ComchConnectionRef {
  readonly segment: SegmentDescriptor;
  /** @internal Which end of the connection the endpoints made from it are on. */
  readonly side: Side;
  /** The owning context's connection id, for messages. */
  readonly id: number;
  /** The fabric directory (where a worker's endpoints publish their introspection). */
  readonly fabric?: string;
  /**
   * A MsgQ's endpoint table (msgq.ts), not a connection: no peer context relays consumers (they register
   * themselves), and endpoints carry immediate data only.
   */
  readonly msgq?: boolean;
  /** The device's fast-path capabilities, so a worker needs no device of its own. */
  readonly caps: {
    readonly maxNumTasks: number;
    readonly maxBufSize: number;
    readonly maxImmDataLen: number;
    readonly maxConsumers: number;
    readonly maxProducers: number;
  };
}

export class EndpointTable {
  readonly i32: Int32Array;
  private readonly view: DataView;
  /**
   * The two sides' contexts, rung when an endpoint asks its side to look at the table (the connection
   * itself rings its peer through bells of its own).
   */
  private readonly sideBells: Record<Side, PeerBell>;
  /** Called after this thread reserved or released an entry (a MsgQ counts its endpoints for observers). */
  onChange: (() => void) | undefined;

  constructor(
    readonly segment: Segment,
    readonly layout: ConnLayout,
  ) {
    this.i32 = segment.i32;
    this.view = new DataView(segment.u8.buffer);
    this.sideBells = { server: PeerBell.at(segment, SIDE.BELL('server'), 'comch endpoint table'), client: PeerBell.at(segment, SIDE.BELL('client'), 'comch endpoint table') };
  }

  get connected(): boolean {
    return !this.segment.closed && Atomics.load(this.i32, FP.STATE / 4) === CONN_CONNECTED;
  }

  /** Marks the connection closed and rings every endpoint of both sides (they fail or finish stopping). */
  close(): void {
    if (this.segment.closed) return;
    Atomics.store(this.i32, FP.STATE / 4, CONN_CLOSED);
    for (let i = 0; i < this.layout.entries; i++) if (this.state(i) !== CONSUMER.FREE) ringOnce(this.endpointBell(i), 'comch connection close');
  }

  state(index: number): number {
    return Atomics.load(this.i32, (entryOffset(index) + ENTRY.STATE) / 4);
  }

  setState(index: number, state: number): void {
    Atomics.store(this.i32, (entryOffset(index) + ENTRY.STATE) / 4, state);
  }

  /** Moves an entry from `from` to `to` unless another thread moved it first; true if it did. */
  casState(index: number, from: number, to: number): boolean {
    return Atomics.compareExchange(this.i32, (entryOffset(index) + ENTRY.STATE) / 4, from, to) === from;
  }

  /** Rings an endpoint (a consumer waiting for its registration or expiry, which another thread made). */
  ringEndpoint(index: number): void {
    ringOnce(this.endpointBell(index), 'comch endpoint');
  }

  id(index: number): number {
    return this.view.getUint32(entryOffset(index) + ENTRY.ID, true);
  }

  side(index: number): Side {
    return this.view.getUint32(entryOffset(index) + ENTRY.SIDE, true) === 0 ? 'server' : 'client';
  }

  isConsumer(index: number): boolean {
    return this.view.getUint32(entryOffset(index) + ENTRY.KIND, true) === KIND_CONSUMER;
  }

  generation(index: number): number {
    return Atomics.load(this.i32, (entryOffset(index) + ENTRY.GENERATION) / 4);
  }

  immLen(index: number): number {
    return this.view.getUint32(entryOffset(index) + ENTRY.IMM_LEN, true);
  }

  queue(index: number): SegmentDescriptor {
    return decodeDescriptor(this.view, entryOffset(index) + ENTRY.QUEUE, 'comch consumer table');
  }

  memory(index: number): SegmentDescriptor {
    return decodeDescriptor(this.view, entryOffset(index) + ENTRY.MEMORY, 'comch consumer table');
  }

  /** The bell an endpoint published, or undefined (none yet, or one that cannot be valid). */
  endpointBell(index: number): BellRef | undefined {
    try {
      return readBellRef(this.segment, entryOffset(index) + ENTRY.BELL, 'comch endpoint');
    } catch {
      return undefined;
    }
  }

  /** Consumers of `side` that exist (created and not destroyed) and whose thread runs. */
  consumers(side: Side): number {
    return this.count(side, KIND_CONSUMER, true);
  }

  producers(side: Side): number {
    return this.count(side, KIND_PRODUCER, true);
  }

  /**
   * Reserves an entry and an id for a new endpoint of `side`, owned by this thread; NO_MEMORY beyond
   * `max` of that kind per side, or when the table is full. Its side's context is rung, so that it
   * watches the owner (a worker that ends without destroying it is reaped).
   */
  reserve(side: Side, kind: 'consumer' | 'producer', max: number, call: string): { index: number; id: number } {
    const k = kind === 'consumer' ? KIND_CONSUMER : KIND_PRODUCER;
    if (this.count(side, k, false) >= max) throw new DocaError('NO_MEMORY', call, `the connection already has its maximum of ${max} ${kind}s on this side`);
    for (let i = 0; i < this.layout.entries; i++) {
      const at = (entryOffset(i) + ENTRY.STATE) / 4;
      if (Atomics.compareExchange(this.i32, at, CONSUMER.FREE, CONSUMER.RESERVING) !== CONSUMER.FREE) continue;
      const base = entryOffset(i);
      const id = Atomics.add(this.i32, (k === KIND_CONSUMER ? FP.LAST_CONSUMER_ID : FP.LAST_PRODUCER_ID) / 4, 1) + 1;
      this.view.setUint32(base + ENTRY.ID, id, true);
      this.view.setUint32(base + ENTRY.SIDE, sideIndex(side), true);
      this.view.setUint32(base + ENTRY.KIND, k, true);
      this.view.setUint32(base + ENTRY.OWNER, selfThread.pid, true);
      this.view.setUint32(base + ENTRY.OWNER + 4, selfThread.tid, true);
      this.view.setFloat64(base + ENTRY.OWNER + 8, selfThread.start, true);
      this.view.setFloat64(base + ENTRY.OWNER + 16, selfThread.tstart, true);
      Atomics.store(this.i32, at, CONSUMER.CREATED);
      this.ringOwner(side);
      this.onChange?.();
      return { index: i, id };
    }
    throw new DocaError('NO_MEMORY', call, `the connection's endpoint table (${this.layout.entries} entries) is full`);
  }

  /** The thread that owns entry `index` (as it wrote itself). */
  owner(index: number): ThreadIdentity {
    const base = entryOffset(index) + ENTRY.OWNER;
    return { pid: this.view.getUint32(base, true), tid: this.view.getUint32(base + 4, true), start: this.view.getFloat64(base + 8, true), tstart: this.view.getFloat64(base + 16, true) };
  }

  /**
   * Whether entry `index` belongs to a thread that still runs (a dead one's endpoint is reaped). `exact`
   * reads /proc now, for a decision that refuses a call (IN_USE); else an answer up to 20 ms old will do.
   */
  ownerAlive(index: number, exact = false): boolean {
    const o = this.owner(index);
    return Number.isSafeInteger(o.start) && Number.isSafeInteger(o.tstart) && (exact ? isAlive(o) : recentlyAlive(o));
  }

  /**
   * Reclaims what dead threads of `side` held: their producers' entries are freed, their consumers are
   * expired (announced to the peer like a stop, then freed). Call from `side`'s context.
   */
  reap(side: Side): void {
    for (let i = 0; i < this.layout.entries; i++) {
      const state = this.state(i);
      if (state === CONSUMER.FREE || state === CONSUMER.RESERVING || this.side(i) !== side || this.ownerAlive(i)) continue;
      const announced = state === CONSUMER.REQUESTED || state === CONSUMER.ANNOUNCED || state === CONSUMER.REGISTERED;
      if (this.isConsumer(i) && announced) {
        Atomics.compareExchange(this.i32, (entryOffset(i) + ENTRY.STATE) / 4, state, CONSUMER.EXPIRING);
        Atomics.add(this.i32, FP.REQUEST_BELL[side] / 4, 1);
      } else if (state !== CONSUMER.EXPIRING) {
        this.release(i);
      }
    }
  }

  /** Publishes where an endpoint's engine is rung for it (once it is connected to one). */
  publishBell(index: number, bell: BellRef): void {
    publishBellRef(this.segment, entryOffset(index) + ENTRY.BELL, bell);
  }

  /** Frees an entry (its endpoint was destroyed). */
  release(index: number): void {
    if (this.segment.closed) return;
    Atomics.store(this.i32, (entryOffset(index) + ENTRY.BELL) / 4, 0);
    Atomics.store(this.i32, (entryOffset(index) + ENTRY.STATE) / 4, CONSUMER.FREE);
    this.onChange?.();
  }

  /** Fills a started consumer's entry in and asks its side's context to announce it. */
  request(index: number, side: Side, immLen: number, queue: SegmentDescriptor, memory: SegmentDescriptor): void {
    this.view.setUint32(entryOffset(index) + ENTRY.IMM_LEN, immLen, true);
    encodeDescriptor(queue, this.view, entryOffset(index) + ENTRY.QUEUE);
    encodeDescriptor(memory, this.view, entryOffset(index) + ENTRY.MEMORY);
    Atomics.add(this.i32, (entryOffset(index) + ENTRY.GENERATION) / 4, 1);
    Atomics.store(this.i32, (entryOffset(index) + ENTRY.STATE) / 4, CONSUMER.REQUESTED);
    this.ringOwner(side);
  }

  /**
   * Asks `side`'s context to look at the table (a consumer started or stopped). Nothing rings while the
   * context has not published its bell yet: it looks at the connection once when it does.
   */
  ringOwner(side: Side): void {
    Atomics.add(this.i32, FP.REQUEST_BELL[side] / 4, 1);
    this.ringSide(side);
  }

  /** Rings `side`'s context for this connection. */
  ringSide(side: Side): void {
    this.sideBells[side].ring();
  }

  /** The entry of the consumer with `id`, or -1. */
  find(id: number): number {
    for (let i = 0; i < this.layout.entries; i++) {
      const state = this.state(i);
      if (state !== CONSUMER.FREE && state !== CONSUMER.RESERVING && this.isConsumer(i) && this.id(i) === id) return i;
    }
    return -1;
  }

  /** Lets go of the bells this table opened (the connection or the attachment ends). */
  releaseBells(): void {
    this.sideBells.server.release();
    this.sideBells.client.release();
  }

  private count(side: Side, kind: number, liveOnly: boolean): number {
    let n = 0;
    const s = sideIndex(side);
    for (let i = 0; i < this.layout.entries; i++) {
      const base = entryOffset(i);
      const state = this.state(i);
      if (state === CONSUMER.FREE || (liveOnly && state === CONSUMER.RESERVING)) continue;
      if (this.view.getUint32(base + ENTRY.SIDE, true) !== s || this.view.getUint32(base + ENTRY.KIND, true) !== kind) continue;
      // What a dead thread created went with it, the moment it died (not 20 ms later): exact.
      if (!liveOnly || this.ownerAlive(i, true)) n++;
    }
    return n;
  }
}

interface Attachment {
  table: EndpointTable;
  refs: number;
}

const attached = new Map<string, Attachment>();

/** Maps a connection's segment in this thread (shared by the thread's producers and consumers). */
export function attach(ref: ComchConnectionRef, call: string): EndpointTable {
  const key = descriptorKey(ref.segment);
  const known = attached.get(key);
  if (known && !known.table.segment.closed) {
    known.refs++;
    return known.table;
  }
  let segment: Segment;
  try {
    segment = Segment.open(ref.segment, call, ['conn']);
  } catch (err) {
    throw new DocaError('BAD_STATE', call, `connection ${ref.id} is not established (${(err as Error).message})`);
  }
  const layout = readLayout(segment);
  if (!layout) {
    segment.close();
    throw new DocaError('INVALID_VALUE', call, 'the connection reference does not name a comch connection');
  }
  const table = new EndpointTable(segment, layout);
  attached.set(key, { table, refs: 1 });
  return table;
}

/** Releases an attachment; the mapping goes with the last one. */
export function detach(table: EndpointTable): void {
  for (const [key, a] of attached) {
    if (a.table !== table) continue;
    if (--a.refs === 0) {
      attached.delete(key);
      table.releaseBells();
      table.segment.close();
    }
    return;
  }
}
