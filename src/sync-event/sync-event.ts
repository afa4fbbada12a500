/**
 * DOCA Sync Event (doca_sync_event.h): a 64-bit counter shared across processes of the fabric (and
 * reachable from other nodes over TCP), with set/add/get, busy and yielding waits, and asynchronous tasks
 * when used as a context. The creator's CPU handle is the only one that can be configured; the handle
 * another process makes from an exported blob (`createFromExport`) works on the same counter.
 *
 * The counter lives in a control segment the creator makes at its first start (or in memory the program
 * supplied with `setAddr` / `setDocaBuf`). All processes are on one machine, so "near the subscriber"
 * is recorded (`placement`) but makes no difference to the emulation.
 */
import type { DocaBuf } from '../core/buf.js';
import { CtxState } from '../core/ctx.js';
import type { Dev } from '../core/dev.js';
import { DocaError } from '../core/error.js';
import { sharedLocation } from '../core/memory.js';
import { AccessFlag } from '../core/mmap.js';
import { type ExportSlot, exportIsValid, revokeExportSlot } from '../fabric/exports.js';
import type { ProcessIdentity } from '../fabric/liveness.js';
import { type Segment, yieldCpu } from '../fabric/segment.js';
import { Counter, detachedRecord, StatKind, type StatRecord, statRecord } from '../fabric/stats.js';
import { syncEventCapIsExportToDpaSupported, syncEventCapIsExportToRemoteNetSupported } from './caps.js';
import { Condition, storeLastRead, toU64, type WaitOp } from './condition.js';
import { SyncEventContext } from './ctx.js';
import { type DpaEventTarget, isDpaTarget } from './dpa-handle.js';
import { exportPci, importPci, type ImportedEvent } from './export.js';
import { createControl, SE_DESTROYED, SE_STATE, SE_VALUE, Waiters } from './layout.js';
import { type RemoteNetOptions, RemoteNetServer } from './remote-net-server.js';

/** Its counters' indices, by name (plain constants: a busy path indexes with them as with literals). */
const { UPDATES, VALUE, WAITERS } = Counter.SYNC_EVENT;

/** Where a publisher or subscriber runs (`doca_sync_event_add_*_location_*`). */
export type SyncEventLocation = 'cpu' | 'dpa' | 'gpu' | 'remote_pci' | 'remote_net';

/** Bound on how long a failed liveness answer may lag in a busy wait (the check costs microseconds). */
const LIVENESS_EVERY = 4096;

/**
 * Options of the synchronous waits. DOCA's waits have no timeout (the default here too); a blocking wait
 * holds the thread, so an AbortSignal could never fire during one: only a timeout is offered.
 */
export interface SyncWaitOptions {
  /** Milliseconds before the wait gives up with TIME_OUT (default: none, as in DOCA). */
  timeoutMs?: number;
}

/** The waits' default options (one object: a default `{}` would be a new one per call). */
const NO_OPTIONS: SyncWaitOptions = Object.freeze({});
/** The waits' default mask, all 64 bits (made once: `-1n` is an expression, a new BigInt per call). */
const ALL_BITS = -1n;

/**
 * A sync event, `struct doca_sync_event` (`doca_sync_event_create`): a 64-bit counter shared across the
 * processes of the fabric (and other nodes over TCP), with set, add, get and waits, or, as a context
 * (`asCtx()`), asynchronous tasks. The creator's handle is configured (publisher and subscriber
 * locations) and exported; `createFromExport` makes a handle on the same counter in another process.
 *
 * @example
 * ```ts
 * // doca_sync_event_create(&se); doca_sync_event_add_publisher_location_remote_pci(se); ..._add_subscriber_location_cpu(se, dev)
 * const event = SyncEvent.create();
 * event.addPublisherLocationRemotePci();
 * event.addSubscriberLocationCpu(dev);
 * event.start();
 * const blob = event.exportToRemotePci(dev); // the other side: SyncEvent.createFromExport(itsDev, blob)
 * event.waitGtYield(0n, -1n, { timeoutMs: 10_000 }); // until the peer's updateAdd(1n)
 * ```
 */
export class SyncEvent {
  private publisher: SyncEventLocation | undefined;
  private subscriber: SyncEventLocation | undefined;
  /** The device capabilities are asked of: a cpu location's, or the importing one's. */
  private capDev: Dev | undefined;
  /** The permissions of the map behind `setDocaBuf` memory (export checks them). */
  private bufPermissions: number | undefined;
  private userValue: { array: BigUint64Array; index: number; memory: Uint8Array } | undefined;
  private control: Segment | undefined;
  private waiters: Waiters | undefined;
  private values: BigUint64Array | undefined;
  private valueIndex = 0;
  private mode: 'none' | 'sync' | 'ctx' = 'none';
  private syncStarted = false;
  private exportSlot: ExportSlot | undefined;
  private netServer: RemoteNetServer | undefined;
  private readonly ctx: SyncEventContext;
  /** The synchronous waits' condition, set by each (a wait holds the thread: one at a time). */
  private readonly cond = new Condition();
  /** DPAs holding a handle of this event (`getDpaHandle`): told when it is destroyed. */
  private readonly dpaTargets = new Set<DpaEventTarget>();
  /** The DPAs of its locations, each with its role ('both' when one DPA is publisher and subscriber). */
  private readonly dpaLocations = new Map<DpaEventTarget, 'publisher' | 'subscriber' | 'both'>();
  /** What observers of the fabric see of this handle (fabric/stats.ts SYNC_EVENT), from its first start. */
  private stat: StatRecord = detachedRecord();
  /** The fabric of a DPA location's device, for an event with no cpu location. */
  private dpaFabric: string | undefined;

  private constructor(private readonly imported?: ImportedEvent) {
    this.ctx = new SyncEventContext(this);
    if (imported) {
      this.control = imported.control;
      this.waiters = new Waiters(imported.control);
      this.values = new BigUint64Array(imported.value.u8.buffer);
      this.valueIndex = imported.valueOffset / 8;
    }
  }

  private get destroyed(): boolean {
    return this.ctx.isDestroyed;
  }

  /** `doca_sync_event_create`: a CPU handle, configurable until started. */
  static create(): SyncEvent {
    return new SyncEvent();
  }

  /**
   * `doca_sync_event_create_from_export`: a handle on another process's event, from the blob its
   * `exportToRemotePci` gave. It cannot be configured; start it (either mode) to use it.
   */
  static createFromExport(dev: Dev, blob: Uint8Array): SyncEvent {
    const event = new SyncEvent(importPci(dev, blob));
    event.capDev = dev;
    return event;
  }

  /** True for a handle made by `createFromExport`. */
  get isImported(): boolean {
    return this.imported !== undefined;
  }

  /** Where the counter is placed: near the subscriber, as DOCA's hint says (informational here). */
  get placement(): SyncEventLocation | undefined {
    return this.subscriber;
  }

  // ---- configuration ----------------------------------------------------------------------------

  /** `doca_sync_event_add_publisher_location_cpu`. */
  addPublisherLocationCpu(dev: Dev): void {
    this.addLocation('publisher', 'cpu', 'doca_sync_event_add_publisher_location_cpu', dev);
  }

  /** `doca_sync_event_add_publisher_location_dpa`: DPA code of `dpa` updates it (`getDpaHandle`). */
  addPublisherLocationDpa(dpa: DpaEventTarget): void {
    this.addLocation('publisher', 'dpa', 'doca_sync_event_add_publisher_location_dpa', dpa);
  }

  /** `doca_sync_event_add_publisher_location_gpu`: GPU features are not supported (NOT_SUPPORTED). */
  addPublisherLocationGpu(gpu: unknown): void {
    this.addLocation('publisher', 'gpu', 'doca_sync_event_add_publisher_location_gpu', gpu);
  }

  /** `doca_sync_event_add_publisher_location_remote_pci`: the other side of the PCIe link updates it. */
  addPublisherLocationRemotePci(): void {
    this.addLocation('publisher', 'remote_pci', 'doca_sync_event_add_publisher_location_remote_pci');
  }

  /** `doca_sync_event_add_publisher_location_remote_net`: another node updates it (over TCP). */
  addPublisherLocationRemoteNet(): void {
    this.addLocation('publisher', 'remote_net', 'doca_sync_event_add_publisher_location_remote_net');
  }

  /** `doca_sync_event_add_subscriber_location_cpu`. */
  addSubscriberLocationCpu(dev: Dev): void {
    this.addLocation('subscriber', 'cpu', 'doca_sync_event_add_subscriber_location_cpu', dev);
  }

  /**
   * `doca_sync_event_add_subscriber_location_dpa`: DPA code of `dpa` waits on it (kernel launches,
   * `post_wait`), so every update rings that DPA.
   */
  addSubscriberLocationDpa(dpa: DpaEventTarget): void {
    this.addLocation('subscriber', 'dpa', 'doca_sync_event_add_subscriber_location_dpa', dpa);
  }

  /** `doca_sync_event_add_subscriber_location_gpu`: NOT_SUPPORTED. */
  addSubscriberLocationGpu(gpu: unknown): void {
    this.addLocation('subscriber', 'gpu', 'doca_sync_event_add_subscriber_location_gpu', gpu);
  }

  /** `doca_sync_event_add_subscriber_location_remote_pci`: the other side of the PCIe link waits on it. */
  addSubscriberLocationRemotePci(): void {
    this.addLocation('subscriber', 'remote_pci', 'doca_sync_event_add_subscriber_location_remote_pci');
  }

  /**
   * `doca_sync_event_set_addr`: the 8 bytes of counter memory, 8-byte aligned. To export the event, the
   * memory must come from `allocSharedMemory()`.
   */
  setAddr(memory: Uint8Array): void {
    const call = 'doca_sync_event_set_addr';
    this.bufPermissions = undefined;
    this.configurable(call, 'BAD_STATE');
    if (!(memory instanceof Uint8Array) || memory.length !== 8) throw new DocaError('INVALID_VALUE', call, `the counter memory must be 8 bytes, not ${memory?.length}`);
    if (memory.byteOffset % 8 !== 0) throw new DocaError('INVALID_VALUE', call, `the counter memory at byte offset ${memory.byteOffset} is not 8-byte aligned`);
    this.userValue = { array: new BigUint64Array(memory.buffer, memory.byteOffset, 1), index: 0, memory };
  }

  /**
   * `doca_sync_event_set_doca_buf`: the counter is the buffer's 8 data bytes. Its map needs local
   * read/write and RDMA read, write and atomic permissions (NOT_PERMITTED otherwise, as for a data length
   * other than 8); exporting also needs PCI_READ_WRITE.
   */
  setDocaBuf(buf: DocaBuf): void {
    const call = 'doca_sync_event_set_doca_buf';
    this.configurable(call, 'BAD_STATE');
    if (!buf || typeof buf.getData !== 'function') throw new DocaError('INVALID_VALUE', call, 'expected a DocaBuf');
    if (buf.getDataLen() !== 8) throw new DocaError('NOT_PERMITTED', call, `the buffer holds ${buf.getDataLen()} data bytes; a sync event needs exactly 8`);
    const need = AccessFlag.LOCAL_READ_WRITE | AccessFlag.RDMA_READ | AccessFlag.RDMA_WRITE | AccessFlag.RDMA_ATOMIC;
    const perms = buf.getMmap().getPermissions();
    if ((perms & need) !== need) throw new DocaError('NOT_PERMITTED', call, `the buffer's map has permissions 0x${perms.toString(16)}; it needs local read/write and RDMA read, write and atomic (0x${need.toString(16)})`);
    this.setAddr(buf.getData());
    this.bufPermissions = perms;
  }

  // ---- modes ------------------------------------------------------------------------------------

  /** `doca_sync_event_start`: the synchronous mode; the event can no longer be used as a context. */
  start(): void {
    const call = 'doca_sync_event_start';
    this.alive(call);
    if (this.mode === 'ctx') throw new DocaError('BAD_STATE', call, 'the event is used as a context (doca_sync_event_as_ctx); the modes exclude each other');
    if (this.syncStarted) throw new DocaError('BAD_STATE', call, 'the event is already started');
    this.prepare('sync', call);
    this.syncStarted = true;
    this.stat.setState(CtxState.RUNNING);
  }

  /** `doca_sync_event_stop`: undoes `start`. */
  stop(): void {
    const call = 'doca_sync_event_stop';
    this.alive(call);
    if (!this.syncStarted) throw new DocaError('BAD_STATE', call, 'the event is not started (or runs as a context: stop the context)');
    this.syncStarted = false;
    this.stat.setState(CtxState.IDLE);
  }

  /**
   * `doca_sync_event_as_ctx`: the event as a context for the asynchronous tasks. Connect it to a
   * progress engine and start it; then `start()` is refused (the modes exclude each other).
   */
  asCtx(): SyncEventContext {
    this.alive('doca_sync_event_as_ctx');
    if (this.mode === 'sync') throw new DocaError('BAD_STATE', 'doca_sync_event_as_ctx', 'the event was started with doca_sync_event_start; it cannot be a context');
    return this.ctx;
  }

  /**
   * `doca_sync_event_destroy`: releases every handle exported from it (imported handles fail on their
   * next use, remote-net clients are disconnected). Refused while its context is not IDLE.
   */
  destroy(): void {
    const call = 'doca_sync_event_destroy';
    if (this.destroyed) return;
    this.ctx._release(call); // IN_USE, naming the state, unless the context is IDLE
    this.syncStarted = false;
    this.stat.release();
    if (this.exportSlot) revokeExportSlot(this.exportSlot);
    this.netServer?.close();
    if (this.imported) {
      this.waiters?.close();
      this.imported.release();
    } else if (this.control) {
      for (const dpa of this.dpaTargets) dpa._syncEventGone(this);
      this.dpaTargets.clear();
      Atomics.store(this.control.i32, SE_STATE / 4, SE_DESTROYED);
      this.waiters!.ringAll(); // sleeping importers wake and find the event gone
      this.waiters!.close();
      this.control.close();
    }
  }

  /**
   * `await using event = SyncEvent.create()`: stops its context if it runs (pending waits fail), waits
   * for IDLE, then destroys the event as `destroy()` does.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.destroyed) return;
    if (this.ctx.getState() !== CtxState.IDLE) await this.ctx.stopAndWait();
    this.destroy();
  }

  // ---- export ------------------------------------------------------------------------------------

  /**
   * `doca_sync_event_export_to_remote_pci`: a blob for a process on the other side of the same DPU.
   * Publisher and subscriber must each be cpu, remote_pci or dpa (a DPA of this process updates it or
   * waits on it, the other side of PCIe the other end); the counter memory must be shared. The blob
   * is a secret: send it over a trusted channel (the samples use comch) and never log it.
   */
  exportToRemotePci(dev: Dev): Uint8Array {
    const call = 'doca_sync_event_export_to_remote_pci';
    this.usable(call, this.mode === 'ctx');
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, 'a handle made from an export cannot be exported again');
    const ok = (l: SyncEventLocation | undefined) => l === 'cpu' || l === 'remote_pci' || l === 'dpa';
    if (!ok(this.publisher) || !ok(this.subscriber)) {
      throw new DocaError('NOT_SUPPORTED', call, `export to remote PCI needs publisher and subscriber at cpu, remote_pci or dpa, not ${this.publisher ?? 'none'} and ${this.subscriber ?? 'none'}`);
    }
    const where = this.valueLocation(call);
    if (this.bufPermissions !== undefined && !(this.bufPermissions & AccessFlag.PCI_READ_WRITE)) {
      throw new DocaError('NOT_PERMITTED', call, `the counter's DocaBuf is in a map with permissions 0x${this.bufPermissions.toString(16)}; exporting it to the other side of PCIe needs PCI_READ_WRITE`);
    }
    const { blob, slot } = exportPci(call, dev, this.control!, where, this.exportSlot);
    this.exportSlot = slot;
    return blob;
  }

  /**
   * `doca_sync_event_export_to_remote_net`: a blob another node turns into a remote-net handle
   * (`SyncEventRemoteNet.createFromExport`) that sets, adds and gets over TCP. Needs the publisher
   * location remote_net. softdpu listens on loopback unless `options.host` says otherwise (an IP
   * address), and admits only peers that prove they hold the random secret in the blob. Asynchronous
   * (unlike DOCA) because the listener must be bound first. The blob is a secret: never log it.
   */
  async exportToRemoteNet(options: RemoteNetOptions = {}): Promise<Uint8Array> {
    const call = 'doca_sync_event_export_to_remote_net';
    this.usable(call, this.mode === 'ctx');
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, 'a handle made from an export cannot be exported again');
    if (this.capDev && !syncEventCapIsExportToRemoteNetSupported(this.capDev.asDevinfo())) {
      throw new DocaError('NOT_SUPPORTED', call, `${this.capDev.asDevinfo().spec.pci} cannot export sync events to remote net (its topology says so)`);
    }
    if (this.publisher !== 'remote_net') throw new DocaError('NOT_SUPPORTED', call, `export to remote net needs the publisher location remote_net, not ${this.publisher ?? 'none'}`);
    this.netServer ??= new RemoteNetServer(this);
    return this.netServer.export(call, options);
  }

  /** `doca_sync_event_get_gpu_handle`: GPU features are not supported. */
  getGpuHandle(): never {
    throw new DocaError('NOT_SUPPORTED', 'doca_sync_event_get_gpu_handle', 'GPU features are not supported');
  }

  /**
   * `doca_sync_event_get_dpa_handle`: the handle DPA code of `dpa` uses (`syncEventUpdateAdd`,
   * `syncEventPostWaitGt`, ...). DPA handles are exported from the CPU handle: the event must be this
   * process's started CPU handle (NOT_PERMITTED for one made from an export), with the DPA as its
   * publisher or subscriber location (NOT_SUPPORTED otherwise) and its counter in shared memory.
   */
  getDpaHandle(dpa: DpaEventTarget): bigint {
    const call = 'doca_sync_event_get_dpa_handle';
    this.alive(call);
    if (!isDpaTarget(dpa)) throw new DocaError('INVALID_VALUE', call, 'expected a Dpa');
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, 'a handle made from an export cannot be exported to the DPA; get the DPA handle from the CPU handle that created the event');
    if (this.publisher !== 'dpa' && this.subscriber !== 'dpa') {
      throw new DocaError('NOT_SUPPORTED', call, `a DPA handle needs the DPA as publisher or subscriber location, not ${this.publisher ?? 'none'} and ${this.subscriber ?? 'none'}`);
    }
    if (!this.dpaLocations.has(dpa)) {
      throw new DocaError('NOT_SUPPORTED', call, `${dpa.name} is neither the publisher nor the subscriber location of this event (${[...this.dpaLocations.keys()].map((d) => d.name).join(' and ')} is)`);
    }
    if (this.capDev && !syncEventCapIsExportToDpaSupported(this.capDev.asDevinfo())) {
      throw new DocaError('NOT_SUPPORTED', call, `${this.capDev.asDevinfo().spec.pci} cannot export sync events to the DPA (its topology says so)`);
    }
    if (!this.syncStarted && this.ctx.getState() !== CtxState.RUNNING) throw new DocaError('BAD_STATE', call, 'the sync event is not started');
    const value = this.valueLocation(call);
    const handle = dpa._syncEventHandle(this, { control: this.control!, value, subscriberIsDpa: this.dpaLocations.get(dpa) !== 'publisher', peek: () => this._peek() }, call);
    this.dpaTargets.add(dpa);
    return handle;
  }

  // ---- data path ----------------------------------------------------------------------------------

  /** `doca_sync_event_update_set`. */
  updateSet(value: bigint | number): void {
    const call = 'doca_sync_event_update_set';
    const v = toU64(call, 'value', value);
    this.set(this.usable(call), v);
  }

  /** `doca_sync_event_update_add`: atomic; returns the value before the add (wraps at 2^64). */
  updateAdd(value: bigint | number): bigint {
    const call = 'doca_sync_event_update_add';
    const v = toU64(call, 'value', value);
    return this._apply('add', this.usable(call), v);
  }

  /** `doca_sync_event_get`. */
  get(): bigint {
    return this._apply('get', this.usable('doca_sync_event_get'));
  }

  /** `doca_sync_event_wait_gt`: spins until `(value & mask) > value`. DOCA has no timeout; softdpu takes one. */
  waitGt(value: bigint | number, mask: bigint | number = ALL_BITS, options: SyncWaitOptions = NO_OPTIONS): void {
    this.wait('gt', false, 'doca_sync_event_wait_gt', value, mask, options);
  }

  /** `doca_sync_event_wait_eq`: spins until `(value & mask) == value`. */
  waitEq(value: bigint | number, mask: bigint | number = ALL_BITS, options: SyncWaitOptions = NO_OPTIONS): void {
    this.wait('eq', false, 'doca_sync_event_wait_eq', value, mask, options);
  }

  /** `doca_sync_event_wait_neq`: spins until `(value & mask) != value`. */
  waitNeq(value: bigint | number, mask: bigint | number = ALL_BITS, options: SyncWaitOptions = NO_OPTIONS): void {
    this.wait('neq', false, 'doca_sync_event_wait_neq', value, mask, options);
  }

  /** `doca_sync_event_wait_gt_yield`: as `waitGt`, giving the CPU away between polls. */
  waitGtYield(value: bigint | number, mask: bigint | number = ALL_BITS, options: SyncWaitOptions = NO_OPTIONS): void {
    this.wait('gt', true, 'doca_sync_event_wait_gt_yield', value, mask, options);
  }

  /** `doca_sync_event_wait_eq_yield`. */
  waitEqYield(value: bigint | number, mask: bigint | number = ALL_BITS, options: SyncWaitOptions = NO_OPTIONS): void {
    this.wait('eq', true, 'doca_sync_event_wait_eq_yield', value, mask, options);
  }

  /** `doca_sync_event_wait_neq_yield`. */
  waitNeqYield(value: bigint | number, mask: bigint | number = ALL_BITS, options: SyncWaitOptions = NO_OPTIONS): void {
    this.wait('neq', true, 'doca_sync_event_wait_neq_yield', value, mask, options);
  }

  // ---- for the context, the exporters ------------------------------------------------------------

  /** @internal the control segment. */
  get _control(): Segment | undefined {
    return this.control;
  }

  /** @internal the device whose capabilities the event's calls are checked against. */
  get _capDev(): Dev | undefined {
    return this.capDev;
  }

  /** @internal the process that exported the event (imported handles only). */
  get _exporter(): ProcessIdentity | undefined {
    const d = this.imported?.control.descriptor;
    return d && { pid: d.pid, start: d.start };
  }

  /** @internal the waiter table, once the counter exists. */
  get _waiters(): Waiters | undefined {
    return this.waiters;
  }

  /** @internal the counter words, checked usable by the context's tasks. */
  _values(call: string): BigUint64Array {
    return this.usable(call, true);
  }

  /**
   * @internal an update or read a remote-net peer asked for: applied whichever mode the exporter runs
   * in (the remote node's calls are not the exporter's own synchronous calls).
   */
  _remote(op: 'set' | 'add' | 'get', value: bigint): bigint {
    const call = `doca_sync_event_remote_net ${op}`;
    return this._apply(op, this.usable(call, this.mode === 'ctx'), value);
  }

  /**
   * @internal every read and update of the counter, whoever asks (the synchronous calls, the context's
   * tasks, remote-net peers): `values` was checked usable by the caller. Keeps the handle's record
   * (value, updates) and rings the waiters on a change; returns the value before (for a get, the value).
   */
  _apply(op: 'set' | 'add' | 'get', values: BigUint64Array, v = 0n): bigint {
    if (op === 'get') return (this.stat.u[VALUE] = Atomics.load(values, this.valueIndex));
    if (op === 'set') return (this.set(values, v), 0n);
    const before = Atomics.add(values, this.valueIndex, v);
    // The record's u64 wraps as the counter did; added in place, as `before + v` would make a BigInt.
    const u = this.stat.u;
    u[VALUE] = before;
    u[VALUE] += v;
    this.changed();
    return before;
  }

  /**
   * A set, apart from _apply: updateSet runs it on every update, and V8 inlines the caller of a small
   * function whole (with _apply's three cases the benchmark's loop no longer inlined updateSet).
   */
  private set(values: BigUint64Array, v: bigint): void {
    Atomics.store(values, this.valueIndex, v);
    this.stat.u[VALUE] = v;
    this.changed();
  }

  /** The counter changed (its record holds the new value): counted, and the waiters rung. */
  private changed(): void {
    this.stat.c[UPDATES]!++;
    this.waiters!.ringIfWaiting();
  }

  /** @internal the counter, unchecked (the DPA's handle reads it so). */
  _peek(): bigint {
    return Atomics.load(this.values!, this.valueIndex);
  }

  /**
   * @internal whether `cond` holds on the counter now, for the context's wait tasks: `call` checks the
   * counter usable unless `unchecked` (the context's polls, which check the exporter themselves). The
   * value read goes to the handle's record.
   */
  _holds(op: WaitOp, cond: Condition, call: string, unchecked = false): boolean {
    const held = cond.holdsAt(op, unchecked ? this.values! : this.usable(call, true), this.valueIndex);
    storeLastRead(this.stat.u, VALUE);
    return held;
  }

  /** @internal the context starts: modes exclude each other; the counter comes to exist. */
  _startCtx(call: string): void {
    this.alive(call);
    if (this.syncStarted || this.mode === 'sync') throw new DocaError('BAD_STATE', call, 'the event was started with doca_sync_event_start; it cannot run as a context');
    this.prepare('ctx', call);
  }

  /** @internal whether an imported handle still reaches a live event. */
  _valid(call: string): boolean {
    if (this.ctx.isDestroyed || this.control?.closed) return false;
    if (this.imported) return exportIsValid(this.imported.slot, call);
    return true;
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** Where the counter lives, for another process or the DPA to map: NOT_SUPPORTED if not shared memory. */
  private valueLocation(call: string): { segment: Segment; offset: number } {
    const where = this.userValue ? sharedLocation(this.userValue.memory) : { segment: this.control!, offset: SE_VALUE };
    if (!where) throw new DocaError('NOT_SUPPORTED', call, 'the counter memory given with setAddr/setDocaBuf is not shared memory (allocSharedMemory)');
    return where;
  }

  private addLocation(role: 'publisher' | 'subscriber', where: SyncEventLocation, call: string, target?: unknown): void {
    this.configurable(call, 'BAD_STATE');
    if (where === 'gpu') throw new DocaError('NOT_SUPPORTED', call, 'GPU features are not supported');
    if (where === 'dpa' && !isDpaTarget(target)) throw new DocaError('INVALID_VALUE', call, 'a dpa location needs a Dpa');
    if (where === 'cpu' && !(target as Dev | undefined)?.isOpen) throw new DocaError('INVALID_VALUE', call, 'a cpu location needs an open device');
    const current = role === 'publisher' ? this.publisher : this.subscriber;
    if (current) throw new DocaError('INVALID_VALUE', call, `the ${role} location is already ${current}; a sync event has exactly one`);
    if (role === 'publisher') this.publisher = where;
    else this.subscriber = where;
    if (where === 'cpu') this.capDev ??= target as Dev;
    if (where === 'dpa') {
      this.dpaFabric ??= (target as { dev?: Dev }).dev?.fabric?.dir;
      const dpa = target as DpaEventTarget;
      this.dpaLocations.set(dpa, this.dpaLocations.has(dpa) ? 'both' : role);
    }
  }

  private configurable(call: string, code: 'BAD_STATE' | 'NOT_PERMITTED'): void {
    this.alive(call);
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, 'a handle made from an export cannot be configured');
    // Once started, the counter exists and has been shared: configuring after a stop would split the
    // exporter from its importers, so configuration ends at the first start.
    if (this.mode !== 'none') {
      const now = this.syncStarted || this.ctx.getState() !== CtxState.IDLE ? 'is started' : 'was started before';
      throw new DocaError(code, call, `the event ${now}; configure it before start`);
    }
  }

  private prepare(mode: 'sync' | 'ctx', call: string): void {
    if (!this.imported && (!this.publisher || !this.subscriber)) {
      throw new DocaError('BAD_STATE', call, `set a publisher and a subscriber location first (publisher ${this.publisher ?? 'none'}, subscriber ${this.subscriber ?? 'none'})`);
    }
    this.mode = mode;
    if (this.imported) return this.publish();
    if (this.control) return;
    this.control = createControl();
    this.waiters = new Waiters(this.control);
    if (this.userValue) {
      this.values = this.userValue.array;
      this.valueIndex = this.userValue.index;
    } else {
      this.values = new BigUint64Array(this.control.u8.buffer);
      this.valueIndex = SE_VALUE / 8;
    }
    this.publish();
  }

  /**
   * Its record for observers (fabric/stats.ts SYNC_EVENT), made at the first start: named after the
   * control segment (creator pid and fd), which the creator's record and every importer's share.
   */
  private publish(): void {
    if (this.stat.slot >= 0 || !this.control) return;
    const d = this.control.descriptor;
    const dir = this.capDev?.fabric.dir ?? this.dpaFabric;
    const where = this.imported ? 'imported (remote_pci)' : `${this.publisher}→${this.subscriber}`;
    this.stat = statRecord(dir, StatKind.SYNC_EVENT, `event ${d.pid}:${d.fd} ${where}`, this.capDev?._stat, d.fd);
    if (this.imported) this.stat.setPeer(d.pid);
    this.stat.u[VALUE] = Atomics.load(this.values!, this.valueIndex);
    this.ctx._useStat(this.stat);
  }

  private alive(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, 'the sync event was destroyed');
  }

  /** The counter, if the event is started and (for an imported handle) its exporter still has it. */
  /**
   * The counter, if the event is started in the mode the call belongs to (the synchronous calls need
   * `start()`, the tasks a running context: DOCA keeps the modes apart) and, for an imported handle,
   * its exporter still has it.
   */
  private usable(call: string, asCtx = false): BigUint64Array {
    this.alive(call);
    if (asCtx ? this.ctx.getState() !== CtxState.RUNNING : !this.syncStarted) throw this.notStarted(call, asCtx);
    if (this.imported && !this._valid(call)) throw this.exporterGone(call);
    return this.values!;
  }

  // usable()'s errors, out of line: every update and wait inlines usable(), and its size counts
  // against the inlining budget of the caller's loop.
  private notStarted(call: string, asCtx: boolean): DocaError {
    const why = this.mode === (asCtx ? 'sync' : 'ctx') ? `the event runs as ${asCtx ? 'doca_sync_event_start (synchronous)' : 'a context: use its tasks'}` : 'the sync event is not started';
    return new DocaError('BAD_STATE', call, why);
  }

  private exporterGone(call: string): DocaError {
    return new DocaError('NOT_CONNECTED', call, 'the exporting process destroyed the event or exited; this handle is no longer valid');
  }

  private wait(op: WaitOp, yielding: boolean, call: string, operand: bigint | number, mask: bigint | number, options: SyncWaitOptions): void {
    const cond = this.cond;
    cond.setOperand(call, 'value', operand);
    cond.setMask(call, mask, false);
    const values = this.usable(call);
    if (this.netServer) {
      throw new DocaError('NOT_SUPPORTED', call, 'the event is exported to remote net, and its updates are served by this thread\'s event loop, which a blocking wait holds: use the async wait tasks');
    }
    const index = this.valueIndex;
    const deadline = options.timeoutMs === undefined ? Infinity : performance.now() + options.timeoutMs;
    const stat = this.stat;
    stat.c[WAITERS]!++; // a waiter, for observers, while this thread spins
    try {
      // A poll makes no BigInt (Condition.holdsAt), nor does anything else of the loop. What runs
      // every 1024 polls is a method of its own: in the loop, code that ran too rarely to have type
      // feedback would deoptimize the loop when it first runs.
      for (let i = 1; ; i++) {
        if (cond.holdsAt(op, values, index)) {
          storeLastRead(stat.u, VALUE);
          return;
        }
        if (yielding) yieldCpu();
        if ((i & 1023) === 0) this.stillWaiting(op, call, i, values, deadline, options);
      }
    } finally {
      stat.c[WAITERS]!--;
    }
  }

  /**
   * A wait's look every 1024 polls: TIME_OUT past its deadline (the clock makes a number per read: read
   * only with a timeout), NOT_CONNECTED once an imported event's exporter is gone.
   */
  private stillWaiting(op: WaitOp, call: string, i: number, values: BigUint64Array, deadline: number, options: SyncWaitOptions): void {
    const cond = this.cond;
    const index = this.valueIndex;
    if (deadline !== Infinity && performance.now() > deadline) {
      throw new DocaError('TIME_OUT', call, `(value & 0x${cond.getMask().toString(16)}) ${op} ${cond.getOperand()} did not hold within ${options.timeoutMs} ms (value ${Atomics.load(values, index)})`);
    }
    // The exporter's last update may have come just before it left: look once more, then fail.
    if (i % LIVENESS_EVERY === 0 && this.imported && !this._valid(call) && !cond.holdsAt(op, values, index)) {
      throw new DocaError('NOT_CONNECTED', call, 'the exporting process destroyed the event or exited while we waited');
    }
  }
}
