/**
 * The DPA (`struct doca_dpa`): an emulated Data Path Accelerator of a device, running one DPA
 * application on a few execution units (worker threads of the process that started it, eu-pool.ts).
 * Its state (threads, completions, kernel launches, RPC calls, handles) lives in a control segment that
 * every EU maps (layout.ts), its memory in a heap segment; both go with `destroy()`, the workers with
 * `stop()`, and all of it with the process.
 *
 * A device's DPU runs at most `caps.dpa.maxDpas` started DPAs at once, host and Arm side together,
 * across processes: each started DPA holds one of that many names (fabric/rendezvous.ts claimName),
 * which the kernel releases when its process dies.
 */
import type { Server } from 'node:net';
import { capabilityReport } from '../core/caps.js';
import type { Dev } from '../core/dev.js';
import type { Devinfo } from '../core/devinfo.js';
import { dpaMapTable } from '../core/dpa-maps.js';
import { newHandleTag, releaseHandleTag } from '../core/dpa-handle.js';
import { DocaError, describeValue } from '../core/error.js';
import { type LogLevel, logRegisterSource, sdkLogSource } from '../core/log.js';
import { publishBellRef, readBellRef } from '../fabric/doorbell.js';
import { digest } from '../fabric/names.js';
import { claimName } from '../fabric/rendezvous.js';
import { encodeDescriptor, Segment } from '../fabric/segment.js';
import { DpaStatState, StatKind, type StatRecord, statRecord, statsFor } from '../fabric/stats.js';
import { Waiters } from '../sync-event/layout.js';
import type { DpaEventSource, DpaEventTarget } from '../sync-event/dpa-handle.js';
import { DpaApp, DpaFunc, type DpaFuncRef } from './app.js';
import { Arena } from './arena.js';
import { EuPool } from './eu-pool.js';
import { kernelLaunch, rpcAsync, rpcSync, subscribe } from './kernel.js';
import { dropLaunch } from './gated.js';
import { BIT_EVENT, createDpaSegment, type DpaLayout, EU, H, LAUNCH, LaunchState, ObjKind } from './layout.js';
import { d2hMemcpy, h2dMemcpy, HEAP_BASE, memAlloc, memFree, memset } from './memory.js';
import type { DpaObject } from './object.js';
import { ObjectTable, ObjState, SE_SUBSCRIBER, SYNC_EVENT } from './objects.js';
import { OwnerBell } from './owner-bell.js';
import type { SyncEventLike } from './kernel.js';
import { DpaTables } from './tables.js';

const log = sdkLogSource('dpa');
/** Kernel launches and RPC calls a DPA holds at once. */
const LAUNCH_SLOTS = 256;
const RPC_SLOTS = 64;
/** Bytes of a DPA's control segment for completion rings, wait lists and consumer lists. */
const ARENA_BYTES = 4 << 20;

/** `doca_dpa_cap_is_supported`: the DPU's Arm side and host physical functions have a DPA. */
export const dpaCapIsSupported = (d: Devinfo): boolean => capabilityReport(d.spec).dpa.supported;

/** A sync event registered with a started DPA (its object entry, and its waiter table entry if any). */
export interface EventReg {
  index: number;
  handle: bigint;
  source: DpaEventSource;
  waiters?: Waiters;
}

/** Everything a started DPA holds; gone at `stop()`. */
export interface DpaRun {
  readonly segment: Segment;
  readonly layout: DpaLayout;
  readonly tag: number;
  readonly tables: DpaTables;
  readonly objects: ObjectTable;
  readonly pool: EuPool;
  readonly bell: OwnerBell;
  readonly heap: Segment;
  readonly heapArena: Arena;
  readonly arena: Arena;
  readonly lock: Server;
  /** Export name -> function index, as every EU numbers them. */
  readonly names: Map<string, number>;
  readonly events: Map<object, EventReg>;
  readonly remoteNets: Map<object, number>;
  /** Object index of the DPA's own handle (`doca_dpa_get_dpa_handle`). */
  readonly self: number;
  /** RPC calls waited for by promises (slot -> settle). */
  readonly pending: Map<number, (err?: DocaError) => void>;
}

type State = 'created' | 'started' | 'fatal' | 'stopped' | 'destroyed';

/**
 * The DPA, `struct doca_dpa` (`doca_dpa_create`): an emulated Data Path Accelerator of a device, running
 * one DPA application on a few execution units (worker threads of the process that starts it). It runs
 * kernels (`doca_dpa_kernel_launch_update_*`), RPCs (`doca_dpa_rpc`) and DPA threads, and owns DPA memory.
 *
 * @example
 * ```ts
 * // doca_dpa_create(dev, &dpa); doca_dpa_set_app(dpa, app); doca_dpa_start(dpa); doca_dpa_rpc(dpa, &add, &ret, 40, 2)
 * const dpa = Dpa.create(openDeviceByPci('03:00.0'));
 * dpa.setApp(DpaApp.create(new URL('./hello.js', import.meta.url)));
 * dpa.start();
 * console.log(dpa.rpc('add', 40n, 2n)); // 42n; rpcAsync() is the promise form
 * ```
 */
export class Dpa implements DpaEventTarget {
  private state: State = 'created';
  private app: DpaApp | undefined;
  private logLevel = 50;
  private current: DpaRun | undefined;
  private fatalReason: string | undefined;
  /** `getLastError` returned the fatal error: it is not reported again. */
  private errorTaken = false;
  private lastPool: EuPool | undefined;
  private readonly children = new Set<DpaObject>();
  private readonly caps;
  readonly name: string;
  /** What observers of the fabric see of it (fabric/stats.ts DPA): threads, kernels, rpcs; its state. */
  private readonly stat: StatRecord;

  private constructor(readonly dev: Dev) {
    this.caps = capabilityReport(dev.asDevinfo().spec).dpa;
    this.name = `DPA of ${dev.asDevinfo().spec.pci}`;
    this.stat = statRecord(dev.fabric.dir, StatKind.DPA, this.name, dev._stat);
  }

  /** `doca_dpa_create`: a DPA on `dev` (NOT_SUPPORTED on a device without one: a host VF or SF). */
  static create(dev: Dev): Dpa {
    const call = 'doca_dpa_create';
    if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, `the device must be open (got ${dev?.isOpen === false ? `${dev.name}, closed` : describeValue(dev)})`);
    if (!dpaCapIsSupported(dev.asDevinfo())) throw new DocaError('NOT_SUPPORTED', call, `${dev.name} has no DPA (only the DPU's Arm side and host physical functions do)`);
    const dpa = new Dpa(dev);
    dev._acquire(dpa, call);
    return dpa;
  }

  /** `doca_dpa_set_app`: the application its execution units run; before start. */
  setApp(app: DpaApp): void {
    const call = 'doca_dpa_set_app';
    this.configurable(call);
    if (!(app instanceof DpaApp)) throw new DocaError('INVALID_VALUE', call, `expected a DpaApp, got ${describeValue(app)}`);
    this.app = app;
  }

  /** `doca_dpa_get_app`. */
  getApp(): DpaApp | undefined {
    return this.app;
  }

  /** `doca_dpa_set_log_level`: the most verbose device log level (`DevLogLevel`) that reaches the log. */
  setLogLevel(level: number): void {
    const call = 'doca_dpa_set_log_level';
    if (![10, 30, 40, 50, 60].includes(level)) throw new DocaError('INVALID_VALUE', call, `log level ${describeValue(level)} is not one of 10, 30, 40, 50, 60 (DevLogLevel)`);
    this.alive(call);
    this.logLevel = level;
    if (this.current) new DataView(this.current.segment.u8.buffer).setUint32(H.LOG_LEVEL, level, true);
  }

  /** `doca_dpa_get_log_level`. */
  getLogLevel(): number {
    return this.logLevel;
  }

  /** `doca_dpa_get_max_threads_per_kernel`. */
  getMaxThreadsPerKernel(): number {
    return this.caps.maxThreadsPerKernel;
  }

  /** `doca_dpa_get_kernel_max_run_time`: seconds a kernel or RPC may run before the DPA turns fatal. */
  getKernelMaxRunTime(): number {
    return this.caps.kernelMaxRunTimeMs / 1000;
  }

  /** `doca_dpa_get_total_num_eus_available`: the execution units (worker threads) it runs on. */
  getTotalNumEusAvailable(): number {
    return this.caps.numEus;
  }

  /**
   * `doca_dpa_start`: starts the execution units, each importing the application, and returns once
   * all have. DRIVER when the DPU already runs `caps.dpa.maxDpas` DPAs; INITIALIZATION when the
   * application cannot be loaded.
   */
  start(): void {
    const call = 'doca_dpa_start';
    this.configurable(call);
    if (!this.app) throw new DocaError('BAD_STATE', call, `${this.name} has no application (setApp)`);
    const made: (() => void)[] = [];
    try {
      this.current = this.launch(this.app, call, made);
    } catch (err) {
      for (const undo of made.reverse()) undo();
      throw err;
    }
    this.state = 'started';
    this.stat.setState(DpaStatState.STARTED);
    this.fatalReason = undefined;
    this.errorTaken = false;
  }

  /**
   * `doca_dpa_stop`: ends the execution units (a DPA thread still in its function is interrupted).
   * IN_USE while DPA objects exist: destroy threads, completions and the rest first.
   */
  stop(): void {
    const call = 'doca_dpa_stop';
    this.alive(call);
    if (this.state !== 'started' && this.state !== 'fatal') throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    if (this.children.size > 0) {
      throw new DocaError('IN_USE', call, `${this.name} still has ${[...this.children].map((c) => c.name).join(', ')}; destroy them first`);
    }
    this.teardown();
    this.state = 'stopped';
    this.stat.setState(DpaStatState.STOPPED);
  }

  /** `doca_dpa_destroy`: stops it if started (IN_USE while DPA objects exist) and releases the device. */
  destroy(): void {
    if (this.state === 'destroyed') return;
    if (this.state === 'started' || this.state === 'fatal') this.stop();
    this.state = 'destroyed';
    this.stat.release();
    this.dev._release(this);
  }

  /** `await using dpa = ...`: destroys it, then waits until every execution unit thread has exited. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.destroy();
    await this.exited();
  }

  /** Resolves once every execution unit thread of the last start has exited (after `stop`). */
  exited(): Promise<void> {
    return this.lastPool?.exited() ?? Promise.resolve();
  }

  /**
   * `doca_dpa_peek_at_last_error`: undefined while the DPA is healthy; once it crashed (DPA code threw,
   * an execution unit died, a kernel ran past the max run time), a BAD_STATE error saying why (the DPA
   * must then be destroyed). It does not reset the error.
   */
  peekAtLastError(): DocaError | undefined {
    this.current?.pool.check();
    return this.fatalReason === undefined || this.errorTaken ? undefined : new DocaError('BAD_STATE', 'doca_dpa_peek_at_last_error', `error on the DPA: ${this.fatalReason}`);
  }

  /**
   * `doca_dpa_get_last_error`: as `peekAtLastError`, and resets it: the next call returns undefined
   * until the DPA reports another error. The DPA stays in its fatal state (calls that need it still fail
   * with DRIVER): only `stop` and `destroy` help it.
   */
  getLastError(): DocaError | undefined {
    const error = this.peekAtLastError();
    if (error) this.errorTaken = true;
    return error;
  }

  /** `doca_dpa_get_dpa_handle`: the DPA's own handle (`doca_dpa_dev_device_set`). */
  getDpaHandle(): bigint {
    const run = this._running('doca_dpa_get_dpa_handle');
    return run.objects.handle(ObjKind.DPA, run.self);
  }

  /**
   * `doca_dpa_kernel_launch_update_set`: runs `numThreads` instances of `func(...args)` once
   * `waitEvent` reaches `waitThreshold` (0..254; no event: at once), then sets `compEvent` (if any) to
   * `compCount`. `numThreads` at most `getMaxThreadsPerKernel()`.
   */
  kernelLaunchUpdateSet(waitEvent: SyncEventLike | undefined, waitThreshold: number, compEvent: SyncEventLike | undefined, compCount: bigint | number, numThreads: number, func: DpaFuncRef, ...args: (bigint | number)[]): void {
    kernelLaunch(this, 'doca_dpa_kernel_launch_update_set', 'set', waitEvent, waitThreshold, compEvent, compCount, numThreads, func, args);
  }

  /** `doca_dpa_kernel_launch_update_add`: as `kernelLaunchUpdateSet`, adding `compCount` to `compEvent`. */
  kernelLaunchUpdateAdd(waitEvent: SyncEventLike | undefined, waitThreshold: number, compEvent: SyncEventLike | undefined, compCount: bigint | number, numThreads: number, func: DpaFuncRef, ...args: (bigint | number)[]): void {
    kernelLaunch(this, 'doca_dpa_kernel_launch_update_add', 'add', waitEvent, waitThreshold, compEvent, compCount, numThreads, func, args);
  }

  /**
   * `doca_dpa_rpc`: runs `func(...args)` on an execution unit and returns its u64, blocking this thread
   * as DOCA does (bounded: the watchdog, and a queueing bound when every EU stays busy). DRIVER if the
   * DPA fails meanwhile.
   */
  rpc(func: DpaFuncRef, ...args: (bigint | number)[]): bigint {
    return rpcSync(this, func, args);
  }

  /** The promise form of `rpc`: the event loop stays free while the call runs. */
  rpcAsync(func: DpaFuncRef, ...args: (bigint | number)[]): Promise<bigint> {
    return rpcAsync(this, func, args);
  }

  /** `doca_dpa_mem_alloc`: `size` bytes of DPA memory (zeroed the first time); its DPA pointer. */
  memAlloc(size: number): bigint {
    return memAlloc(this._running('doca_dpa_mem_alloc'), size);
  }

  /** `doca_dpa_mem_free`: a pointer from `memAlloc`. */
  memFree(ptr: bigint): void {
    memFree(this._running('doca_dpa_mem_free'), ptr);
  }

  /** `doca_dpa_h2d_memcpy`: copies `src` (or its first `size` bytes) to DPA memory at `dst`. */
  h2dMemcpy(dst: bigint, src: Uint8Array, size = src?.length): void {
    h2dMemcpy(this._running('doca_dpa_h2d_memcpy'), dst, src, size);
  }

  /** `doca_dpa_d2h_memcpy`: copies `size` bytes (default `dst.length`) of DPA memory at `src` into `dst`. */
  d2hMemcpy(dst: Uint8Array, src: bigint, size = dst?.length): void {
    d2hMemcpy(this._running('doca_dpa_d2h_memcpy'), dst, src, size);
  }

  /** `doca_dpa_memset`: sets `size` bytes of DPA memory at `ptr` to `value`. */
  memset(ptr: bigint, value: number, size: number): void {
    memset(this._running('doca_dpa_memset'), ptr, value, size);
  }

  /** True while started and not fatal. */
  get isStarted(): boolean {
    return this.state === 'started';
  }

  // ---- for DPA objects, sync events, MsgQs -------------------------------------------------------

  /** @internal the started DPA: BAD_STATE if not started or destroyed, DRIVER once fatal. */
  _running(call: string): DpaRun {
    if (this.state === 'destroyed') throw new DocaError('BAD_STATE', call, `${this.name} was destroyed`);
    this.current?.pool.check();
    if (this.state === 'fatal') throw new DocaError('DRIVER', call, `${this.name} is in its fatal state: ${this.fatalReason}`);
    if (this.state !== 'started' || !this.current) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    return this.current;
  }

  /** @internal the function index of `func` in the running application. */
  _func(run: DpaRun, func: DpaFuncRef, call: string): number {
    const name = func instanceof DpaFunc ? func.name : func;
    if (func instanceof DpaFunc && func.app !== this.app) throw new DocaError('INVALID_VALUE', call, `${func.name} is a function of ${func.app.getName()}, not of ${this.app!.getName()}`);
    const index = typeof name === 'string' ? run.names.get(name) : undefined;
    if (index === undefined) {
      throw new DocaError('INVALID_VALUE', call, `${describeValue(name)} is not a function exported by ${this.app!.getName()} (it exports ${[...run.names.keys()].join(', ') || 'none'})`);
    }
    return index;
  }

  /** @internal its introspection record: its threads hang below it, kernels and RPCs count on it. */
  get _stat(): StatRecord {
    return this.stat;
  }

  /** @internal */
  _adopt(child: DpaObject): void {
    this.children.add(child);
  }

  /** @internal */
  _orphan(child: DpaObject): void {
    this.children.delete(child);
  }

  /** @internal `SyncEvent.getDpaHandle`: the event's handle on this DPA (registered once per start). */
  _syncEventHandle(owner: object, source: DpaEventSource, call: string): bigint {
    const run = this._running(call);
    const known = run.events.get(owner);
    if (known) return known.handle;
    const index = run.objects.allocate(ObjKind.SYNC_EVENT, call);
    const v = run.tables.view;
    encodeDescriptor(source.control.descriptor, v, run.objects.at(index, SYNC_EVENT.CONTROL));
    encodeDescriptor(source.value.segment.descriptor, v, run.objects.at(index, SYNC_EVENT.VALUE));
    v.setFloat64(run.objects.at(index, SYNC_EVENT.VALUE_OFFSET), source.value.offset, true);
    v.setUint32(run.objects.at(index, SYNC_EVENT.FLAGS), source.subscriberIsDpa ? SE_SUBSCRIBER : 0, true);
    run.objects.setState(index, ObjState.STARTED);
    const reg: EventReg = { index, handle: run.objects.handle(ObjKind.SYNC_EVENT, index), source };
    run.events.set(owner, reg);
    if (source.subscriberIsDpa) {
      try {
        subscribe(this, run, reg, call);
      } catch (err) {
        run.events.delete(owner);
        run.objects.release(index);
        throw err;
      }
    }
    return reg.handle;
  }

  /** @internal the event is destroyed: its handle stops working, its waiter entry is given back. */
  _syncEventGone(owner: object): void {
    const run = this.current;
    const reg = run?.events.get(owner);
    if (!run || !reg) return;
    reg.waiters?.release();
    reg.waiters?.close();
    run.objects.release(reg.index);
    run.events.delete(owner);
    // Launches gated on it can never start: their slots are freed (and logged), not held for ever.
    for (let slot = 0; slot < run.layout.dims.launches; slot++) {
      const base = run.layout.launch(slot);
      if (Atomics.load(run.tables.i32, (base + LAUNCH.STATE) / 4) === LaunchState.GATED && run.tables.view.getInt32(base + LAUNCH.WAIT_EVENT, true) === reg.index) dropLaunch(run.tables, slot, 'its wait event was destroyed');
    }
    // Waits posted on it are dropped by the unit that watched it, when it looks (gated.ts).
    run.tables.sched.ringEu(reg.index % run.layout.dims.eus, BIT_EVENT);
  }

  /** @internal `SyncEventRemoteNet.getDpaHandle`. */
  _remoteNetHandle(owner: object, call: string): bigint {
    const run = this._running(call);
    let index = run.remoteNets.get(owner);
    if (index === undefined) {
      index = run.objects.allocate(ObjKind.REMOTE_NET_EVENT, call);
      run.objects.setState(index, ObjState.STARTED);
      run.remoteNets.set(owner, index);
    }
    return run.objects.handle(ObjKind.REMOTE_NET_EVENT, index);
  }

  /** @internal the reference to EU `e`'s bell with bit `bit` (for waiter tables and MsgQ entries). */
  _euBell(run: DpaRun, e: number, bit: number, call: string): { segment: Segment['descriptor']; bit: number } {
    const ref = readBellRef(run.segment, run.layout.eu(e) + EU.BELL, call);
    if (!ref) throw new DocaError('DRIVER', call, `execution unit ${e} has no doorbell`);
    return { segment: ref.segment, bit };
  }

  /** @internal the DPA entered its fatal state. */
  _fatal(reason: string): void {
    if (this.state !== 'started') return;
    this.state = 'fatal';
    this.stat.setState(DpaStatState.FATAL);
    this.fatalReason = reason;
    log.err(`${this.name} is in its fatal state: ${reason}`);
    if (this.current) this.failPending(this.current, `${this.name} failed: ${reason}`);
    // What the CPU sends to a dead DPA is refused from now on, rather than queued for nobody.
    for (const child of this.children) child._dpaFailed();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private launch(app: DpaApp, call: string, made: (() => void)[]): DpaRun {
    const spec = this.dev.asDevinfo().spec;
    const lock = claimSlot(this.dev, spec.dpu, this.caps.maxDpas, call);
    made.push(() => lock.close());
    const tag = newHandleTag();
    made.push(() => releaseHandleTag(tag));
    const { segment, layout } = createDpaSegment({ eus: this.caps.numEus, objects: this.caps.maxObjects, launches: LAUNCH_SLOTS, rpcs: RPC_SLOTS, arena: ARENA_BYTES }, tag, this.logLevel);
    made.push(() => segment.close());
    const heap = Segment.create('dpaheap', this.caps.heapSize);
    made.push(() => heap.close());
    const bell = new OwnerBell();
    made.push(() => bell.close());
    publishBellRef(segment, H.OWNER_BELL, bell.ref);
    const tables = new DpaTables(segment, layout, tag);
    made.push(() => tables.sched.close());
    const devLog = logRegisterSource(`DPA::${app.getName()}`);
    const pool: EuPool = new EuPool({
      segment,
      layout,
      heap: heap.descriptor,
      maps: dpaMapTable().segment.descriptor,
      heapBase: HEAP_BASE,
      app: app.url,
      dev: spec.pci.toString(),
      bell,
      sched: tables.sched,
      maxRunMs: this.caps.kernelMaxRunTimeMs,
      stats: statsFor(this.dev.fabric.dir)?.segment.descriptor,
      onLog: (level, text) => devLog.log(level as LogLevel, text),
      onFatal: (reason) => this._fatal(reason),
    });
    made.push(() => pool.stop());
    pool.start(call);
    this.lastPool = pool;
    const objects = new ObjectTable(segment, layout, tag);
    const self = objects.allocate(ObjKind.DPA, call);
    objects.setState(self, ObjState.STARTED);
    return {
      segment,
      layout,
      tag,
      tables,
      objects,
      pool,
      bell,
      heap,
      heapArena: new Arena(64, heap.size - 64),
      arena: new Arena(layout.arena, layout.dims.arena),
      lock,
      names: new Map(pool.names.map((n, i) => [n, i])),
      events: new Map(),
      remoteNets: new Map(),
      self,
      pending: new Map(),
    };
  }

  /** Ends a start: the workers, the waiter entries, the segments, the DPU slot. */
  private teardown(): void {
    const run = this.current;
    if (!run) return;
    this.current = undefined;
    run.pool.stop();
    this.failPending(run, `${this.name} stopped before the call finished`);
    for (const reg of run.events.values()) {
      reg.waiters?.release();
      reg.waiters?.close();
    }
    run.tables.sched.close();
    run.bell.close();
    run.heap.close();
    run.segment.close();
    run.lock.close();
    releaseHandleTag(run.tag);
  }

  /** RPC promises still waiting fail (DRIVER): the DPA failed or stopped under them. */
  private failPending(run: DpaRun, why: string): void {
    for (const [slot, settle] of run.pending) {
      run.pending.delete(slot);
      settle(new DocaError('DRIVER', 'doca_dpa_rpc', why));
    }
    run.bell.watch(false);
  }

  private alive(call: string): void {
    if (this.state === 'destroyed') throw new DocaError('BAD_STATE', call, `${this.name} was destroyed`);
  }

  private configurable(call: string): void {
    this.alive(call);
    if (this.state !== 'created' && this.state !== 'stopped') throw new DocaError('BAD_STATE', call, `${this.name} is ${this.state}; stop it first`);
  }
}

/** Takes one of the DPU's `max` DPA names; DRIVER when all are taken (the DPU runs `max` DPAs). */
function claimSlot(dev: Dev, dpu: string, max: number, call: string): Server {
  const key = digest(dpu, 12);
  for (let i = 0; i < max; i++) {
    try {
      return claimName(dev.fabric, 'dpa', `${key}-${i}`, call);
    } catch (err) {
      if (!DocaError.is(err, 'ALREADY_EXIST')) throw err;
    }
  }
  throw new DocaError('DRIVER', call, `the DPU ${dpu} already runs ${max} DPAs (host and Arm side together); stop one first`);
}
