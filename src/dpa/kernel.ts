/**
 * Kernel launches and RPC calls, the owner's side: both are written into a slot of the DPA's control
 * segment (layout.ts) and handed to the execution units through the ready bitmaps (scheduler.ts).
 *
 * A launch whose wait event is below its threshold waits GATED: the DPA holds an entry in that event's
 * waiter table (pointing at an EU's bell), so any update, from any thread or process, rings an EU,
 * which releases the launch once the value reaches the threshold (gated.ts). The owner looks once more
 * after publishing GATED, so an update in between is never missed. Each of the `numThreads` instances
 * takes a rank; the last to finish sets or adds on the completion event and frees the slot.
 *
 * An RPC call blocks its caller (`rpc`) in bounded slices on the owner's bell, or settles a promise
 * from the event loop (`rpcAsync`); either way the watchdog watches it, and a call no EU takes within
 * RPC_QUEUE_MS (every EU stuck in a polling thread, say) fails with TIME_OUT instead of waiting forever.
 */
import { DocaError, describeValue } from '../core/error.js';
import { Counter } from '../fabric/stats.js';
import { SyncEvent } from '../sync-event/sync-event.js';
import { Waiters } from '../sync-event/layout.js';
import type { DpaFuncRef } from './app.js';
import type { Dpa, DpaRun, EventReg } from './dpa.js';
import { BIT_EVENT, CompOp, H, LAUNCH, LaunchState, MAX_ARGS, RPC, RpcState } from './layout.js';

export type SyncEventLike = SyncEvent;

/** How long an RPC call may wait for an execution unit to take it. */
const RPC_QUEUE_MS = 30_000;
/** Largest wait threshold of a kernel launch (DOCA: valid values 0..254). */
const MAX_THRESHOLD = 254;

const u64 = (call: string, name: string, value: unknown): bigint => {
  const ok = typeof value === 'bigint' ? value >= 0n && value < 1n << 64n : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  if (!ok) throw new DocaError('INVALID_VALUE', call, `${name} ${describeValue(value)} is not a u64`);
  return BigInt(value as bigint | number);
};

function argsOf(call: string, args: (bigint | number)[]): bigint[] {
  if (args.length > MAX_ARGS) throw new DocaError('INVALID_VALUE', call, `${args.length} arguments; at most ${MAX_ARGS}`);
  return args.map((a, i) => u64(call, `argument ${i}`, a));
}

/** Gives the DPA an entry in `reg`'s event waiter table: every update rings an EU (bit BIT_EVENT). */
export function subscribe(dpa: Dpa, r: DpaRun, reg: EventReg, call: string): void {
  if (reg.waiters) return;
  const waiters = new Waiters(reg.source.control);
  const ref = dpa._euBell(r, reg.index % r.layout.dims.eus, BIT_EVENT, call);
  if (!waiters.want(true, () => ref)) {
    waiters.close();
    throw new DocaError('NO_MEMORY', call, 'the sync event already has its maximum of waiting engines');
  }
  reg.waiters = waiters;
}

/** The registration of `event` with the running DPA (`getDpaHandle` checks what DOCA requires). */
function eventReg(dpa: Dpa, r: DpaRun, event: SyncEvent, what: string, call: string): EventReg {
  if (!(event instanceof SyncEvent)) throw new DocaError('INVALID_VALUE', call, `the ${what} event must be a SyncEvent, not ${describeValue(event)}`);
  event.getDpaHandle(dpa);
  return r.events.get(event)!;
}

export function kernelLaunch(
  dpa: Dpa,
  call: string,
  op: 'set' | 'add',
  waitEvent: SyncEvent | undefined,
  waitThreshold: number,
  compEvent: SyncEvent | undefined,
  compCount: bigint | number,
  numThreads: number,
  func: DpaFuncRef,
  args: (bigint | number)[],
): void {
  const r = dpa._running(call);
  if (!Number.isInteger(waitThreshold) || waitThreshold < 0 || waitThreshold > MAX_THRESHOLD) {
    throw new DocaError('INVALID_VALUE', call, `wait threshold ${describeValue(waitThreshold)} is outside [0, ${MAX_THRESHOLD}]`);
  }
  const max = dpa.getMaxThreadsPerKernel();
  if (!Number.isInteger(numThreads) || numThreads < 1 || numThreads > max) {
    throw new DocaError('INVALID_VALUE', call, `num_threads ${describeValue(numThreads)} is not in [1, ${max}] (doca_dpa_get_max_threads_per_kernel)`);
  }
  const fn = dpa._func(r, func, call);
  const values = argsOf(call, args);
  const count = u64(call, 'comp_count', compCount);
  const wait = waitEvent == null ? undefined : eventReg(dpa, r, waitEvent, 'wait', call);
  const comp = compEvent == null ? undefined : eventReg(dpa, r, compEvent, 'completion', call);
  if (wait) subscribe(dpa, r, wait, call);
  const slot = claim(r, r.layout.dims.launches, (i) => r.layout.launch(i) + LAUNCH.STATE, LaunchState.FREE, LaunchState.FILLING);
  if (slot < 0) throw new DocaError('NO_MEMORY', call, `all ${r.layout.dims.launches} kernel launch slots of ${dpa.name} are in use`);
  const base = r.layout.launch(slot);
  const v = r.tables.view;
  const i32 = r.tables.i32;
  v.setUint32(base + LAUNCH.FUNC, fn, true);
  v.setUint32(base + LAUNCH.NARGS, values.length, true);
  values.forEach((a, i) => v.setBigUint64(base + LAUNCH.ARGS + i * 8, a, true));
  v.setUint32(base + LAUNCH.THREADS, numThreads, true);
  v.setUint32(base + LAUNCH.COMP_OP, comp ? (op === 'set' ? CompOp.SET : CompOp.ADD) : CompOp.NONE, true);
  v.setInt32(base + LAUNCH.COMP_EVENT, comp ? comp.index : -1, true);
  v.setInt32(base + LAUNCH.COMP_GEN, comp ? r.objects.generation(comp.index) : 0, true);
  v.setBigUint64(base + LAUNCH.COMP_COUNT, count, true);
  v.setInt32(base + LAUNCH.WAIT_EVENT, wait ? wait.index : -1, true);
  v.setInt32(base + LAUNCH.WAIT_GEN, wait ? r.objects.generation(wait.index) : 0, true);
  v.setUint32(base + LAUNCH.WAIT_THRESHOLD, waitThreshold, true);
  Atomics.store(i32, (base + LAUNCH.FINISHED) / 4, 0);
  const generation = Atomics.add(i32, (base + LAUNCH.GEN) / 4, 1) + 1;
  Atomics.store(i32, (base + LAUNCH.NEXT_RANK) / 4, (generation & 0xffff) << 16);
  dpa._stat.c[Counter.DPA.KERNELS]!++;
  const reached = () => !wait || wait.source.peek() >= BigInt(waitThreshold);
  if (reached()) {
    Atomics.store(i32, (base + LAUNCH.STATE) / 4, LaunchState.READY);
    r.tables.sched.ready(r.layout.launchBits, slot);
    return;
  }
  Atomics.add(i32, H.GATED / 4, 1);
  Atomics.store(i32, (base + LAUNCH.STATE) / 4, LaunchState.GATED);
  // An update before GATED was visible rang nobody for this launch: look once more.
  if (reached() && Atomics.compareExchange(i32, (base + LAUNCH.STATE) / 4, LaunchState.GATED, LaunchState.READY) === LaunchState.GATED) {
    Atomics.sub(i32, H.GATED / 4, 1);
    r.tables.sched.ready(r.layout.launchBits, slot);
  }
}

/** Takes a slot whose state word is `free` (compare-and-swap to `taken`); -1 if none is. */
function claim(r: DpaRun, slots: number, stateAt: (i: number) => number, free: number, taken: number): number {
  for (let i = 0; i < slots; i++) if (Atomics.compareExchange(r.tables.i32, stateAt(i) / 4, free, taken) === free) return i;
  return -1;
}

function submitRpc(dpa: Dpa, r: DpaRun, func: DpaFuncRef, args: (bigint | number)[], call: string): number {
  const fn = dpa._func(r, func, call);
  const values = argsOf(call, args);
  const slot = claim(r, r.layout.dims.rpcs, (i) => r.layout.rpc(i) + RPC.STATE, RpcState.FREE, RpcState.FILLING);
  if (slot < 0) throw new DocaError('NO_MEMORY', call, `${r.layout.dims.rpcs} RPC calls of ${dpa.name} are already in flight`);
  const base = r.layout.rpc(slot);
  const v = r.tables.view;
  v.setUint32(base + RPC.FUNC, fn, true);
  v.setUint32(base + RPC.NARGS, values.length, true);
  values.forEach((a, i) => v.setBigUint64(base + RPC.ARGS + i * 8, a, true));
  Atomics.add(r.tables.i32, (base + RPC.GEN) / 4, 1);
  Atomics.store(r.tables.i32, (base + RPC.STATE) / 4, RpcState.READY);
  r.tables.sched.ready(r.layout.rpcBits, slot);
  dpa._stat.c[Counter.DPA.RPCS]!++;
  return slot;
}

/**
 * The state of RPC slot `slot`. A word that is no RPC state (execution units write it too) means the
 * DPA's tables are corrupt: the DPA enters its fatal state, which ends every wait for the call.
 */
function rpcState(r: DpaRun, slot: number): number {
  const state = Atomics.load(r.tables.i32, (r.layout.rpc(slot) + RPC.STATE) / 4);
  if (state < RpcState.FILLING || state > RpcState.FAILED) r.pool.fail(`RPC slot ${slot} holds state ${state}, which no RPC call is in`);
  return state;
}
const finished = (s: number) => s === RpcState.DONE || s === RpcState.FAILED;

/** Takes a finished call's result and frees its slot. */
function result(dpa: Dpa, r: DpaRun, slot: number, call: string): bigint {
  const base = r.layout.rpc(slot);
  const state = rpcState(r, slot);
  const value = r.tables.view.getBigUint64(base + RPC.RESULT, true);
  Atomics.store(r.tables.i32, (base + RPC.STATE) / 4, RpcState.FREE);
  if (state === RpcState.FAILED) throw new DocaError('INVALID_VALUE', call, `the RPC function of ${dpa.name} returned a value that is not a u64 (a bigint or a non-negative integer)`);
  return value;
}

/** Withdraws a call no EU took yet; false if one took it meanwhile. */
function withdraw(r: DpaRun, slot: number): boolean {
  return Atomics.compareExchange(r.tables.i32, (r.layout.rpc(slot) + RPC.STATE) / 4, RpcState.READY, RpcState.FREE) === RpcState.READY;
}

export function rpcSync(dpa: Dpa, func: DpaFuncRef, args: (bigint | number)[]): bigint {
  const call = 'doca_dpa_rpc';
  const r = dpa._running(call);
  const slot = submitRpc(dpa, r, func, args, call);
  try {
    let queued = true;
    while (!r.pool.waitSync(() => finished(rpcState(r, slot)), queued ? RPC_QUEUE_MS : 1000)) {
      if (queued && withdraw(r, slot)) throw new DocaError('TIME_OUT', call, `no execution unit of ${dpa.name} took the call within ${RPC_QUEUE_MS} ms (each runs a DPA thread that does not return?)`);
      queued = false; // running: the watchdog bounds it
    }
    dpa._running(call); // DRIVER if the DPA failed meanwhile
    return result(dpa, r, slot, call);
  } finally {
    if (r.pending.size > 0) pump(r); // the blocking wait disarmed the bell the promises wait on
  }
}

export function rpcAsync(dpa: Dpa, func: DpaFuncRef, args: (bigint | number)[]): Promise<bigint> {
  const call = 'doca_dpa_rpc';
  let r: DpaRun;
  let slot: number;
  try {
    r = dpa._running(call);
    slot = submitRpc(dpa, r, func, args, call);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<bigint>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (withdraw(r, slot)) settle(new DocaError('TIME_OUT', call, `no execution unit of ${dpa.name} took the call within ${RPC_QUEUE_MS} ms`));
      else pump(r); // taken (the watchdog bounds it), or its state word is no state: pump ends the DPA then
    }, RPC_QUEUE_MS);
    timer.unref();
    const settle = (err?: DocaError) => {
      clearTimeout(timer);
      r.pending.delete(slot);
      if (err) return reject(err);
      try {
        resolve(result(dpa, r, slot, call));
      } catch (e) {
        reject(e);
      }
    };
    r.pending.set(slot, settle);
    r.bell.watch(true, () => pump(r));
    pump(r);
  });
}

/** Settles the promises whose calls finished; keeps watching the owner's bell while any wait. */
function pump(r: DpaRun): void {
  for (;;) {
    for (const [slot, settle] of r.pending) if (finished(rpcState(r, slot))) settle();
    if (r.pending.size === 0) return r.bell.watch(false);
    r.bell.watch(true); // armed; one more look, since a call may have finished before the arming
    let any = false;
    for (const slot of r.pending.keys()) any ||= finished(rpcState(r, slot));
    if (!any) return;
  }
}
