/**
 * The sync event device API (doca_dpa_dev_sync_event.h), on handles from `SyncEvent.getDpaHandle`.
 * Updates ring the event's waiters in any process; `wait_gt` spins (giving the CPU away now and then,
 * and ending with the run if the DPA stops); the `post_wait_*` calls are non-blocking: their async ops'
 * completion activates the attached thread once the condition holds.
 */
import { DocaError } from '../../core/error.js';
import { yieldCpu } from '../../fabric/segment.js';
import { checkWaits, waitList } from '../gated.js';
import { OBJ, ObjKind } from '../layout.js';
import { SE_SUBSCRIBER, SYNC_EVENT, WAIT, WAIT_SIZE, WaitOp, WaitState } from '../objects.js';
import { current, u64 } from './runtime.js';

/** Largest value `post_wait_gt/ne` take (and an event may hold when they are posted), as in DOCA. */
const POST_WAIT_MAX = 254n;

/** `doca_dpa_dev_sync_event_get`: the counter. */
export function syncEventGet(eventHandle: bigint): bigint {
  const call = 'doca_dpa_dev_sync_event_get';
  const eu = current(call);
  return eu.events.get(eu.dpa.resolve(eventHandle, ObjKind.SYNC_EVENT, call), call);
}

/** `doca_dpa_dev_sync_event_update_add`: atomic add (wrapping at 2^64); nothing is fetched back. */
export function syncEventUpdateAdd(eventHandle: bigint, value: bigint | number): void {
  const call = 'doca_dpa_dev_sync_event_update_add';
  const eu = current(call);
  const v = u64(call, 'value', value);
  eu.events.add(eu.dpa.resolve(eventHandle, ObjKind.SYNC_EVENT, call), v, call);
}

/** `doca_dpa_dev_sync_event_update_set`. */
export function syncEventUpdateSet(eventHandle: bigint, value: bigint | number): void {
  const call = 'doca_dpa_dev_sync_event_update_set';
  const eu = current(call);
  const v = u64(call, 'value', value);
  eu.events.set(eu.dpa.resolve(eventHandle, ObjKind.SYNC_EVENT, call), v, call);
}

/** `doca_dpa_dev_sync_event_wait_gt`: spins until `(value & mask) > value`; holds its execution unit. */
export function syncEventWaitGt(eventHandle: bigint, value: bigint | number, mask: bigint | number): void {
  const call = 'doca_dpa_dev_sync_event_wait_gt';
  let eu = current(call);
  const v = u64(call, 'value', value);
  const m = u64(call, 'mask', mask);
  const index = eu.dpa.resolve(eventHandle, ObjKind.SYNC_EVENT, call);
  for (let i = 1; (eu.events.get(index, call) & m) <= v; i++) {
    if ((i & 255) === 0) {
      yieldCpu();
      eu = current(call); // ends the run if the DPA stops meanwhile
    }
  }
}

/**
 * `doca_dpa_dev_sync_event_post_wait_gt`: completes on `asyncOps` (activating its completion's thread)
 * once the event's value is greater than `value`. Values in [0, 254] only, for the operand and for the
 * event when it is posted (INVALID_VALUE otherwise, where DOCA leaves the behaviour undefined). The DPA
 * must subscribe to the event (`addSubscriberLocationDpa`), or no update would wake it.
 */
export function syncEventPostWaitGt(asyncOpsHandle: bigint, eventHandle: bigint, value: bigint | number): void {
  postWait('doca_dpa_dev_sync_event_post_wait_gt', WaitOp.GT, asyncOpsHandle, eventHandle, value);
}

/** `doca_dpa_dev_sync_event_post_wait_ne`: as `post_wait_gt`, for a value not equal to `value`. */
export function syncEventPostWaitNe(asyncOpsHandle: bigint, eventHandle: bigint, value: bigint | number): void {
  postWait('doca_dpa_dev_sync_event_post_wait_ne', WaitOp.NE, asyncOpsHandle, eventHandle, value);
}

function postWait(call: string, op: number, asyncOpsHandle: bigint, eventHandle: bigint, value: bigint | number): void {
  const eu = current(call);
  const dpa = eu.dpa;
  const ops = dpa.resolve(asyncOpsHandle, ObjKind.ASYNC_OPS, call);
  const event = dpa.resolve(eventHandle, ObjKind.SYNC_EVENT, call);
  const v = u64(call, 'value', value);
  if (v > POST_WAIT_MAX) throw new DocaError('INVALID_VALUE', call, `value ${v} is outside [0, 254], the range DOCA defines for post_wait`);
  if (!(dpa.u32(event, SYNC_EVENT.FLAGS) & SE_SUBSCRIBER)) {
    throw new DocaError('INVALID_VALUE', call, 'the DPA does not subscribe to this sync event (addSubscriberLocationDpa), so no update would wake it');
  }
  const now = eu.events.get(event, call);
  if (now > POST_WAIT_MAX) throw new DocaError('INVALID_VALUE', call, `the event holds ${now}, outside [0, 254], the range DOCA defines for post_wait`);
  const { size, list } = waitList(dpa, ops, call);
  for (let i = 0; i < size; i++) {
    const at = list + i * WAIT_SIZE;
    if (Atomics.compareExchange(dpa.i32, (at + WAIT.STATE) / 4, WaitState.FREE, WaitState.WRITING) !== WaitState.FREE) continue;
    dpa.view.setUint32(at + WAIT.OP, op, true);
    dpa.view.setUint32(at + WAIT.EVENT, event, true);
    dpa.view.setInt32(at + WAIT.EVENT_GEN, dpa.load(event, OBJ.GEN), true);
    dpa.view.setUint32(at + WAIT.VALUE, Number(v), true);
    Atomics.store(dpa.i32, (at + WAIT.STATE) / 4, WaitState.POSTED);
    Atomics.or(dpa.i32, dpa.layout.waitBits / 4 + (ops >>> 5), 1 << (ops & 31));
    checkWaits(dpa, eu.events, ops); // it may hold already; later updates ring the DPA
    return;
  }
  throw new DocaError('FULL', call, `the async ops queue (${size} operations) is full`);
}
