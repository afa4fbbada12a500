/**
 * Work that waits for a sync event: kernel launches held until their wait event reaches the threshold,
 * and waits posted on async ops (`doca_dpa_dev_sync_event_post_wait_gt/ne`). The DPA holds an entry in
 * the waiter table of every event it subscribes to, pointing at an EU's bell (bit BIT_EVENT), so that an
 * update from any thread or process rings the DPA; the rung EU then looks at everything that waits.
 * Whoever finds a condition true first claims the work with a compare-and-swap, so looks can race.
 */
import { DocaError } from '../core/error.js';
import { isPowerOfTwo } from '../fabric/positions.js';
import { CompletionType, postCqe } from './cq.js';
import type { DpaEvents } from './events.js';
import { H, LAUNCH, LaunchState, OBJ, ObjKind } from './layout.js';
import { ASYNC_OPS, MAX_QUEUE, ObjState, WAIT, WAIT_SIZE, WaitOp, WaitState } from './objects.js';
import type { DpaTables } from './tables.js';


/** Releases launch slot `slot` if its wait event reached the threshold; true if it did. */
export function checkLaunch(dpa: DpaTables, events: DpaEvents, slot: number): boolean {
  const base = dpa.layout.launch(slot);
  if (Atomics.load(dpa.i32, (base + LAUNCH.STATE) / 4) !== LaunchState.GATED) return false;
  const index = dpa.view.getInt32(base + LAUNCH.WAIT_EVENT, true);
  let value: bigint;
  try {
    if (!dpa.live(index, dpa.view.getInt32(base + LAUNCH.WAIT_GEN, true))) throw new Error('its wait event was destroyed');
    value = events.get(index, 'doca_dpa_kernel_launch');
  } catch (err) {
    dropLaunch(dpa, slot, (err as Error).message);
    return false;
  }
  if (value < BigInt(dpa.view.getUint32(base + LAUNCH.WAIT_THRESHOLD, true))) return false;
  if (Atomics.compareExchange(dpa.i32, (base + LAUNCH.STATE) / 4, LaunchState.GATED, LaunchState.READY) !== LaunchState.GATED) return false;
  Atomics.sub(dpa.i32, H.GATED / 4, 1);
  dpa.sched.ready(dpa.layout.launchBits, slot);
  return true;
}

/**
 * A gated launch that can never start (its wait event was destroyed, or cannot be read): its slot is
 * freed and the DOCA log says which kernel will not run, rather than holding the slot for ever.
 */
export function dropLaunch(dpa: DpaTables, slot: number, why: string): void {
  if (Atomics.compareExchange(dpa.i32, (dpa.layout.launch(slot) + LAUNCH.STATE) / 4, LaunchState.GATED, LaunchState.FREE) !== LaunchState.GATED) return;
  Atomics.sub(dpa.i32, H.GATED / 4, 1);
  dpa.report(`kernel launch ${slot}: ${why}; the kernel will not run, and its completion event is not updated`);
}

/**
 * The wait list of async ops `ops` (its size and byte offset), checked as the completion rings are:
 * UNEXPECTED for a size that no async ops has or a list outside the arena; the async ops is then ended.
 */
export function waitList(dpa: DpaTables, ops: number, call: string): { size: number; list: number } {
  try {
    dpa.checkFault(ops, call);
    const size = dpa.u32(ops, ASYNC_OPS.SIZE);
    if (!isPowerOfTwo(size) || size > MAX_QUEUE) throw new DocaError('UNEXPECTED', call, `the async ops' entry says it holds ${size} operations, not a power of two up to ${MAX_QUEUE}`);
    return { size, list: dpa.arenaRange(dpa.u32(ops, ASYNC_OPS.LIST), size * WAIT_SIZE, "the async ops' wait list", call) };
  } catch (err) {
    dpa.fault(ops, 'UNEXPECTED', `${(err as Error).message}; its waits are dropped`);
    throw err;
  }
}

/** Completes the waits posted on async ops `ops` whose condition holds. */
export function checkWaits(dpa: DpaTables, events: DpaEvents, ops: number): void {
  const word = dpa.layout.waitBits / 4 + (ops >>> 5);
  const mask = 1 << (ops & 31);
  // Cleared before the look and set again if waits remain: a poster stores its wait, then sets the bit.
  Atomics.and(dpa.i32, word, ~mask);
  if (dpa.u32(ops, OBJ.KIND) !== ObjKind.ASYNC_OPS || dpa.load(ops, OBJ.STATE) !== ObjState.STARTED) return; // stopped: its waits go with it
  let size: number;
  let list: number;
  try {
    ({ size, list } = waitList(dpa, ops, 'doca_dpa_dev_sync_event_post_wait'));
  } catch {
    return; // ended (and logged): it is looked at no more
  }
  let left = 0;
  for (let i = 0; i < size; i++) {
    const at = list + i * WAIT_SIZE;
    if (Atomics.load(dpa.i32, (at + WAIT.STATE) / 4) !== WaitState.POSTED) continue;
    const index = dpa.view.getUint32(at + WAIT.EVENT, true);
    let value: bigint;
    try {
      if (!dpa.live(index, dpa.view.getInt32(at + WAIT.EVENT_GEN, true))) throw new Error('the sync event is no longer usable by the DPA');
      value = events.get(index, 'doca_dpa_dev_sync_event_post_wait');
    } catch (err) {
      dpa.report(`async ops ${ops}: a wait: ${(err as Error).message}; the wait is dropped`);
      Atomics.compareExchange(dpa.i32, (at + WAIT.STATE) / 4, WaitState.POSTED, WaitState.FREE);
      continue;
    }
    const operand = BigInt(dpa.view.getUint32(at + WAIT.VALUE, true));
    const holds = dpa.view.getUint32(at + WAIT.OP, true) === WaitOp.GT ? value > operand : value !== operand;
    if (!holds) left++;
    else if (Atomics.compareExchange(dpa.i32, (at + WAIT.STATE) / 4, WaitState.POSTED, WaitState.FREE) === WaitState.POSTED && !complete(dpa, ops, at)) left++;
  }
  if (left > 0) Atomics.or(dpa.i32, word, mask);
}

/**
 * Posts the completion of a wait on its async ops' completion queue (which may activate a thread); false
 * if the queue is full, and then the wait stays posted.
 */
function complete(dpa: DpaTables, ops: number, at: number): boolean {
  const cq = dpa.load(ops, ASYNC_OPS.COMPLETION) - 1;
  if (cq < 0 || !dpa.live(cq, dpa.load(ops, ASYNC_OPS.COMPLETION_GEN))) return true;
  try {
    postCqe(dpa, cq, CompletionType.SEND, dpa.u32(ops, ASYNC_OPS.USER_DATA), 0, 'doca_dpa_dev_sync_event_post_wait');
    return true;
  } catch (err) {
    dpa.report(`async ops ${ops}: ${(err as Error).message}; the wait stays posted`);
    Atomics.store(dpa.i32, (at + WAIT.STATE) / 4, WaitState.POSTED);
    return false;
  }
}

/** Looks at everything that waits for an event (an EU was rung with BIT_EVENT, or first arms its bell). */
export function checkAll(dpa: DpaTables, events: DpaEvents): void {
  if (Atomics.load(dpa.i32, H.GATED / 4) > 0) for (let slot = 0; slot < dpa.layout.dims.launches; slot++) checkLaunch(dpa, events, slot);
  const words = Math.ceil(dpa.layout.dims.objects / 32);
  for (let w = 0; w < words; w++) {
    let bits = Atomics.load(dpa.i32, dpa.layout.waitBits / 4 + w);
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const ops = w * 32 + 31 - Math.clz32(low);
      if (ops < dpa.layout.dims.objects) checkWaits(dpa, events, ops);
    }
  }
}
