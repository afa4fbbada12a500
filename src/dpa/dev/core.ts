/**
 * The DPA core device API (doca_dpa_dev.h): who runs, ending a run, notifying another thread, DPA
 * completions, the device log and DPA memory. Handles are u64 bigints from the CPU side's
 * `get_dpa_handle` calls; each is checked before use (dpa/tables.ts).
 */
import { DocaError } from '../../core/error.js';
import { yieldCpu } from '../../fabric/segment.js';
import { activateAttached, cqAck, cqElement, cqGet, cqPending, cqSize, NO_ELEMENT, requestNotification } from '../cq.js';
import { ObjKind, WorkKind } from '../layout.js';
import { CQE } from '../objects.js';
import { current, FINISH, RESCHEDULE, u32, u64, work } from './runtime.js';

/** `doca_dpa_dev_log_level_t`. */
export const DevLogLevel = { DISABLE: 10, ERROR: 30, WARNING: 40, INFO: 50, DEBUG: 60 } as const;

/** `enum doca_dpa_dev_submit_flag`. */
export const SubmitFlag = { NONE: 0, FLUSH: 1, OPTIMIZE_REPORTS: 2 } as const;

/** `doca_dpa_dev_thread_rank`: this kernel instance's rank in [0, numThreads()); 0 for threads and RPCs. */
export function threadRank(): number {
  return work('doca_dpa_dev_thread_rank').rank;
}

/** `doca_dpa_dev_num_threads`: how many instances run this kernel; 1 for threads and RPCs. */
export function numThreads(): number {
  return work('doca_dpa_dev_num_threads').threads;
}

/** `doca_dpa_dev_thread_get_local_storage`: the DPA pointer set with `DpaThread.setLocalStorage` (0n if none). */
export function threadGetLocalStorage(): bigint {
  return work('doca_dpa_dev_thread_get_local_storage').local;
}

/** `doca_dpa_dev_yield`: lets other work run a moment (kernels' spin loops); ends the run if the DPA stops. */
export function dpaYield(): void {
  current('doca_dpa_dev_yield');
  yieldCpu();
}

/**
 * `doca_dpa_dev_thread_reschedule`: ends this activation and gives the execution unit back; the thread
 * runs again at its next activation. Does not return.
 */
export function threadReschedule(): never {
  const w = work('doca_dpa_dev_thread_reschedule');
  if (w.kind !== WorkKind.THREAD) throw new DocaError('NOT_PERMITTED', 'doca_dpa_dev_thread_reschedule', 'only a DPA thread reschedules (this is a kernel or an RPC)');
  throw RESCHEDULE;
}

/** `doca_dpa_dev_thread_finish`: ends the thread for good (it is never activated again). Does not return. */
export function threadFinish(): never {
  const w = work('doca_dpa_dev_thread_finish');
  if (w.kind !== WorkKind.THREAD) throw new DocaError('NOT_PERMITTED', 'doca_dpa_dev_thread_finish', 'only a DPA thread finishes (this is a kernel or an RPC)');
  w.finished = true;
  throw FINISH;
}

/** `doca_dpa_dev_thread_notify`: activates the thread of a notification completion. */
export function threadNotify(notificationHandle: bigint): void {
  const call = 'doca_dpa_dev_thread_notify';
  const eu = current(call);
  activateAttached(eu.dpa, eu.dpa.resolve(notificationHandle, ObjKind.NOTIFICATION, call));
}

/** `doca_dpa_dev_device_set`: this emulation has one device per DPA; the handle is checked and kept. */
export function deviceSet(dpaHandle: bigint): void {
  const call = 'doca_dpa_dev_device_set';
  current(call).dpa.resolve(dpaHandle, ObjKind.DPA, call);
}

/** `doca_dpa_dev_get_completion`: the next element of a DPA completion, or undefined when there is none. */
export function getCompletion(completionHandle: bigint): bigint | undefined {
  const call = 'doca_dpa_dev_get_completion';
  const eu = current(call);
  const cq = eu.dpa.resolve(completionHandle, ObjKind.COMPLETION, call);
  const position = cqGet(eu.dpa, cq, call);
  return position === NO_ELEMENT ? undefined : eu.dpa.elementHandle(ObjKind.COMPLETION_ELEMENT, cq, position, cqSize(eu.dpa, cq, call));
}

/** The byte offset of an element that was returned and not yet acked (of that very completion, not a later one at its index). */
function element(handle: bigint, call: string): number {
  const dpa = current(call).dpa;
  return cqElement(dpa, dpa.element(handle, ObjKind.COMPLETION_ELEMENT, ObjKind.COMPLETION, call), call);
}

/** `doca_dpa_dev_get_completion_type`: `CompletionType` (SEND, SEND_ERR, ...). */
export function getCompletionType(elementHandle: bigint): number {
  const call = 'doca_dpa_dev_get_completion_type';
  return current(call).dpa.view.getUint32(element(elementHandle, call) + CQE.TYPE, true);
}

/** `doca_dpa_dev_get_completion_user_data`: the user data of what completed (an async op's, say). */
export function getCompletionUserData(elementHandle: bigint): number {
  const call = 'doca_dpa_dev_get_completion_user_data';
  return current(call).dpa.view.getUint32(element(elementHandle, call) + CQE.USER_DATA, true);
}

/** `doca_dpa_dev_get_completion_immediate`: the element's 32-bit immediate value. */
export function getCompletionImmediate(elementHandle: bigint): number {
  const call = 'doca_dpa_dev_get_completion_immediate';
  return current(call).dpa.view.getUint32(element(elementHandle, call) + CQE.IMMEDIATE, true);
}

/** `doca_dpa_dev_completion_ack`: frees `n` returned elements (INVALID_VALUE for more than were returned). */
export function completionAck(completionHandle: bigint, n: number | bigint): void {
  const call = 'doca_dpa_dev_completion_ack';
  const eu = current(call);
  cqAck(eu.dpa, eu.dpa.resolve(completionHandle, ObjKind.COMPLETION, call), u32(call, 'num_comp', n), call);
}

/**
 * `doca_dpa_dev_completion_request_notification`: re-arms the completion, so that its next element
 * activates its thread (at once if one is already waiting). Without it the thread is not activated again.
 */
export function completionRequestNotification(completionHandle: bigint): void {
  const call = 'doca_dpa_dev_completion_request_notification';
  const eu = current(call);
  const cq = eu.dpa.resolve(completionHandle, ObjKind.COMPLETION, call);
  requestNotification(eu.dpa, cq, cqPending, call);
}

/**
 * `doca_dpa_dev_log` (and the DOCA_DPA_DEV_LOG_* macros): a line in the owner process's DOCA log, if
 * `level` is within the DPA's log level (`Dpa.setLogLevel`). Lines travel asynchronously and reach the
 * log when the owner's event loop turns.
 */
export function log(level: number, message: string): void {
  current('doca_dpa_dev_log').log(level, String(message));
}

/**
 * `*(T *)ptr` on the DPA: a view of `length` bytes of DPA memory (`Dpa.memAlloc`) at DPA pointer `ptr`.
 * INVALID_VALUE for a range outside the DPA's heap. Not a DOCA call: C code dereferences the pointer.
 */
export function dpaMemory(ptr: bigint, length: number): Uint8Array {
  const call = 'dpaMemory';
  const eu = current(call);
  const p = u64(call, 'ptr', ptr);
  const n = u32(call, 'length', length);
  const offset = p - eu.heapBase;
  if (offset < 64n || offset + BigInt(n) > BigInt(eu.heap.size)) {
    throw new DocaError('INVALID_VALUE', call, `[0x${p.toString(16)}, +${n}) is outside the DPA's memory [0x${(eu.heapBase + 64n).toString(16)}, +${eu.heap.size - 64})`);
  }
  return eu.heap.u8.subarray(Number(offset), Number(offset) + n);
}
