/**
 * DPA completion queues (`doca_dpa_completion`) and the notification rule every completion context
 * shares: a context activates its attached thread only while armed, and disarms when it does, as a
 * hardware CQ does. Arming (`*_request_notification`) when completions are already waiting activates
 * at once, so re-arming after draining never loses one; forgetting to re-arm means the thread is not
 * activated again, as on the DPA.
 *
 * A queue is a ring of CQE_SIZE elements in the arena. Producers (EUs posting producer sends and async
 * op completions, possibly several at once) reserve a position with a compare-and-swap on RESERVE
 * (refused when `RESERVE - ACK` would exceed the ring), write the element, then publish it by storing
 * its sequence word (position + 1). The thread reading the queue returns elements in order from READ
 * and frees them with `ack`, which advances ACK.
 */
import { DocaError } from '../core/error.js';
import { active as faultsActive, faultEvent } from '../fabric/faults/index.js';
import { isPowerOfTwo, slotAt } from '../fabric/positions.js';
import { KIND_NAMES, OBJ, ObjKind } from './layout.js';
import { ATTACHED, COMPLETION, CQE, CQE_SIZE, MAX_QUEUE } from './objects.js';
import type { DpaTables } from './tables.js';

/** `doca_dpa_dev_completion_type_t`. */
export const CompletionType = { SEND: 0x0, RECV_RDMA_WRITE_IMM: 0x1, RECV_SEND: 0x2, RECV_SEND_IMM: 0x3, SEND_ERR: 0xd, RECV_ERR: 0xe } as const;

/** Activates the thread attached to object `index` if the object is armed (and disarms it). */
export function notifyAttached(dpa: DpaTables, index: number): void {
  if (!armed(dpa, index) || Atomics.compareExchange(dpa.i32, dpa.at(index, ATTACHED.ARMED) / 4, 1, 0) !== 1) return;
  activateAttached(dpa, index);
}

/**
 * Whether completion context `index` is armed. Its word is 0 or 1; anything else (another thread
 * wrote it) would keep its thread from ever being activated without a word: the context is ended.
 */
export function armed(dpa: DpaTables, index: number): boolean {
  // Atomic: the load after a post's store (the other half arms, then looks), which a plain read could pass.
  const value = Atomics.load(dpa.i32, dpa.at(index, ATTACHED.ARMED) / 4);
  if (value === 1) return true;
  if (value !== 0) dpa.fault(index, 'UNEXPECTED', `its armed word holds ${value}, neither 0 nor 1: it could never activate its thread again`);
  return false;
}

/**
 * How a delayed activation is run later in this thread: a timer where the event loop turns (the owner's
 * threads), the EU's own list where it does not (an execution unit loops without yielding to it).
 */
let later = (fn: () => void, ms: number): void => void setTimeout(fn, ms).unref();

/** @internal eu-worker.ts: an execution unit runs delayed activations itself. */
export function setActivationTimer(fn: (deliver: () => void, ms: number) => void): void {
  later = fn;
}

/**
 * Activates the thread attached to object `index`, if it is still the thread that was attached. Every
 * activation by a completion context passes here, so a fault plan's `lose-event` / `delay-event` with
 * `"event": "dpa_activation"` (docs/faults.md; ctx `doca_dpa`, counted per DPA) loses or delays it.
 */
export function activateAttached(dpa: DpaTables, index: number): void {
  const thread = dpa.load(index, ATTACHED.THREAD) - 1;
  if (thread < 0 || !dpa.live(thread, dpa.load(index, ATTACHED.THREAD_GEN)) || dpa.u32(thread, OBJ.KIND) !== ObjKind.THREAD) return;
  if (!faultsActive) return activateThread(dpa, thread);
  faultEvent('doca_dpa', 'dpa_activation', dpa, () => activateThread(dpa, thread), later);
}

function activateThread(dpa: DpaTables, thread: number): void {
  if (!dpa.sched.activateThread(thread)) dpa.fault(thread, 'UNEXPECTED', `its state word holds ${dpa.load(thread, OBJ.STATE)}, no thread state: it cannot be activated`);
}

/** Arms object `index`; activates at once if `pending(dpa, index, call)` says completions already wait. */
export function requestNotification(dpa: DpaTables, index: number, pending: (dpa: DpaTables, index: number, call: string) => boolean, call: string): void {
  const armed = dpa.at(index, ATTACHED.ARMED) / 4;
  Atomics.store(dpa.i32, armed, 1);
  if (pending(dpa, index, call) && Atomics.compareExchange(dpa.i32, armed, 1, 0) === 1) activateAttached(dpa, index);
}

/** A completion queue's ring as checked: its words as read then (the generation, size and offset). */
export interface CqRing {
  generation: number;
  size: number;
  base: number;
}

/**
 * The ring of completion queue `cq`: its size and byte offset, checked to lie in the arena (the owner
 * wrote them; a value that cannot be right ends the call with a DOCA error, not a stray access). The
 * check is made once per value of those words (and of the generation): later calls compare the words
 * with what was checked. Its positions are checked on every call (they move).
 */
function ring(dpa: DpaTables, cq: number, call: string): CqRing {
  if (dpa.u32(cq, OBJ.KIND) !== ObjKind.COMPLETION) throw new DocaError('UNEXPECTED', call, `object ${cq}, named as a DPA completion, is a ${KIND_NAMES[dpa.u32(cq, OBJ.KIND)] ?? 'thing of no kind'}`);
  dpa.checkFault(cq, call);
  let r = dpa.rings[cq];
  // Plain reads compared with what was checked (ObjectFields.peek); an atomic load before the words are checked again.
  if (r === undefined || r.generation !== dpa.peek(cq, OBJ.GEN) || r.size !== dpa.u32(cq, COMPLETION.SIZE) || r.base !== dpa.u32(cq, COMPLETION.RING)) {
    const generation = dpa.load(cq, OBJ.GEN);
    const size = dpa.u32(cq, COMPLETION.SIZE);
    if (!isPowerOfTwo(size) || size > MAX_QUEUE) throw new DocaError('UNEXPECTED', call, `the completion queue's entry says it holds ${size} elements, not a power of two up to ${MAX_QUEUE}`);
    dpa.rings[cq] = r = { generation, size, base: dpa.arenaRange(dpa.u32(cq, COMPLETION.RING), size * CQE_SIZE, "the completion queue's ring", call) };
  }
  const { size } = r;
  checkPositions(dpa, cq, size, call);
  return r;
}

/**
 * Positions only move forward, each behind the next: ACK <= READ <= RESERVE, and RESERVE at most one
 * ring ahead of ACK (read in the order that keeps this true while others move them; the slack of one
 * more ring covers acks between the loads). Anything else ends the queue (UNEXPECTED): its elements
 * could no longer be found, and a post could overwrite an unread one.
 */
function checkPositions(dpa: DpaTables, cq: number, size: number, call: string): void {
  // Plain reads first (ObjectFields.peek); what they would end the queue for is read again atomically, in
  // the order that keeps the rule true while others move them (plain reads may be reordered on arm64).
  if (positionsOk(dpa, cq, size, true) || positionsOk(dpa, cq, size, false)) return;
  const { ack, read, reserve } = seen;
  dpa.fault(cq, 'UNEXPECTED', `its positions are impossible (ack ${ack >>> 0}, read ${read >>> 0}, reserve ${reserve >>> 0} in ${size} elements)`);
  dpa.checkFault(cq, call);
}

/** What positionsOk read last (the fault names these). */
const seen = { ack: 0, read: 0, reserve: 0 };

/** Reads `cq`'s positions into `seen`, in order (`plain`: ObjectFields.peek); whether they hold. */
function positionsOk(dpa: DpaTables, cq: number, size: number, plain: boolean): boolean {
  const ack = (seen.ack = dpa.read(cq, COMPLETION.ACK, plain));
  const read = (seen.read = dpa.read(cq, COMPLETION.READ, plain));
  const reserve = (seen.reserve = dpa.read(cq, COMPLETION.RESERVE, plain));
  return ((read - ack) | 0) >= 0 && ((reserve - read) | 0) >= 0 && ((reserve - ack) | 0) <= 2 * size;
}

/** Posts an element on completion queue `cq`; FULL (nothing posted) when the ring has no room. */
export function postCqe(dpa: DpaTables, cq: number, type: number, userData: number, immediate: number, call: string): void {
  const { size, base } = ring(dpa, cq, call);
  const reserve = dpa.at(cq, COMPLETION.RESERVE) / 4;
  let position: number;
  for (;;) {
    position = dpa.i32[reserve]!; // the compare-and-swap below confirms it
    if (((position - dpa.peek(cq, COMPLETION.ACK)) | 0) >= size) {
      throw new DocaError('FULL', call, `the DPA completion queue (${size} elements) is full: the thread reading it must get and ack its completions`);
    }
    if (Atomics.compareExchange(dpa.i32, reserve, position, (position + 1) | 0) === position) break;
  }
  const at = slotAt(base, position, size, CQE_SIZE);
  dpa.view.setUint32(at + CQE.TYPE, type, true);
  dpa.view.setUint32(at + CQE.USER_DATA, userData >>> 0, true);
  dpa.view.setUint32(at + CQE.IMMEDIATE, immediate >>> 0, true);
  Atomics.store(dpa.i32, at / 4, (position + 1) | 0);
  notifyAttached(dpa, cq);
}

/** What `cqGet` returns when nothing was posted: no i32 (positions are, and cross -1 like any other). */
export const NO_ELEMENT = 2 ** 32;

/** The position of the element at the head of `cq` if one was posted (the read position moves on), else NO_ELEMENT. */
export function cqGet(dpa: DpaTables, cq: number, call: string): number {
  const position = dpa.peek(cq, COMPLETION.READ);
  const { size, base } = ring(dpa, cq, call);
  const at = slotAt(base, position, size, CQE_SIZE);
  // A plain read finds nothing cheaply; a posted element's word is read again atomically before its fields.
  if (dpa.i32[at >> 2] !== ((position + 1) | 0) || Atomics.load(dpa.i32, at >> 2) !== ((position + 1) | 0)) return NO_ELEMENT;
  dpa.store(cq, COMPLETION.READ, (position + 1) | 0);
  return position;
}

/** The size of `cq`'s ring, checked (what its element handles count positions by). */
export const cqSize = (dpa: DpaTables, cq: number, call: string): number => ring(dpa, cq, call).size;

/** Whether `cq` holds elements not yet returned. */
export function cqPending(dpa: DpaTables, cq: number, call: string): boolean {
  const position = dpa.peek(cq, COMPLETION.READ);
  const { size, base } = ring(dpa, cq, call);
  const at = slotAt(base, position, size, CQE_SIZE);
  return Atomics.load(dpa.i32, at >> 2) === ((position + 1) | 0); // atomic: requestNotification's look after arming
}

/** Frees `n` returned elements; INVALID_VALUE (nothing freed) for more than were returned and not acked. */
export function cqAck(dpa: DpaTables, cq: number, n: number, call: string): void {
  ring(dpa, cq, call);
  const ack = dpa.peek(cq, COMPLETION.ACK);
  const returned = (dpa.peek(cq, COMPLETION.READ) - ack) | 0;
  if (!Number.isInteger(n) || n < 0 || n > returned) throw new DocaError('INVALID_VALUE', call, `cannot ack ${n} completions: ${returned} were returned and not acked`);
  dpa.store(cq, COMPLETION.ACK, (ack + n) | 0);
}

/**
 * Byte offset of the element an element handle names (`dpa.element` took it): checked to be returned
 * and not yet acked, of that very completion.
 */
export function cqElement(dpa: DpaTables, cq: number, call: string): number {
  const { size, base } = ring(dpa, cq, call);
  return slotAt(base, dpa.elementPosition(dpa.peek(cq, COMPLETION.ACK), dpa.peek(cq, COMPLETION.READ), size, call), size, CQE_SIZE);
}
