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
export function subscribe(dpa: Dpa, run: DpaRun, reg: EventReg, call: string): void {
  if (reg.waiters) return;
  const waiters = new Waiters(reg.source.control);
  const ref = dpa._euBell(run, reg.index % run.layout.dims.eus, BIT_EVENT, call);
  if (!waiters.want(true, () => ref)) {
    waiters.close();
    throw new DocaError('NO_MEMORY', call, 'the sync event already has its maximum of waiting engines');
  }
  reg.waiters = waiters;
}

/** The registration of `event` with the running DPA (`getDpaHandle` checks what DOCA requires). */
function eventReg(dpa: Dpa, run: DpaRun, event: SyncEvent, what: string, call: string): EventReg {
  if (!(event instanceof SyncEvent)) throw new DocaError('INVALID_VALUE', call, `the ${what} event must be a SyncEvent, not ${describeValue(event)}`);
  event.getDpaHandle(dpa);
  return run.events.get(event)!;
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
  const run = dpa._running(call);
  if (!Number.isInteger(waitThreshold) || waitThreshold < 0 || waitThreshold > MAX_THRESHOLD) {
    throw new DocaError('INVALID_VALUE', call, `wait threshold ${describeValue(waitThreshold)} is outside [0, ${MAX_THRESHOLD}]`);
  }
  const max = dpa.getMaxThreadsPerKernel();
  if (!Number.isInteger(numThreads) || numThreads < 1 || numThreads > max) {
    throw new DocaError('INVALID_VALUE', call, `num_threads ${describeValue(numThreads)} is not in [1, ${max}] (doca_dpa_get_max_threads_per_kernel)`);
  }
  const fn = dpa._func(run, func, call);
  const values = argsOf(call, args);
  const count = u64(call, 'comp_count', compCount);
  const wait = waitEvent == null ? undefined : eventReg(dpa, run, waitEvent, 'wait', call);
  const comp = compEvent == null ? undefined : eventReg(dpa, run, compEvent, 'completion', call);
  if (wait) subscribe(dpa, run, wait, call);
  const slot = claim(run, run.layout.dims.launches, (i) => run.layout.launch(i) + LAUNCH.STATE, LaunchState.FREE, LaunchState.FILLING);
  if (slot < 0) throw new DocaError('NO_MEMORY', call, `all ${run.layout.dims.launches} kernel launch slots of ${dpa.name} are in use`);
  const base = run.layout.launch(slot);
  const v = run.tables.view;
  const i32 = run.tables.i32;
  v.setUint32(base + LAUNCH.FUNC, fn, true);
  v.setUint32(base + LAUNCH.NARGS, values.length, true);
  values.forEach((a, i) => v.setBigUint64(base + LAUNCH.ARGS + i * 8, a, true));
  v.setUint32(base + LAUNCH.THREADS, numThreads, true);
  v.setUint32(base + LAUNCH.COMP_OP, comp ? (op === 'set' ? CompOp.SET : CompOp.ADD) : CompOp.NONE, true);
  v.setInt32(base + LAUNCH.COMP_EVENT, comp ? comp.index : -1, true);
  v.setInt32(base + LAUNCH.COMP_GEN, comp ? run.objects.generation(comp.index) : 0, true);
  v.setBigUint64(base + LAUNCH.COMP_COUNT, count, true);
  v.setInt32(base + LAUNCH.WAIT_EVENT, wait ? wait.index : -1, true);
  v.setInt32(base + LAUNCH.WAIT_GEN, wait ? run.objects.generation(wait.index) : 0, true);
  v.setUint32(base + LAUNCH.WAIT_THRESHOLD, waitThreshold, true);
  Atomics.store(i32, (base + LAUNCH.FINISHED) / 4, 0);
  const generation = Atomics.add(i32, (base + LAUNCH.GEN) / 4, 1) + 1;
  Atomics.store(i32, (base + LAUNCH.NEXT_RANK) / 4, (generation & 0xffff) << 16);
  dpa._stat.c[Counter.DPA.KERNELS]!++;
  const reached = () => !wait || wait.source.peek() >= BigInt(waitThreshold);
  if (reached()) {
    Atomics.store(i32, (base + LAUNCH.STATE) / 4, LaunchState.READY);
    run.tables.sched.ready(run.layout.launchBits, slot);
    return;
  }
  Atomics.add(i32, H.GATED / 4, 1);
  Atomics.store(i32, (base + LAUNCH.STATE) / 4, LaunchState.GATED);
  // An update before GATED was visible rang nobody for this launch: look once more.
  if (reached() && Atomics.compareExchange(i32, (base + LAUNCH.STATE) / 4, LaunchState.GATED, LaunchState.READY) === LaunchState.GATED) {
    Atomics.sub(i32, H.GATED / 4, 1);
    run.tables.sched.ready(run.layout.launchBits, slot);
  }
}

/** Takes a slot whose state word is `free` (compare-and-swap to `taken`); -1 if none is. */
function claim(run: DpaRun, slots: number, stateAt: (i: number) => number, free: number, taken: number): number {
  for (let i = 0; i < slots; i++) if (Atomics.compareExchange(run.tables.i32, stateAt(i) / 4, free, taken) === free) return i;
  return -1;
}

function submitRpc(dpa: Dpa, run: DpaRun, func: DpaFuncRef, args: (bigint | number)[], call: string): number {
  const fn = dpa._func(run, func, call);
  const values = argsOf(call, args);
  const slot = claim(run, run.layout.dims.rpcs, (i) => run.layout.rpc(i) + RPC.STATE, RpcState.FREE, RpcState.FILLING);
  if (slot < 0) throw new DocaError('NO_MEMORY', call, `${run.layout.dims.rpcs} RPC calls of ${dpa.name} are already in flight`);
  const base = run.layout.rpc(slot);
  const v = run.tables.view;
  v.setUint32(base + RPC.FUNC, fn, true);
  v.setUint32(base + RPC.NARGS, values.length, true);
  values.forEach((a, i) => v.setBigUint64(base + RPC.ARGS + i * 8, a, true));
  Atomics.add(run.tables.i32, (base + RPC.GEN) / 4, 1);
  Atomics.store(run.tables.i32, (base + RPC.STATE) / 4, RpcState.READY);
  run.tables.sched.ready(run.layout.rpcBits, slot);
  dpa._stat.c[Counter.DPA.RPCS]!++;
  return slot;
}

/**
 * The state of RPC slot `slot`. A word that is no RPC state (execution units write it too) means the
 * DPA's tables are corrupt: the DPA enters its fatal state, which ends every wait for the call.
 */
function rpcState(run: DpaRun, slot: number): number {
  const state = Atomics.load(run.tables.i32, (run.layout.rpc(slot) + RPC.STATE) / 4);
  if (state < RpcState.FILLING || state > RpcState.FAILED) run.pool.fail(`RPC slot ${slot} holds state ${state}, which no RPC call is in`);
  return state;
}
const finished = (s: number) => s === RpcState.DONE || s === RpcState.FAILED;

/** Takes a finished call's result and frees its slot. */
function result(dpa: Dpa, run: DpaRun, slot: number, call: string): bigint {
  const base = run.layout.rpc(slot);
  const state = rpcState(run, slot);
  const value = run.tables.view.getBigUint64(base + RPC.RESULT, true);
  Atomics.store(run.tables.i32, (base + RPC.STATE) / 4, RpcState.FREE);
  if (state === RpcState.FAILED) throw new DocaError('INVALID_VALUE', call, `the RPC function of ${dpa.name} returned a value that is not a u64 (a bigint or a non-negative integer)`);
  return value;
}

/** Withdraws a call no EU took yet; false if one took it meanwhile. */
function withdraw(run: DpaRun, slot: number): boolean {
  return Atomics.compareExchange(run.tables.i32, (run.layout.rpc(slot) + RPC.STATE) / 4, RpcState.READY, RpcState.FREE) === RpcState.READY;
}

export function rpcSync(dpa: Dpa, func: DpaFuncRef, args: (bigint | number)[]): bigint {
  const call = 'doca_dpa_rpc';
  const run = dpa._running(call);
  const slot = submitRpc(dpa, run, func, args, call);
  try {
    let queued = true;
    while (!run.pool.waitSync(() => finished(rpcState(run, slot)), queued ? RPC_QUEUE_MS : 1000)) {
      if (queued && withdraw(run, slot)) throw new DocaError('TIME_OUT', call, `no execution unit of ${dpa.name} took the call within ${RPC_QUEUE_MS} ms (each runs a DPA thread that does not return?)`);
      queued = false; // running: the watchdog bounds it
    }
    dpa._running(call); // DRIVER if the DPA failed meanwhile
    return result(dpa, run, slot, call);
  } finally {
    if (run.pending.size > 0) pump(run); // the blocking wait disarmed the bell the promises wait on
  }
}

export function rpcAsync(dpa: Dpa, func: DpaFuncRef, args: (bigint | number)[]): Promise<bigint> {
  const call = 'doca_dpa_rpc';
  let run: DpaRun;
  let slot: number;
  try {
    run = dpa._running(call);
    slot = submitRpc(dpa, run, func, args, call);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<bigint>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (withdraw(run, slot)) settle(new DocaError('TIME_OUT', call, `no execution unit of ${dpa.name} took the call within ${RPC_QUEUE_MS} ms`));
      else pump(run); // taken (the watchdog bounds it), or its state word is no state: pump ends the DPA then
    }, RPC_QUEUE_MS);
    timer.unref();
    const settle = (err?: DocaError) => {
      clearTimeout(timer);
      run.pending.delete(slot);
      if (err) return reject(err);
      try {
        resolve(result(dpa, run, slot, call));
      } catch (e) {
        reject(e);
      }
    };
    run.pending.set(slot, settle);
    run.bell.watch(true, () => pump(run));
    pump(run);
  });
}

/** Settles the promises whose calls finished; keeps watching the owner's bell while any wait. */
function pump(run: DpaRun): void {
  for (;;) {
    for (const [slot, settle] of run.pending) if (finished(rpcState(run, slot))) settle();
    if (run.pending.size === 0) return run.bell.watch(false);
    run.bell.watch(true); // armed; one more look, since a call may have finished before the arming
    let any = false;
    for (const slot of run.pending.keys()) any ||= finished(rpcState(run, slot));
    if (!any) return;
  }
}
