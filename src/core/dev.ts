/**
 * Opened devices and representors (doca_dev.h). Opening the same device again adds a reference; each
 * open needs a matching close. Closing the last reference of a device or representor that a context, a
 * memory map or an open representor still uses is refused with IN_USE.
 */
import { type Fabric, currentFabric } from '../fabric/fabric.js';
import { noteDevice } from '../fabric/faults/index.js';
import { StatKind, type StatRecord, statRecord } from '../fabric/stats.js';
import { Devinfo, devinfoCreateList, devinfoDestroyList, DevinfoRep, DevinfoRepFilter, ListLife, lists } from './devinfo.js';
import { DocaError, describeValue } from './error.js';

/** @internal Something that holds an opened device or representor, named in IN_USE messages. */
export interface DevUser {
  readonly name: string;
}

abstract class Opened {
  private refs = 1;
  private readonly users = new Set<DevUser>();

  protected constructor(
    private readonly what: string,
    private readonly registry: Map<string, Opened>,
    private readonly key: string,
    private readonly closeCall: string,
  ) {
    registry.set(key, this);
  }

  /** Whether at least one open reference remains. */
  get isOpen(): boolean {
    return this.refs > 0;
  }

  /** `doca_dev_close` / `doca_dev_rep_close`: drops one reference. */
  close(): void {
    if (this.refs === 0) throw new DocaError('BAD_STATE', this.closeCall, `${this.what} is already closed`);
    if (this.refs === 1 && this.users.size > 0) {
      throw new DocaError('IN_USE', this.closeCall, `${this.what} is still used by ${[...this.users].map((u) => u.name).join(', ')}`);
    }
    if (--this.refs === 0) {
      this.registry.delete(this.key);
      this._onClosed();
    }
  }

  /** @internal a context or mmap starts using the device. */
  _acquire(user: DevUser, call: string): void {
    if (this.refs === 0) throw new DocaError('BAD_STATE', call, `${this.what} is closed`);
    this.users.add(user);
  }

  /** @internal */
  _release(user: DevUser): void {
    this.users.delete(user);
  }

  /** @internal */
  _addRef(): this {
    this.refs++;
    return this;
  }

  protected _onClosed(): void {}
}

const openDevs = new Map<string, Opened>();
const openReps = new Map<string, Opened>();

/**
 * `struct doca_dev`: an opened device.
 *
 * @example
 * ```ts
 * // the samples' open_doca_device_with_pci("03:00.0", check_caps, &dev); ... doca_dev_close(dev)
 * const dev = openDeviceByPci('03:00.0', {
 *   check: (info) => {
 *     if (!comchCapServerIsSupported(info)) throw new Error('no comch server on this device');
 *   },
 * });
 * console.log(dev.asDevinfo().getPciAddrStr()); // '0000:03:00.0'
 * dev.close();
 * ```
 */
export class Dev extends Opened {
  private readonly info: Devinfo;

  /** What observers of the fabric see of it (fabric/stats.ts). */
  private readonly stat: StatRecord;

  private constructor(devinfo: Devinfo, key: string) {
    super(`device ${devinfo.spec.pci}`, openDevs, key, 'doca_dev_close');
    this.info = new Devinfo(devinfo.spec, devinfo.fabric);
    noteDevice(devinfo.spec.pci.toString(), devinfo.spec.side); // what fault plans' side and device selectors see
    this.stat = statRecord(devinfo.fabric.dir, StatKind.DEVICE, `${devinfo.spec.pci} (${devinfo.side})`);
  }

  protected override _onClosed(): void {
    this.stat.release();
  }

  /** @internal its introspection record (what lives on the device hangs below it). */
  get _stat(): StatRecord {
    return this.stat;
  }

  /** `doca_dev_open`: opens the device, or adds a reference if this process already opened it. */
  static open(devinfo: Devinfo): Dev {
    if (!(devinfo instanceof Devinfo)) throw new DocaError('INVALID_VALUE', 'doca_dev_open', `expected a Devinfo, got ${describeValue(devinfo)}`);
    devinfo.check('doca_dev_open');
    const key = `${devinfo.fabric.dir}\0${devinfo.spec.pci}`;
    const open = openDevs.get(key) as Dev | undefined;
    return open ? open._addRef() : new Dev(devinfo, key);
  }

  /** `doca_dev_as_devinfo`: valid while the device is open, whatever happened to the list. */
  asDevinfo(): Devinfo {
    return this.info;
  }

  get fabric(): Fabric {
    return this.info.fabric;
  }

  get name(): string {
    return `device ${this.info.spec.pci}`;
  }
}

/**
 * `struct doca_dev_rep`: an opened representor.
 *
 * @example
 * ```ts
 * // the samples' open_doca_device_rep_with_pci(dev, DOCA_DEVINFO_REP_FILTER_NET, "b1:00.0", &rep)
 * const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, 'b1:00.0');
 * const server = ComchServer.create(dev, rep, 'echo');
 * ```
 */
export class DevRep extends Opened {
  private readonly info: DevinfoRep;

  private constructor(
    rep: DevinfoRep,
    /** The opened Arm device the representor belongs to. */
    readonly dev: Dev,
    key: string,
  ) {
    super(`representor ${rep.spec.pci}`, openReps, key, 'doca_dev_rep_close');
    this.info = new DevinfoRep(rep.spec, rep.parent);
    dev._acquire(this, 'doca_dev_rep_open');
  }

  /** `doca_dev_rep_open`: the Arm device it was listed from must still be open. */
  static open(rep: DevinfoRep): DevRep {
    if (!(rep instanceof DevinfoRep)) throw new DocaError('INVALID_VALUE', 'doca_dev_rep_open', `expected a DevinfoRep, got ${describeValue(rep)}`);
    rep.check('doca_dev_rep_open');
    const key = `${rep.parent.fabric.dir}\0${rep.spec.arm}\0${rep.spec.pci}`;
    const open = openReps.get(key) as DevRep | undefined;
    if (open) return open._addRef();
    const dev = openDevs.get(`${rep.parent.fabric.dir}\0${rep.spec.arm}`) as Dev | undefined;
    if (!dev) throw new DocaError('BAD_STATE', 'doca_dev_rep_open', `the Arm device ${rep.spec.arm} of representor ${rep.spec.pci} is not open`);
    return new DevRep(rep, dev, key);
  }

  /** `doca_dev_rep_as_devinfo`. */
  asDevinfo(): DevinfoRep {
    return this.info;
  }

  get name(): string {
    return `representor ${this.info.spec.pci}`;
  }

  protected override _onClosed(): void {
    this.dev._release(this);
  }
}

/**
 * `doca_devinfo_rep_create_list`: the representors an opened Arm device reaches, filtered by
 * `DevinfoRepFilter` bits (ALL, NET, EMULATED). NOT_SUPPORTED on the host side, as in DOCA.
 */
export function devinfoRepCreateList(dev: Dev, filter: number): DevinfoRep[] {
  const call = 'doca_devinfo_rep_create_list';
  if (!(dev instanceof Dev)) throw new DocaError('INVALID_VALUE', call, `expected an open Dev, got ${describeValue(dev)}`);
  if (!dev.isOpen) throw new DocaError('INVALID_VALUE', call, `${dev.name} is closed`);
  if (!Number.isInteger(filter) || (filter & ~(DevinfoRepFilter.NET | DevinfoRepFilter.EMULATED)) !== 0) {
    throw new DocaError('INVALID_VALUE', call, `filter ${filter} is not a combination of ALL (0), NET (2) and EMULATED (4)`);
  }
  const devinfo = dev.asDevinfo();
  if (devinfo.side !== 'dpu') {
    throw new DocaError('NOT_SUPPORTED', call, `${devinfo.spec.pci} is a host function; representors are only available on the DPU`);
  }
  const wantNet = filter === DevinfoRepFilter.ALL || (filter & DevinfoRepFilter.NET) !== 0;
  const wantEmulated = filter === DevinfoRepFilter.ALL || (filter & DevinfoRepFilter.EMULATED) !== 0;
  const life = new ListLife();
  const list = devinfo.spec.representors.filter((r) => (r.emulated ? wantEmulated : wantNet)).map((r) => new DevinfoRep(r, devinfo, life));
  lists.set(list, life);
  return list;
}

/**
 * Opens the device at `address` as NVIDIA's samples do (`open_doca_device_with_pci`): list, compare,
 * open, destroy the list. `check` may refuse a device that lacks a capability (throw from it).
 */
export function openDeviceByPci(address: string, options: { fabric?: Fabric; check?: (devinfo: Devinfo) => void } = {}): Dev {
  const list = devinfoCreateList(options.fabric ? { fabric: options.fabric } : {});
  try {
    const found = list.find((d) => d.isEqualPciAddr(address));
    if (!found) throw new DocaError('NOT_FOUND', 'open_doca_device_with_pci', `no device with PCI address ${address} in topology ${(options.fabric ?? currentFabric()).topology.source}`);
    options.check?.(found);
    return Dev.open(found);
  } finally {
    devinfoDestroyList(list);
  }
}

/** Opens the representor of host function `address` reached through `dev` (`open_doca_device_rep_with_pci`). */
export function openRepresentorByPci(dev: Dev, filter: number, address: string): DevRep {
  const list = devinfoRepCreateList(dev, filter);
  const found = list.find((r) => r.isEqualPciAddr(address));
  if (!found) throw new DocaError('NOT_FOUND', 'open_doca_device_rep_with_pci', `${dev.asDevinfo().spec.pci} has no representor for ${address}`);
  return DevRep.open(found);
}
