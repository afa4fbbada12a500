/**
 * The comch MsgQ device API (doca_dpa_dev_comch_msgq.h): DPA consumers and their completion contexts
 * (CPU -> DPA), DPA producers (DPA -> CPU). DPA code is the consumer side of a consumer queue
 * (comch/consumer-queue.ts: its positions live in shared state, since each activation may run on
 * another EU, but slots are posted by postSlots, the batch form of the `postSlot` CPU consumers use)
 * and the producer side of the CPU consumers' queues (through `QueueView`, as CPU producers fill them).
 *
 * `consumer_ack(n)` posts n receives (credits for the CPU's producers), never more than the queue holds.
 * `get_completion` returns filled receives in order per consumer, round robin over the completion
 * context's consumers; `completion_ack(n)` frees the n oldest returned, which `consumer_ack` can then
 * post again. Immediate data views are copies, valid until the completion is acked: then their memory
 * is detached (reads give nothing), never silently reused.
 *
 * A producer send that cannot be delivered (no such consumer, no posted receive) completes with
 * SEND_ERR on the producer's DPA completion; wrong use (more than 32 bytes, a bad handle, unknown
 * flags, a full completion queue) throws instead, and nothing is sent.
 */
import { CLAIM_LOOK_POLLS, MAX_IMM, postSlots, QUEUE_LAYOUT as Q, QueueView } from '../../comch/consumer-queue.js';
import { CONSUMER as ENTRY_STATE } from '../../comch/layout.js';
import { attach, detach, type EndpointTable } from '../../comch/endpoint-table.js';
import { AccessFlag } from '../../core/mmap.js';
import { DocaError } from '../../core/error.js';
import { PeerBell } from '../../fabric/doorbell.js';
import { isPowerOfTwo, slotAt } from '../../fabric/positions.js';
import { decodeDescriptor, descriptorKey, Segment, SEGMENT_HEADER_SIZE } from '../../fabric/segment.js';
import { activateAttached, armed, CompletionType, cqPending, postCqe, requestNotification } from '../cq.js';
import { withdrawPosted } from '../consumer-queue.js';
import { OBJ, ObjKind } from '../layout.js';
import { ATTACHED, COMPLETION, CONSUMER, CONSUMER_COMPLETION, MAX_QUEUE, ObjState, PRODUCER, RETURNED_SIZE } from '../objects.js';
import { SubmitFlag } from './core.js';
import { current, type Eu, u32, u64 } from './runtime.js';
import type { DpaTables } from '../tables.js';

/** Consumers of one completion context (dpa/consumer-completion.ts takes at most this many). */
const MAX_CONSUMERS = 1 << 10;
/** How long a claim without the claimer's name may wait before it is taken for a dead producer's (as comch/consumer.ts). */
const ANONYMOUS_CLAIM_MS = 1000;
const NO_CAPS = { maxNumTasks: 0, maxBufSize: 0, maxImmDataLen: MAX_IMM, maxConsumers: 0, maxProducers: 0 };
/** DOCA: DMA addresses must be 128-byte aligned (unaligned ones corrupt data or hang the DPA). */
const DMA_ALIGN = 128n;
/** Bytes of a WebAssembly memory page. */
const PAGE = 65536;
const WRITE = AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE | AccessFlag.RDMA_WRITE;

interface Queue {
  generation: number;
  segment: Segment;
  i32: Int32Array;
  view: DataView;
  slots: number;
}

interface Target {
  index: number;
  generation: number;
  id: number;
  queue: QueueView;
  memory: Segment;
  bell: PeerBell;
  immLen: number;
}

interface Producer {
  generation: number;
  table: EndpointTable;
  targets: Map<number, Target>;
}

/**
 * A consumer completion context as this EU checked it: its geometry (the words the owner wrote at its
 * start, checked once per value of them and of its generation; later calls compare the words), and the
 * immediate data views handed out for it.
 */
interface Cc {
  generation: number;
  /** MAX_RECV, RETURNED, MAX_CONSUMERS and LIST as read (and checked). */
  max: number;
  base: number;
  consumers: number;
  list: number;
  /** Immediate data copies: one MAX_IMM-byte place per returned ring position, in a memory detached (`grow(0)`) once the context changes. */
  memory: WebAssemblyMemory | undefined;
  /** Views of those places, by place * (MAX_IMM + 1) + length, made once each. */
  views: (Uint8Array | undefined)[];
}

interface State {
  /** By object index. */
  queues: (Queue | undefined)[];
  producers: (Producer | undefined)[];
  ccs: (Cc | undefined)[];
  /** The contexts of `ccs` whose views are out (to detach them once the context changes). */
  withViews: number[];
  /** DPA consumers' MsgQs (to find who claimed a receive, and to expire an ended consumer). */
  registries: Map<number, { generation: number; table: EndpointTable }>;
  /** Claims without a claimer's name, by consumer, generation and position: when this unit first saw them. */
  anonymous: Map<string, number>;
  /** claimLookDue's cadence: get_completion calls, and the run whose first call looked. */
  polls: number;
  lookedRun: number;
}

/** The WebAssembly memory API (only its Memory is used here; the project's lib settings omit the namespace). */
declare const WebAssembly: { Memory: new (size: { initial: number; maximum: number }) => WebAssemblyMemory };
interface WebAssemblyMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

const state = (eu: Eu): State => (eu.comch ??= { queues: [], producers: [], ccs: [], withViews: [], registries: new Map(), anonymous: new Map(), polls: 0, lookedRun: -1 }) as State;

/** Whether this get_completion looks at an unfilled head's claim: the first call of each run, then one in CLAIM_LOOK_POLLS. */
function claimLookDue(eu: Eu): boolean {
  const comch = state(eu);
  if (comch.lookedRun !== eu.runs) {
    comch.lookedRun = eu.runs;
    return true;
  }
  return (++comch.polls & (CLAIM_LOOK_POLLS - 1)) === 0;
}

// ---- consumers -----------------------------------------------------------------------------------

/** The queue segment of DPA consumer `consumer`, mapped in this EU (once per start) and checked. */
function queueOf(eu: Eu, consumer: number, call: string): Queue {
  const comch = state(eu);
  const known = comch.queues[consumer];
  if (known !== undefined && known.generation === eu.dpa.peek(consumer, OBJ.GEN) && !known.segment.closed) return known;
  const generation = eu.dpa.load(consumer, OBJ.GEN); // before the words it publishes are read
  if (known) {
    known.segment.close();
    comch.queues[consumer] = undefined;
  }
  const segment = Segment.open(decodeDescriptor(eu.dpa.view, eu.dpa.at(consumer, CONSUMER.QUEUE), call), call, ['consumer']);
  const slots = eu.dpa.u32(consumer, CONSUMER.SLOTS);
  try {
    new QueueView(segment, segment.size); // checks the header
    if (new DataView(segment.u8.buffer).getUint32(Q.SLOT_COUNT, true) !== slots) throw new Error(`it holds another number of slots than the ${slots} configured`);
  } catch (err) {
    segment.close();
    throw new DocaError('UNEXPECTED', call, `the consumer's queue is unusable: ${(err as Error).message}`);
  }
  const queue: Queue = { generation, segment, i32: segment.i32, view: new DataView(segment.u8.buffer), slots };
  comch.queues[consumer] = queue;
  return queue;
}

/** The byte offset of `position`'s slot in `queue`. */
const slotOf = (queue: Queue, position: number) => slotAt(Q.SLOTS, position, queue.slots, Q.SLOT_SIZE);

/** `doca_dpa_dev_comch_consumer_ack`: posts `n` immediate-only receives; INVALID_VALUE (none posted) beyond the queue. */
export function comchConsumerAck(consumerHandle: bigint, n: number | bigint): void {
  const call = 'doca_dpa_dev_comch_consumer_ack';
  const eu = current(call);
  const consumer = eu.dpa.resolve(consumerHandle, ObjKind.CONSUMER, call);
  const count = u32(call, 'num_msg', n);
  const queue = queueOf(eu, consumer, call);
  if (!positionsHold(eu, consumer, queue, call)) eu.dpa.checkFault(consumer, call);
  const { tail } = positions;
  const outstanding = (tail - positions.released) | 0;
  if (outstanding + count > queue.slots) {
    throw new DocaError('INVALID_VALUE', call, `cannot post ${count} receives: ${outstanding} of the queue's ${queue.slots} are posted or not yet acked`);
  }
  post(queue, tail, count);
}

/**
 * Completion context `cc` as checked (`Cc`): not ended; its consumer list and returned ring in the arena,
 * at most MAX_CONSUMERS consumers and a power of two of receives up to MAX_QUEUE (else UNEXPECTED).
 */
function ccOf(eu: Eu, cc: number, call: string): Cc {
  const dpa = eu.dpa;
  dpa.checkFault(cc, call);
  const comch = state(eu);
  const known = comch.ccs[cc];
  // Plain reads, compared with what was checked (ObjectFields.peek); the words are read again after an atomic load otherwise.
  const peeked = dpa.peek(cc, OBJ.GEN);
  if (known !== undefined && known.generation === peeked && known.max === dpa.u32(cc, CONSUMER_COMPLETION.MAX_RECV) && known.base === dpa.u32(cc, CONSUMER_COMPLETION.RETURNED) && known.consumers === dpa.u32(cc, CONSUMER_COMPLETION.MAX_CONSUMERS) && known.list === dpa.u32(cc, CONSUMER_COMPLETION.LIST)) return known;
  const generation = dpa.load(cc, OBJ.GEN);
  const max = dpa.u32(cc, CONSUMER_COMPLETION.MAX_RECV);
  const base = dpa.u32(cc, CONSUMER_COMPLETION.RETURNED);
  const consumers = dpa.u32(cc, CONSUMER_COMPLETION.MAX_CONSUMERS);
  const list = dpa.u32(cc, CONSUMER_COMPLETION.LIST);
  if (known?.generation === generation && known.max === max && known.base === base && known.consumers === consumers && known.list === list) return known;
  if (consumers < 1 || consumers > MAX_CONSUMERS) throw new DocaError('UNEXPECTED', call, `the completion context's entry names ${consumers} consumers, not 1 to ${MAX_CONSUMERS}`);
  dpa.arenaRange(list, consumers * 8, "the completion context's consumer list", call);
  if (!isPowerOfTwo(max) || max > MAX_QUEUE) throw new DocaError('UNEXPECTED', call, `the completion context's entry names ${max} receives, not a power of two up to ${MAX_QUEUE}`);
  dpa.arenaRange(base, max * RETURNED_SIZE, "the completion context's returned ring", call);
  if (known) forgetViews(known);
  const checked: Cc = { generation, max, base, consumers, list, memory: undefined, views: [] };
  comch.ccs[cc] = checked;
  return checked;
}

/** Detaches the immediate data views handed out for a context that changed (or of an EU that leaves). */
function forgetViews(c: Cc): void {
  c.memory?.grow(0);
  c.memory = undefined;
  c.views.length = 0;
}

/**
 * The consumer at place `i` of context `c`'s list if it is started, of this incarnation, and not ended;
 * -1 otherwise (a free place, or one another thread wrote: the list's words are checked on every use).
 */
function listed(eu: Eu, c: Cc, i: number): number {
  const dpa = eu.dpa;
  const at = (c.list + i * 8) >> 2;
  const consumer = dpa.i32[at]! - 1; // plain reads: checks (ObjectFields.peek)
  if (consumer >= 0 && dpa.live(consumer, dpa.i32[at + 1]!, true) && dpa.u32(consumer, OBJ.KIND) === ObjKind.CONSUMER && dpa.peek(consumer, OBJ.STATE) === ObjState.STARTED && !dpa.faulted(consumer)) return consumer;
  return -1;
}

/**
 * What waits at `consumer`'s head (its oldest receive not yet returned): the byte offset of a filled
 * one, DEAD for one a producer claimed and died before filling (only when `look`: claimLookDue), or -1
 * for nothing yet.
 */
function atHead(eu: Eu, consumer: number, queue: Queue, look: boolean, call: string, afterArming = false): number {
  if (!positionsHold(eu, consumer, queue, call)) return -1;
  const { head } = positions;
  if (head === positions.tail) return -1;
  const at = slotOf(queue, head);
  // A plain read finds nothing cheaply; a filled slot is read again atomically before what it publishes.
  // The look after arming (`afterArming`: requestNotification) reads atomically: a plain load may pass the store before it.
  if ((afterArming || queue.i32[at >> 2] === Q.FILLED) && Atomics.load(queue.i32, at >> 2) === Q.FILLED) return at;
  return look && claimDead(eu, consumer, queue, head, at, call) ? DEAD : -1;
}
const DEAD = -2;

function anyFilled(eu: Eu, cc: number, call: string): boolean {
  const c = ccOf(eu, cc, call);
  for (let i = 0; i < c.consumers; i++) {
    const consumer = listed(eu, c, i);
    if (consumer < 0) continue;
    const generation = eu.dpa.load(consumer, OBJ.GEN);
    try {
      if (atHead(eu, consumer, queueOf(eu, consumer, call), true, call, true) !== -1) return true;
    } catch (err) {
      if (stillStarted(eu, consumer, generation)) throw err; // else it stopped while this unit looked: no error of its
    }
  }
  return false;
}

/** Whether object `index` is still started at `generation` (its owner did not stop or destroy it meanwhile). */
const stillStarted = (eu: Eu, index: number, generation: number): boolean => eu.dpa.load(index, OBJ.GEN) === generation && eu.dpa.load(index, OBJ.STATE) === ObjState.STARTED;

/**
 * Completion context `cc`, checked (`ccOf`), and its ring of returned receives: head and tail no more
 * than the ring apart, tail not behind head (else the context is ended: UNEXPECTED).
 */
function returnedRing(eu: Eu, cc: number, call: string): Cc {
  const dpa = eu.dpa;
  const c = ccOf(eu, cc, call);
  // The thread's own words (whichever unit ran it last handed it over through the scheduler's atomics).
  // Plain reads first, read again atomically before they end the context.
  if (!readReturned(dpa, cc, c, true) && !readReturned(dpa, cc, c, false)) {
    const { head, tail } = returned;
    dpa.fault(cc, 'UNEXPECTED', `its returned ring says ${(tail - head) | 0} receives are returned in ${c.max}`);
    dpa.checkFault(cc, call);
  }
  return c;
}

/** What returnedRing read last (one EU runs one call at a time): its callers use these, not a second read. */
const returned = { head: 0, tail: 0 };

/** Reads `cc`'s returned ring positions into `returned` (`plain`: ObjectFields.peek); whether the tail is not behind the head and at most `c`'s ring ahead. */
function readReturned(dpa: DpaTables, cc: number, c: Cc, plain: boolean): boolean {
  const head = (returned.head = dpa.read(cc, CONSUMER_COMPLETION.RET_HEAD, plain));
  const tail = (returned.tail = dpa.read(cc, CONSUMER_COMPLETION.RET_TAIL, plain));
  return ((tail - head) | 0) >= 0 && ((tail - head) | 0) <= c.max;
}

/** What positionsHold read last (one EU runs one call at a time): its callers use these, not a second read. */
const positions = { released: 0, head: 0, tail: 0 };

/**
 * `consumer`'s positions, which only move forward, each behind the next: released <= head (next to
 * return) <= post tail, and no more posted than the queue holds, read into `positions`. Anything else
 * ends the consumer (a receive could be returned twice); false then. The producers' claim head, between
 * head and tail, is checked where it is read (claimDead): reading it on every call took its line from
 * the producers.
 */
function positionsHold(eu: Eu, consumer: number, queue: Queue, call: string): boolean {
  // Plain reads first: DPA code's own positions (posted, returned, released by the units running its
  // threads). What they would end the consumer for is read again atomically, in order (another unit may
  // look while one runs the thread, and plain reads may be reordered on arm64).
  if (readPositions(eu, consumer, queue, true) || readPositions(eu, consumer, queue, false)) return true;
  const { released, head, tail } = positions;
  endConsumer(eu, consumer, queue, `its positions are impossible (released ${released >>> 0}, next ${head >>> 0}, posted ${tail >>> 0} in ${queue.slots} slots)`, call);
  return false;
}

/** Reads `consumer`'s positions into `positions` (`plain`: ObjectFields.peek), in order; whether they hold. */
function readPositions(eu: Eu, consumer: number, queue: Queue, plain: boolean): boolean {
  const released = (positions.released = eu.dpa.read(consumer, CONSUMER.RELEASED, plain));
  const head = (positions.head = eu.dpa.read(consumer, CONSUMER.HEAD, plain));
  const tail = (positions.tail = plain ? queue.i32[Q.POST_TAIL >> 2]! : Atomics.load(queue.i32, Q.POST_TAIL / 4));
  return ((head - released) | 0) >= 0 && ((tail - head) | 0) >= 0 && ((tail - released) | 0) <= queue.slots;
}

/** A filled receive that no immediate-only receive can be: what is wrong with it, or undefined. */
function badFill(eu: Eu, consumer: number, queue: Queue, at: number): string | undefined {
  const immLen = queue.view.getUint32(at + Q.SLOT.IMM_LEN, true);
  if (queue.view.getUint32(at + Q.SLOT.LENGTH, true) !== 0) return 'a producer wrote bytes into an immediate-only receive';
  if (immLen > Math.min(MAX_IMM, eu.dpa.u32(consumer, CONSUMER.IMM_LEN))) return `a producer sent ${immLen} bytes of immediate data`;
  if (queue.view.getUint32(at + Q.SLOT.PRODUCER, true) === 0) return 'a producer filled a receive without its id';
  return undefined;
}

/**
 * Ends `consumer` (a producer filled one of its receives with what no receive can be): DPA code gets
 * CONNECTION_ABORTED for it from now on, CPU producers find no consumer (NOT_CONNECTED) and nothing
 * posted, and its completion context goes on serving its other consumers. What it received before
 * stays readable until acked.
 */
function endConsumer(eu: Eu, consumer: number, queue: Queue, why: string, call: string): void {
  const id = eu.dpa.u32(consumer, CONSUMER.ID);
  if (!eu.dpa.fault(consumer, 'CONNECTION_ABORTED', `consumer id ${id}: ${why} (its completion context serves the others)`)) return;
  withdrawPosted(queue.i32);
  try {
    const table = registryOf(eu, consumer, call);
    const entry = table.find(id);
    if (entry >= 0 && table.side(entry) === 'client') table.setState(entry, ENTRY_STATE.EXPIRED);
  } catch (err) {
    eu.log(30, `comch consumer ${id}: its MsgQ entry cannot be expired: ${(err as Error).message}`);
  }
}

/** The MsgQ `consumer` is on, attached in this EU (once per start of the consumer). */
function registryOf(eu: Eu, consumer: number, call: string): EndpointTable {
  const comch = state(eu);
  const generation = eu.dpa.load(consumer, OBJ.GEN);
  const known = comch.registries.get(consumer);
  if (known?.generation === generation) return known.table;
  if (known) detach(known.table);
  comch.registries.delete(consumer);
  const segment = decodeDescriptor(eu.dpa.view, eu.dpa.at(consumer, CONSUMER.MSGQ), call);
  const table = attach({ segment, side: 'client', id: 0, msgq: true, caps: NO_CAPS }, call);
  comch.registries.set(consumer, { generation, table });
  return table;
}

/**
 * Whether the receive at position `head` of `consumer` was claimed by a producer that is gone: its
 * thread died (its MsgQ entry's owner), or it never wrote its name within ANONYMOUS_CLAIM_MS of this
 * unit first seeing the claim (it died between the claim and the name), as a CPU consumer decides.
 * Each unit keeps its own first look: whichever sees it long enough first gives the receive up.
 */
function claimDead(eu: Eu, consumer: number, queue: Queue, head: number, at: number, call: string): boolean {
  const claimed = Atomics.load(queue.i32, Q.CLAIM_HEAD / 4);
  const tail = Atomics.load(queue.i32, Q.POST_TAIL / 4);
  if (((claimed - head) | 0) < 0 || ((tail - claimed) | 0) < 0) {
    endConsumer(eu, consumer, queue, `its positions are impossible (next ${head >>> 0}, claimed ${claimed >>> 0}, posted ${tail >>> 0} in ${queue.slots} slots)`, call);
    return false;
  }
  if (claimed === head) return false; // not claimed
  const claimer = Atomics.load(queue.i32, at / 4) === Q.CLAIMED ? queue.view.getUint32(at + Q.SLOT.CLAIMER, true) : 0;
  if (claimer > 0) {
    const table = registryOf(eu, consumer, call);
    return !(claimer - 1 < table.layout.entries && table.ownerAlive(claimer - 1));
  }
  const comch = state(eu);
  const key = `${consumer}:${eu.dpa.load(consumer, OBJ.GEN)}:${head}`;
  const now = performance.now();
  const since = comch.anonymous.get(key);
  if (since === undefined) {
    if (comch.anonymous.size >= 1024) comch.anonymous.clear();
    comch.anonymous.set(key, now);
    return false;
  }
  return now - since >= ANONYMOUS_CLAIM_MS; // kept: the unit that gives it up asks again
}

/**
 * Gives up the receive at `consumer`'s head, whose producer died before filling it, and posts one
 * again at the tail (the credit DPA code gave stays given). Only once every receive before it was acked
 * (the released position is the head): false until then.
 */
function skipDeadClaim(eu: Eu, consumer: number, queue: Queue): boolean {
  const head = eu.dpa.load(consumer, CONSUMER.HEAD);
  if (eu.dpa.load(consumer, CONSUMER.RELEASED) !== head) return false;
  eu.log(40, `comch consumer ${eu.dpa.u32(consumer, CONSUMER.ID)}: the producer that claimed receive ${head >>> 0} died before filling it; posting it again`);
  Atomics.store(queue.i32, slotOf(queue, head) / 4, Q.EMPTY);
  eu.dpa.store(consumer, CONSUMER.HEAD, (head + 1) | 0);
  eu.dpa.store(consumer, CONSUMER.RELEASED, (head + 1) | 0);
  post(queue, Atomics.load(queue.i32, Q.POST_TAIL / 4), 1);
  return true;
}

/** Posts `n` immediate-only receives from position `tail` (the caller checked there is room). */
function post(queue: Queue, tail: number, n: number): void {
  postSlots(queue.view, queue.i32, queue.slots, tail, SEGMENT_HEADER_SIZE, 0, n);
}

/** `doca_dpa_dev_comch_consumer_get_completion`: the next receive a CPU producer filled, or undefined. */
export function comchConsumerGetCompletion(completionHandle: bigint): bigint | undefined {
  const call = 'doca_dpa_dev_comch_consumer_get_completion';
  const eu = current(call);
  const dpa = eu.dpa;
  const cc = dpa.resolve(completionHandle, ObjKind.CONSUMER_COMPLETION, call);
  const c = returnedRing(eu, cc, call);
  const { max, base } = c;
  const { tail } = returned;
  if (((tail - returned.head) | 0) >= max) return undefined; // ack some first
  const places = c.consumers;
  const cursor = dpa.peek(cc, CONSUMER_COMPLETION.CURSOR) >>> 0; // in DPA memory: any value is a valid start
  const look = claimLookDue(eu);
  for (let k = 0; k < places; k++) {
    const place = (cursor + k) % places;
    const consumer = listed(eu, c, place);
    if (consumer < 0) continue;
    const queue = queueOf(eu, consumer, call);
    let at = atHead(eu, consumer, queue, look, call);
    if (at === DEAD && skipDeadClaim(eu, consumer, queue)) at = atHead(eu, consumer, queue, look, call);
    if (at < 0) continue;
    const bad = badFill(eu, consumer, queue, at);
    if (bad) {
      endConsumer(eu, consumer, queue, bad, call);
      continue;
    }
    const { head } = positions; // atHead's read
    const returnedAt = slotAt(base, tail, max, RETURNED_SIZE);
    Atomics.store(dpa.i32, returnedAt / 4, consumer);
    Atomics.store(dpa.i32, returnedAt / 4 + 1, head);
    dpa.store(consumer, CONSUMER.HEAD, (head + 1) | 0);
    dpa.store(cc, CONSUMER_COMPLETION.RET_TAIL, (tail + 1) | 0);
    dpa.store(cc, CONSUMER_COMPLETION.CURSOR, (place + 1) % places);
    return dpa.elementHandle(ObjKind.CONSUMER_ELEMENT, cc, tail, max);
  }
  return undefined;
}

/** What `element` found last (one EU runs one call at a time): the context, its checked geometry, the position, the consumer's queue. */
const found = { cc: 0, c: undefined as unknown as Cc, position: 0, queue: undefined as unknown as Queue };

/**
 * The slot (byte offset in `found.queue`) of the receive a consumer completion element names (returned,
 * not yet acked, of that very context); `found` says the rest.
 */
function element(eu: Eu, handle: bigint, call: string): number {
  const dpa = eu.dpa;
  const cc = dpa.element(handle, ObjKind.CONSUMER_ELEMENT, ObjKind.CONSUMER_COMPLETION, call);
  const c = returnedRing(eu, cc, call);
  const position = dpa.elementPosition(returned.head, returned.tail, c.max, call);
  const returnedAt = slotAt(c.base, position, c.max, RETURNED_SIZE);
  const consumer = dpa.i32[returnedAt >> 2]!;
  if (!(consumer >= 0 && consumer < dpa.layout.dims.objects && dpa.u32(consumer, OBJ.KIND) === ObjKind.CONSUMER)) throw new DocaError('UNEXPECTED', call, `the returned element names object ${consumer}, which is no consumer`);
  const queue = queueOf(eu, consumer, call);
  found.cc = cc;
  found.c = c;
  found.position = position;
  found.queue = queue;
  return slotOf(queue, dpa.i32[(returnedAt >> 2) + 1]!);
}

/**
 * `doca_dpa_dev_comch_consumer_get_completion_imm`: the immediate data of a receive, as a copy valid
 * until the completion is acked (`comchConsumerCompletionAck`). Its view is the context's own for that
 * place of its returned ring, made once: after the ack a later completion's data replaces it, and once
 * the context is stopped, destroyed or reconfigured its views are detached (reads give nothing).
 */
export function comchConsumerGetCompletionImm(elementHandle: bigint): Uint8Array {
  const call = 'doca_dpa_dev_comch_consumer_get_completion_imm';
  const eu = current(call);
  const at = element(eu, elementHandle, call);
  const { c, position, queue } = found;
  const length = Math.min(MAX_IMM, queue.view.getUint32(at + Q.SLOT.IMM_LEN, true));
  const place = position & (c.max - 1);
  if (!c.memory) {
    c.memory = new WebAssembly.Memory({ initial: Math.ceil((c.max * MAX_IMM) / PAGE), maximum: Math.ceil((c.max * MAX_IMM) / PAGE) });
    state(eu).withViews.push(found.cc);
  }
  const key = place * (MAX_IMM + 1) + length;
  const view = (c.views[key] ??= new Uint8Array(c.memory.buffer, place * MAX_IMM, length));
  // A byte loop: at most MAX_IMM bytes, where a subarray and a set() would allocate.
  const u8 = queue.segment.u8;
  for (let i = 0, from = at + Q.SLOT.IMM; i < length; i++) view[i] = u8[from + i]!;
  return view;
}

/** `doca_dpa_dev_comch_consumer_get_completion_producer_id`. */
export function comchConsumerGetCompletionProducerId(elementHandle: bigint): number {
  const call = 'doca_dpa_dev_comch_consumer_get_completion_producer_id';
  const at = element(current(call), elementHandle, call);
  return found.queue.view.getUint32(at + Q.SLOT.PRODUCER, true);
}

/** `doca_dpa_dev_comch_consumer_completion_ack`: frees the `n` oldest returned receives (INVALID_VALUE beyond those). */
export function comchConsumerCompletionAck(completionHandle: bigint, n: number | bigint): void {
  const call = 'doca_dpa_dev_comch_consumer_completion_ack';
  const eu = current(call);
  const dpa = eu.dpa;
  const cc = dpa.resolve(completionHandle, ObjKind.CONSUMER_COMPLETION, call);
  const count = u32(call, 'num_comp', n);
  const { max, base } = returnedRing(eu, cc, call);
  const { head } = returned;
  const outstanding = (returned.tail - head) | 0;
  if (count > outstanding) throw new DocaError('INVALID_VALUE', call, `cannot ack ${count} completions: ${outstanding} were returned and not acked`);
  for (let i = 0; i < count; i++) {
    const returnedAt = slotAt(base, (head + i) | 0, max, RETURNED_SIZE);
    const consumer = dpa.i32[returnedAt >> 2]!;
    const position = dpa.i32[(returnedAt >> 2) + 1]!;
    if (consumer >= 0 && consumer < dpa.layout.dims.objects && dpa.u32(consumer, OBJ.KIND) === ObjKind.CONSUMER && dpa.peek(consumer, OBJ.STATE) === ObjState.STARTED) {
      const queue = queueOf(eu, consumer, call);
      Atomics.store(queue.i32, slotOf(queue, position) / 4, Q.EMPTY);
      dpa.store(consumer, CONSUMER.RELEASED, (position + 1) | 0);
    }
  }
  dpa.store(cc, CONSUMER_COMPLETION.RET_HEAD, (head + count) | 0);
}

/**
 * `doca_dpa_dev_comch_consumer_completion_request_notification`: re-arms the context, so that the next
 * receive activates its thread (at once if one is already waiting). Without it, no activation.
 */
export function comchConsumerCompletionRequestNotification(completionHandle: bigint): void {
  const call = 'doca_dpa_dev_comch_consumer_completion_request_notification';
  const eu = current(call);
  const cc = eu.dpa.resolve(completionHandle, ObjKind.CONSUMER_COMPLETION, call);
  requestNotification(eu.dpa, cc, ccPending, call);
}

/** Whether a receive waits for completion context `cc` (requestNotification's question). */
const ccPending = (_dpa: DpaTables, cc: number, call: string): boolean => anyFilled(current(call), cc, call);

/**
 * @internal detaches the immediate data views of contexts that were stopped, destroyed or reconfigured
 * since they were handed out (after each run: a context's owner may have changed it meanwhile).
 */
export function sweepImm(eu: Eu): void {
  const comch = eu.comch as State | undefined;
  if (!comch || comch.withViews.length === 0) return;
  const dpa = eu.dpa;
  const list = comch.withViews;
  for (let i = list.length - 1; i >= 0; i--) {
    const cc = list[i]!;
    const c = comch.ccs[cc];
    if (c?.memory && dpa.load(cc, OBJ.GEN) === c.generation && dpa.load(cc, OBJ.STATE) === ObjState.STARTED && dpa.u32(cc, CONSUMER_COMPLETION.MAX_RECV) === c.max) continue;
    if (c) forgetViews(c);
    list[i] = list[list.length - 1]!;
    list.pop();
  }
}

/** Activates a completion context's thread if it is armed and a receive waits. */
function notifyIfFilled(eu: Eu, cc: number, call: string): void {
  if (!armed(eu.dpa, cc) || !anyFilled(eu, cc, call)) return;
  if (Atomics.compareExchange(eu.dpa.i32, eu.dpa.at(cc, ATTACHED.ARMED) / 4, 1, 0) === 1) activateAttached(eu.dpa, cc);
}

/** @internal an EU was rung for DPA consumer `consumer`: a CPU producer filled its queue. */
export function consumerRang(eu: Eu, consumer: number): void {
  const dpa = eu.dpa;
  if (consumer >= dpa.layout.dims.objects || dpa.u32(consumer, OBJ.KIND) !== ObjKind.CONSUMER || dpa.load(consumer, OBJ.STATE) !== ObjState.STARTED) return;
  const cc = dpa.load(consumer, CONSUMER.CC) - 1;
  if (cc < 0 || !dpa.live(cc, dpa.load(consumer, CONSUMER.CC_GEN)) || dpa.load(cc, OBJ.STATE) !== ObjState.STARTED) return;
  lookAt(eu, cc, 'doca_comch_consumer');
}

/** Activates completion context `cc`'s thread if a receive waits; what goes wrong is logged, unless `cc` stopped meanwhile. */
function lookAt(eu: Eu, cc: number, call: string): void {
  const generation = eu.dpa.load(cc, OBJ.GEN);
  try {
    notifyIfFilled(eu, cc, call);
  } catch (err) {
    if (stillStarted(eu, cc, generation)) eu.log(30, `comch consumer completion ${cc}: ${(err as Error).message}`);
  }
}

/** @internal looks at every consumer completion context once (an EU's first sleep). */
export function pollConsumers(eu: Eu): void {
  const dpa = eu.dpa;
  for (let i = 0; i < dpa.layout.dims.objects; i++) {
    if (dpa.load(i, OBJ.STATE) === ObjState.STARTED && dpa.u32(i, OBJ.KIND) === ObjKind.CONSUMER_COMPLETION) lookAt(eu, i, 'doca_comch_consumer_completion');
  }
}

// ---- producers -----------------------------------------------------------------------------------

/** DPA producer `p`'s MsgQ endpoint table, attached in this EU (once per start). */
function producerOf(eu: Eu, p: number, call: string): Producer {
  const comch = state(eu);
  const known = comch.producers[p];
  if (known !== undefined && known.generation === eu.dpa.peek(p, OBJ.GEN)) return known;
  const generation = eu.dpa.load(p, OBJ.GEN);
  if (known?.generation === generation) return known;
  if (known) forgetProducer(comch, p, known);
  const segment = decodeDescriptor(eu.dpa.view, eu.dpa.at(p, PRODUCER.MSGQ), call);
  const table = attach({ segment, side: 'client', id: eu.dpa.u32(p, PRODUCER.MSGQ_ID), msgq: true, caps: NO_CAPS }, call);
  const producer: Producer = { generation, table, targets: new Map() };
  comch.producers[p] = producer;
  return producer;
}

function forgetProducer(comch: State, p: number, producer: Producer): void {
  for (const target of producer.targets.values()) forgetTarget(target);
  detach(producer.table);
  comch.producers[p] = undefined;
}

function forgetTarget(target: Target): void {
  if (target.memory !== target.queue.segment) target.memory.close();
  target.queue.segment.close();
  target.bell.release();
}

/** The live CPU consumer `id` of producer `p`'s MsgQ, mapped; undefined if there is none. */
function targetOf(eu: Eu, producer: Producer, id: number, call: string): Target | undefined {
  const table = producer.table;
  const cached = producer.targets.get(id);
  if (cached) {
    if (table.id(cached.index) === id && table.generation(cached.index) === cached.generation && table.state(cached.index) === ENTRY_STATE.REGISTERED) return cached;
    producer.targets.delete(id);
    forgetTarget(cached);
  }
  const index = table.find(id);
  if (index < 0 || table.side(index) !== 'server' || table.state(index) !== ENTRY_STATE.REGISTERED) return undefined;
  const generation = table.generation(index);
  const queueDescriptor = table.queue(index);
  const memoryDescriptor = table.memory(index);
  const queueSegment = Segment.open(queueDescriptor, call, ['consumer']);
  let memory = queueSegment;
  let queue: QueueView;
  try {
    if (descriptorKey(memoryDescriptor) !== descriptorKey(queueDescriptor)) memory = Segment.open(memoryDescriptor, call, ['mem']);
    queue = new QueueView(queueSegment, memory.size);
  } catch (err) {
    if (memory !== queueSegment) memory.close();
    queueSegment.close();
    eu.log(30, `DPA producer: consumer ${id} is unusable: ${(err as Error).message}`);
    return undefined;
  }
  const target: Target = { index, generation, id, queue, memory, bell: PeerBell.of(table.endpointBell(index), call), immLen: table.immLen(index) };
  producer.targets.set(id, target);
  return target;
}

function immOf(call: string, imm: unknown): Uint8Array {
  if (!(imm instanceof Uint8Array)) throw new DocaError('INVALID_VALUE', call, 'the immediate data must be a Uint8Array');
  if (imm.length > MAX_IMM) throw new DocaError('INVALID_VALUE', call, `${imm.length} bytes of immediate data; at most ${MAX_IMM}`);
  return imm;
}

function flagsOf(call: string, flags: unknown): number {
  const f = u32(call, 'flags', flags ?? 0);
  if ((f & ~(SubmitFlag.FLUSH | SubmitFlag.OPTIMIZE_REPORTS)) !== 0) throw new DocaError('INVALID_VALUE', call, `flags 0x${f.toString(16)} are not a combination of FLUSH and OPTIMIZE_REPORTS`);
  return f;
}

/** The producer's DPA completion, checked to have room for one more element (FULL otherwise). */
function completionOf(eu: Eu, p: number, call: string): number {
  // Plain reads first (ObjectFields.peek), read again atomically before they fail the call; postCqe
  // reserves its place with a compare-and-swap and checks again.
  const cq = completionWithRoom(eu.dpa, p, true);
  if (cq >= 0) return cq;
  const again = completionWithRoom(eu.dpa, p, false);
  if (again === NOT_STARTED) throw new DocaError('BAD_STATE', call, "the producer's DPA completion is not started");
  if (again === NO_ROOM) throw new DocaError('FULL', call, "the producer's DPA completion queue is full: get and ack its completions first (nothing was sent)");
  return again;
}

const NOT_STARTED = -1;
const NO_ROOM = -2;

/** Producer `p`'s DPA completion if it is started and has room for one more element, else NOT_STARTED or NO_ROOM; `plain`: ObjectFields.peek. */
function completionWithRoom(dpa: DpaTables, p: number, plain: boolean): number {
  const cq = dpa.read(p, PRODUCER.COMPLETION, plain) - 1;
  if (cq < 0 || !dpa.live(cq, dpa.read(p, PRODUCER.COMPLETION_GEN, plain), plain) || dpa.read(cq, OBJ.STATE, plain) !== ObjState.STARTED) return NOT_STARTED;
  return ((dpa.read(cq, COMPLETION.RESERVE, plain) - dpa.read(cq, COMPLETION.ACK, plain)) | 0) >= dpa.u32(cq, COMPLETION.SIZE) ? NO_ROOM : cq;
}

/** Sends `imm` to CPU consumer `id`; the result completes on the producer's DPA completion. */
function send(eu: Eu, p: number, id: number, imm: Uint8Array, flags: number, cq: number, call: string): void {
  const producer = producerOf(eu, p, call);
  const target = targetOf(eu, producer, id, call);
  const claim = target && imm.length <= target.immLen ? target.queue.claim(0, eu.dpa.u32(p, PRODUCER.ENTRY) + 1) : 'empty';
  if (typeof claim !== 'object' || !('slot' in claim)) {
    if (typeof claim === 'object') eu.log(30, `DPA producer: consumer ${id}: ${'bad' in claim ? claim.bad : 'its receive holds no bytes'}`);
    postCqe(eu.dpa, cq, CompletionType.SEND_ERR, id, 0, call);
    return;
  }
  target!.queue.fill(claim.slot, 0, eu.dpa.u32(p, PRODUCER.ID), imm.length > 0 ? imm : undefined);
  target!.bell.ring();
  // OPTIMIZE_REPORTS: one completion may stand for several sends while the thread has not read it.
  if (flags & SubmitFlag.OPTIMIZE_REPORTS && cqPending(eu.dpa, cq, call)) return;
  postCqe(eu.dpa, cq, CompletionType.SEND, id, 0, call);
}

/** `doca_dpa_dev_comch_producer_is_consumer_empty`: true when CPU consumer `consumerId` has no posted receive. */
export function comchProducerIsConsumerEmpty(producerHandle: bigint, consumerId: number): boolean {
  const call = 'doca_dpa_dev_comch_producer_is_consumer_empty';
  const eu = current(call);
  const p = eu.dpa.resolve(producerHandle, ObjKind.PRODUCER, call);
  const target = targetOf(eu, producerOf(eu, p, call), u32(call, 'consumer_id', consumerId), call);
  return !target || target.queue.empty;
}

/**
 * `doca_dpa_dev_comch_producer_post_send_imm_only`: sends `imm` (at most 32 bytes) to CPU consumer
 * `consumerId`, completing one of its posted receive tasks; then a SEND completion (SEND_ERR when
 * nothing could be delivered) on the producer's DPA completion.
 */
export function comchProducerPostSendImmOnly(producerHandle: bigint, consumerId: number, imm: Uint8Array, flags: number = SubmitFlag.NONE): void {
  const call = 'doca_dpa_dev_comch_producer_post_send_imm_only';
  const eu = current(call);
  const p = eu.dpa.resolve(producerHandle, ObjKind.PRODUCER, call);
  const data = immOf(call, imm);
  const f = flagsOf(call, flags);
  send(eu, p, u32(call, 'consumer_id', consumerId), data, f, completionOf(eu, p, call), call);
}

/**
 * `doca_dpa_dev_comch_producer_dma_copy`: copies `length` bytes from `srcAddr` of map `srcMmap` to
 * `dstAddr` of map `dstMmap` (handles from `Mmap.devGetDpaHandle`; addresses are byte offsets in the
 * maps, 128-byte aligned as the hardware needs), then sends `imm` as `postSendImmOnly` does.
 */
export function comchProducerDmaCopy(
  producerHandle: bigint,
  consumerId: number,
  dstMmap: bigint,
  dstAddr: bigint | number,
  srcMmap: bigint,
  srcAddr: bigint | number,
  length: number,
  imm: Uint8Array,
  flags: number = SubmitFlag.NONE,
): void {
  const call = 'doca_dpa_dev_comch_producer_dma_copy';
  const eu = current(call);
  const p = eu.dpa.resolve(producerHandle, ObjKind.PRODUCER, call);
  const data = immOf(call, imm);
  const f = flagsOf(call, flags);
  const dst = eu.maps.resolve(dstMmap, call);
  const src = eu.maps.resolve(srcMmap, call);
  const dstAt = u64(call, 'dst_addr', dstAddr);
  const srcAt = u64(call, 'src_addr', srcAddr);
  const size = u32(call, 'length', length);
  if (dstAt % DMA_ALIGN !== 0n || srcAt % DMA_ALIGN !== 0n) throw new DocaError('INVALID_VALUE', call, `DMA addresses must be ${DMA_ALIGN}-byte aligned (dst ${dstAt}, src ${srcAt}): the DPA corrupts or hangs on others`);
  if (dstAt + BigInt(size) > BigInt(dst.bytes.length) || srcAt + BigInt(size) > BigInt(src.bytes.length)) {
    throw new DocaError('INVALID_VALUE', call, `copying ${size} bytes from ${srcAt} (of ${src.bytes.length}) to ${dstAt} (of ${dst.bytes.length}) leaves a map`);
  }
  if (!(dst.flags & WRITE)) throw new DocaError('NOT_PERMITTED', call, `the destination map (permissions 0x${dst.flags.toString(16)}) is not writable`);
  const cq = completionOf(eu, p, call);
  dst.bytes.set(src.bytes.subarray(Number(srcAt), Number(srcAt) + size), Number(dstAt));
  send(eu, p, u32(call, 'consumer_id', consumerId), data, f, cq, call);
}

/** @internal unmaps everything the comch device API mapped in this EU (it leaves). */
export function closeComch(eu: Eu): void {
  const comch = eu.comch as State | undefined;
  if (!comch) return;
  for (const queue of comch.queues) queue?.segment.close();
  comch.producers.forEach((producer, p) => producer && forgetProducer(comch, p, producer));
  for (const { table } of comch.registries.values()) detach(table);
  for (const c of comch.ccs) if (c) forgetViews(c);
  comch.queues.length = 0;
  comch.ccs.length = 0;
  comch.withViews.length = 0;
  comch.registries.clear();
}
