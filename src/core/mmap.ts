/**
 * Memory maps (doca_mmap.h): a memory range, access permissions and the devices it is registered with.
 * `exportPci` turns a started map into a blob that `Mmap.createFromExport` turns, in a process on the
 * same DPU, into a map over the same bytes.
 *
 * DOCA's header is read as follows where it contradicts itself (docs/architecture.md, "Memory maps"):
 * `stop()` is refused (NOT_PERMITTED) while buffers exist and for an exported or imported map;
 * `destroy()` is refused while buffers exist, and otherwise implicitly stops, which revokes every export
 * and so invalidates every map imported from it. An imported map also becomes invalid when its exporter
 * dies. Using an invalid map is a BAD_STATE error, never a crash: its mapping is closed, so stale views
 * read as empty.
 */
import type { Devinfo } from './devinfo.js';
import { capabilityReport } from './caps.js';
import { BlobKind, BlobReader, BlobWriter, DESCRIPTOR_SIZE } from './blob.js';
import type { Dev } from './dev.js';
import { dpaMapTable } from './dpa-maps.js';
import { DocaError, describeValue } from './error.js';
import { sharedLocation, useSharedMemory } from './memory.js';
import { PCI_TRAILER_SIZE, readPciTrailer, writePciTrailer } from './pci-export.js';
import { claimExportSlot, exportIsValid, type ExportSlot, revokeExportSlot } from '../fabric/exports.js';
import { Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';

/** `enum doca_access_flag`. */
export const AccessFlag = {
  LOCAL_READ_ONLY: 0,
  LOCAL_READ_WRITE: 1 << 0,
  RDMA_READ: 1 << 1,
  RDMA_WRITE: 1 << 2,
  RDMA_ATOMIC: 1 << 3,
  PCI_READ_ONLY: 1 << 4,
  PCI_READ_WRITE: 1 << 5,
  PCI_RELAXED_ORDERING: 1 << 6,
} as const;
const ALL_FLAGS = (1 << 7) - 1;
const PCI_FLAGS = AccessFlag.PCI_READ_ONLY | AccessFlag.PCI_READ_WRITE;

/** `doca_mmap_cap_is_export_pci_supported`. */
export const mmapCapIsExportPciSupported = (d: Devinfo): boolean => capabilityReport(d.spec).mmap.exportPci;
/** `doca_mmap_cap_is_create_from_export_pci_supported`. */
export const mmapCapIsCreateFromExportPciSupported = (d: Devinfo): boolean => capabilityReport(d.spec).mmap.createFromExportPci;

/** `doca_mmap_memrange_free_cb_t`: called by `destroy()` so the memory can be released. */
export type MmapFreeCb = (memory: Uint8Array, userData: unknown) => void;

// Blob payload layout (offsets after the envelope).
const P_SEGMENT = 0;
const P_OFFSET = P_SEGMENT + DESCRIPTOR_SIZE; // f64
const P_LENGTH = P_OFFSET + 8; // f64
const P_PERMISSIONS = P_LENGTH + 8; // u32
const P_TRAILER = P_PERMISSIONS + 4; // slot and DPU: core/pci-export.ts
const PAYLOAD_SIZE = P_TRAILER + PCI_TRAILER_SIZE;

interface ImportedMap {
  segment: Segment;
  slot: ExportSlot;
}

let nextId = 1;

/**
 * A memory map, `struct doca_mmap` (`doca_mmap_create`): a memory range (a `Uint8Array`; its offset in the
 * map is DOCA's address), its access permissions and the devices it is registered with. `exportPci` makes
 * a blob from which `createFromExport` maps the same bytes in a process on the other side of the DPU.
 *
 * @example
 * ```ts
 * // doca_mmap_create(&mmap); doca_mmap_set_memrange(mmap, addr, len); doca_mmap_add_dev(mmap, dev); doca_mmap_start(mmap)
 * const memory = allocSharedMemory(4096); // PCI access needs memory a peer process can map
 * const mmap = Mmap.create();
 * mmap.setMemrange(memory);
 * mmap.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
 * mmap.addDev(dev);
 * mmap.start();
 * const blob = mmap.exportPci(dev); // the peer: Mmap.createFromExport(blob, itsDev)
 * ```
 */
export class Mmap {
  private memrange: Uint8Array | undefined;
  private permissions: number = AccessFlag.LOCAL_READ_WRITE;
  private readonly devs: Dev[] = [];
  private maxDevices = 64;
  private started = false;
  private everStarted = false;
  private exportSlot: ExportSlot | undefined;
  private imported: ImportedMap | undefined;
  private invalid = false;
  private destroyed = false;
  private bufs = 0;
  private freeCb: MmapFreeCb | undefined;
  /** Entries in the process's table of maps usable from the DPA, by device (core/dpa-maps.ts). */
  private readonly dpaHandles = new Map<Dev, { index: number; handle: bigint }>();
  /** `doca_mmap_set_user_data` / `get_user_data`. */
  userData: unknown;
  readonly name = `mmap ${nextId++}`;

  private constructor() {}

  /** `doca_mmap_create`. */
  static create(): Mmap {
    return new Mmap();
  }

  /**
   * `doca_mmap_create_from_export`: a started map over the memory another process exported with
   * `exportPci`. The device must be on the same DPU and allow create-from-export.
   */
  static createFromExport(blob: Uint8Array, dev: Dev, userData?: unknown): Mmap {
    const call = 'doca_mmap_create_from_export';
    if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, `the device must be open (got ${dev?.isOpen === false ? `${dev.name}, closed` : describeValue(dev)})`);
    const info = dev.asDevinfo();
    if (!mmapCapIsCreateFromExportPciSupported(info)) throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} cannot create maps from a PCI export`);
    const r = new BlobReader(blob, BlobKind.MMAP_PCI, dev.fabric.id, call, PAYLOAD_SIZE);
    const slot = readPciTrailer(r, P_TRAILER, info, call, 'map');
    const segment = Segment.open(r.descriptor(P_SEGMENT), call, ['mem']);
    const offset = r.view.getFloat64(P_OFFSET, true);
    const length = r.view.getFloat64(P_LENGTH, true);
    if (!Number.isInteger(offset) || !Number.isInteger(length) || length < 1 || offset < SEGMENT_HEADER_SIZE || offset + length > segment.size) {
      segment.close();
      throw new DocaError('INVALID_VALUE', call, `the export names bytes [${offset}, ${offset + length}) outside its ${segment.size}-byte segment`);
    }
    const map = new Mmap();
    map.memrange = segment.u8.subarray(offset, offset + length);
    map.permissions = r.view.getUint32(P_PERMISSIONS, true) & ALL_FLAGS;
    map.imported = { segment, slot };
    map.started = map.everStarted = true;
    map.userData = userData;
    dev._acquire(map, call);
    map.devs.push(dev);
    return map;
  }

  /** `doca_mmap_set_memrange`: mandatory, once, before start. */
  setMemrange(memory: Uint8Array): void {
    const call = 'doca_mmap_set_memrange';
    this.configurable(call);
    if (!(memory instanceof Uint8Array) || memory.length === 0) throw new DocaError('INVALID_VALUE', call, `the memory range must be a non-empty Uint8Array, not ${describeValue(memory)}${memory instanceof Uint8Array ? ' of 0 bytes' : ''}`);
    if (this.memrange) throw new DocaError('NOT_PERMITTED', call, `the memory range of ${this.name} is already set`);
    this.memrange = memory;
  }

  /** `doca_mmap_get_memrange`. */
  getMemrange(): Uint8Array {
    const call = 'doca_mmap_get_memrange';
    this.checkValid(call);
    if (!this.memrange) throw new DocaError('BAD_STATE', call, `${this.name} has no memory range`);
    return this.memrange;
  }

  /** `doca_mmap_set_permissions`: a combination of `AccessFlag` bits. */
  setPermissions(flags: number): void {
    const call = 'doca_mmap_set_permissions';
    this.configurable(call);
    if (!Number.isInteger(flags) || (flags & ~ALL_FLAGS) !== 0) throw new DocaError('INVALID_VALUE', call, `${flags} has bits that are not access flags`);
    if ((flags & PCI_FLAGS) === PCI_FLAGS) throw new DocaError('INVALID_VALUE', call, 'PCI_READ_ONLY and PCI_READ_WRITE exclude each other');
    if (flags & (AccessFlag.RDMA_WRITE | AccessFlag.RDMA_ATOMIC) && !(flags & AccessFlag.LOCAL_READ_WRITE)) {
      throw new DocaError('INVALID_VALUE', call, 'RDMA_WRITE and RDMA_ATOMIC need LOCAL_READ_WRITE');
    }
    this.permissions = flags;
  }

  /** The `AccessFlag` bits `doca_mmap_set_permissions` set (softdpu's: DOCA has no getter). */
  getPermissions(): number {
    return this.permissions;
  }

  /** `doca_mmap_add_dev`. */
  addDev(dev: Dev): void {
    const call = 'doca_mmap_add_dev';
    this.registrable(call);
    if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, `the device must be open (got ${dev?.isOpen === false ? `${dev.name}, closed` : describeValue(dev)})`);
    if (this.devs.includes(dev)) throw new DocaError('ALREADY_EXIST', call, `${dev.name} is already added to ${this.name}`);
    if (this.devs.length >= this.maxDevices) throw new DocaError('NO_MEMORY', call, `${this.name} already has its maximum of ${this.maxDevices} devices`);
    dev._acquire(this, call);
    this.devs.push(dev);
  }

  /** `doca_mmap_rm_dev`. */
  rmDev(dev: Dev): void {
    const call = 'doca_mmap_rm_dev';
    this.registrable(call);
    const i = this.devs.indexOf(dev);
    if (i < 0) throw new DocaError('NOT_FOUND', call, `${dev?.name ?? 'the device'} was not added to ${this.name}`);
    this.devs.splice(i, 1);
    dev._release(this);
  }

  /** `doca_mmap_set_max_num_devices`: before the first start. */
  setMaxNumDevices(n: number): void {
    const call = 'doca_mmap_set_max_num_devices';
    this.configurable(call);
    if (this.everStarted) throw new DocaError('NOT_PERMITTED', call, `${this.name} was already started once`);
    if (!Number.isInteger(n) || n < Math.max(1, this.devs.length)) throw new DocaError('INVALID_VALUE', call, `${n} is not an integer >= ${Math.max(1, this.devs.length)}`);
    this.maxDevices = n;
  }

  /** `doca_mmap_get_max_num_devices`. */
  getMaxNumDevices(): number {
    return this.maxDevices;
  }

  /**
   * `doca_mmap_start`: freezes the configuration and allows buffers and export. Memory with a PCI
   * permission must come from `allocSharedMemory()`.
   */
  start(): void {
    const call = 'doca_mmap_start';
    this.alive(call);
    if (this.imported || this.exportSlot) throw new DocaError('NOT_PERMITTED', call, `${this.name} was ${this.imported ? 'created from an export' : 'exported'}; it cannot be restarted`);
    if (this.started) throw new DocaError('BAD_STATE', call, `${this.name} is already started`);
    if (!this.memrange) throw new DocaError('INVALID_VALUE', call, `${this.name} has no memory range (call setMemrange first)`);
    if (this.permissions & PCI_FLAGS && !sharedLocation(this.memrange)) {
      throw new DocaError('INVALID_VALUE', call, `${this.name} allows PCI access, so its memory must come from allocSharedMemory() (a peer process maps it)`);
    }
    useSharedMemory(this.memrange, 1);
    this.started = this.everStarted = true;
  }

  /** `doca_mmap_stop`: refused while buffers exist, and for an exported or imported map (destroy those). */
  stop(): void {
    const call = 'doca_mmap_stop';
    this.alive(call);
    if (!this.started) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, `${this.name} was created from an export; destroy it instead`);
    if (this.exportSlot) throw new DocaError('NOT_PERMITTED', call, `${this.name} was exported; destroy it, which stops it and invalidates its importers`);
    if (this.bufs > 0) throw new DocaError('NOT_PERMITTED', call, `${this.bufs} buffer(s) of ${this.name} still exist`);
    this.started = false;
    useSharedMemory(this.memrange!, -1);
  }

  /**
   * `doca_mmap_destroy`: refused while buffers exist; otherwise stops (invalidating maps imported from
   * it), releases its devices and calls the free callback.
   */
  destroy(): void {
    const call = 'doca_mmap_destroy';
    if (this.destroyed) return;
    if (this.bufs > 0) throw new DocaError('NOT_PERMITTED', call, `${this.bufs} buffer(s) of ${this.name} still exist`);
    if (this.exportSlot) revokeExportSlot(this.exportSlot);
    if (this.imported) {
      if (!this.imported.segment.closed) this.imported.segment.close();
    } else if (this.started) {
      useSharedMemory(this.memrange!, -1);
    }
    for (const { index } of this.dpaHandles.values()) dpaMapTable().unregister(index);
    this.dpaHandles.clear();
    this.started = false;
    this.destroyed = true;
    for (const dev of this.devs.splice(0)) dev._release(this);
    if (this.freeCb && this.memrange && !this.imported) this.freeCb(this.memrange, this.userData);
  }

  /**
   * `doca_mmap_export_pci`: a blob for a process on the other side of the same DPU. The map must be
   * started, not imported, allow PCI access, and have `dev` added. The blob is a secret: never log it.
   */
  exportPci(dev: Dev): Uint8Array {
    const call = 'doca_mmap_export_pci';
    this.checkValid(call);
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, `${this.name} was created from an export and cannot be re-exported`);
    if (!this.started) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    if (!(this.permissions & PCI_FLAGS)) throw new DocaError('NOT_PERMITTED', call, `${this.name} has no PCI permission (PCI_READ_ONLY or PCI_READ_WRITE)`);
    if (!this.devs.includes(dev)) throw new DocaError('NOT_FOUND', call, `${dev?.name ?? 'the device'} was not added to ${this.name}`);
    const info = dev.asDevinfo();
    if (!mmapCapIsExportPciSupported(info)) throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} cannot export maps over PCI`);
    const where = sharedLocation(this.memrange!)!;
    this.exportSlot ??= claimExportSlot(call);
    const w = new BlobWriter(BlobKind.MMAP_PCI, PAYLOAD_SIZE, dev.fabric.id);
    w.descriptor(P_SEGMENT, where.segment.descriptor);
    w.view.setFloat64(P_OFFSET, where.offset, true);
    w.view.setFloat64(P_LENGTH, this.memrange!.length, true);
    w.view.setUint32(P_PERMISSIONS, this.permissions, true);
    writePciTrailer(w, P_TRAILER, this.exportSlot, info);
    return w.finish();
  }

  /**
   * `doca_mmap_dev_get_dpa_handle`: the handle DPA code on `dev`'s DPA uses to address this map (in
   * `comchProducerDmaCopy`, say). The map must be started, have `dev` added, and live in shared memory
   * (`allocSharedMemory`, or a map created from an export), since the DPA's execution units reach it
   * there. Addresses in the map are byte offsets from the start of its range. Destroying the map makes
   * the handle invalid.
   */
  devGetDpaHandle(dev: Dev): bigint {
    const call = 'doca_mmap_dev_get_dpa_handle';
    this.checkValid(call);
    if (!this.started) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    if (!this.devs.includes(dev)) throw new DocaError('NOT_FOUND', call, `${dev?.name ?? 'the device'} was not added to ${this.name}`);
    if (!capabilityReport(dev.asDevinfo().spec).dpa.supported) throw new DocaError('NOT_SUPPORTED', call, `${dev.name} has no DPA`);
    const known = this.dpaHandles.get(dev);
    if (known) return known.handle;
    const where = this._location();
    if (!where) throw new DocaError('NOT_SUPPORTED', call, `${this.name} is not in shared memory (allocSharedMemory): the DPA cannot reach it`);
    const entry = dpaMapTable().register({ memory: where.segment.descriptor, offset: where.offset, length: this.memrange!.length, flags: this.permissions, dev: dev.asDevinfo().spec.pci.toString() }, call);
    this.dpaHandles.set(dev, entry);
    return entry.handle;
  }

  /** `doca_mmap_get_num_bufs`. */
  getNumBufs(): number {
    return this.bufs;
  }

  /** `doca_mmap_get_exported`. */
  getExported(): boolean {
    return this.exportSlot !== undefined;
  }

  /** `doca_mmap_get_from_export`. */
  getFromExport(): boolean {
    return this.imported !== undefined;
  }

  /** `doca_mmap_set_free_cb`. */
  setFreeCb(cb: MmapFreeCb): void {
    this.configurable('doca_mmap_set_free_cb');
    this.freeCb = cb;
  }

  /** The devices added to the map. */
  get devices(): readonly Dev[] {
    return this.devs;
  }

  get isStarted(): boolean {
    return this.started && !this.invalid;
  }

  /**
   * @internal throws unless the map is started and (if imported) still valid; an invalidated import is
   * unmapped here.
   */
  _checkUsable(call: string): Uint8Array {
    // Every buffer access comes here: the common case (a started local map) in a few plain field
    // reads, small enough for V8 to inline into a send; every other case takes the full checks.
    return this.started && this.imported === undefined && !this.invalid && !this.destroyed ? this.memrange! : this.checkUsable(call);
  }

  private checkUsable(call: string): Uint8Array {
    this.checkValid(call);
    if (!this.started) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    return this.memrange!;
  }

  /** @internal where the map's memory lives, for peers: its segment and the range's byte offset in it. */
  _location(): { segment: Segment; offset: number } | undefined {
    if (this.imported) return { segment: this.imported.segment, offset: this.memrange!.byteOffset };
    return this.memrange ? sharedLocation(this.memrange) : undefined;
  }

  /** @internal a buffer was taken from or returned to the map. */
  _bufCount(delta: 1 | -1): void {
    this.bufs += delta;
  }

  private checkValid(call: string): void {
    this.alive(call);
    if (this.invalid || (this.imported && !exportIsValid(this.imported.slot, call))) {
      if (!this.invalid && !this.imported!.segment.closed) this.imported!.segment.close();
      this.invalid = true;
      throw new DocaError('BAD_STATE', call, `${this.name} is no longer valid: its exporter destroyed the exported map or exited`);
    }
  }

  private alive(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, `${this.name} was destroyed`);
  }

  private configurable(call: string): void {
    this.alive(call);
    if (this.imported) throw new DocaError('NOT_PERMITTED', call, `${this.name} was created from an export and cannot be configured`);
    if (this.started) throw new DocaError('BAD_STATE', call, `${this.name} is started; configure it before start`);
  }

  private registrable(call: string): void {
    this.alive(call);
    if (this.started || this.exportSlot || this.imported) {
      throw new DocaError('NOT_PERMITTED', call, `${this.name} is ${this.started ? 'started' : this.imported ? 'created from an export' : 'exported'}`);
    }
  }
}
