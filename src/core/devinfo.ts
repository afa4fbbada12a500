/**
 * Device information (doca_dev.h): the devices of the fabric and the representors an Arm device sees.
 * A list's entries die with the list, as in DOCA: keep an opened device's `asDevinfo()` instead.
 */
import { type Fabric, currentFabric } from '../fabric/fabric.js';
import { PciAddress } from '../fabric/pci.js';
import type { DeviceSpec, RepresentorSpec, Side } from '../fabric/topology.js';
import { DocaError, describeValue } from './error.js';

/** `enum doca_pci_func_type`. */
export const PciFuncType = { PF: 0, VF: 1, SF: 2 } as const;
export type PciFuncType = (typeof PciFuncType)[keyof typeof PciFuncType];

/** `enum doca_devinfo_rep_filter`. */
export const DevinfoRepFilter = { ALL: 0, NET: 1 << 1, EMULATED: 1 << 2 } as const;

/** `DOCA_DEVINFO_PCI_ADDR_SIZE`: a PCI address string `DDDD:BB:DD.F` with its NUL. */
export const DEVINFO_PCI_ADDR_SIZE = 13;
/** `DOCA_DEVINFO_PCI_BDF_SIZE`: a `BB:DD.F` string with its NUL. */
export const DEVINFO_PCI_BDF_SIZE = 8;
/** `DOCA_DEVINFO_IFACE_NAME_SIZE`: the longest interface name, NUL included. */
export const DEVINFO_IFACE_NAME_SIZE = 256;
/** `DOCA_DEVINFO_IBDEV_NAME_SIZE`: the longest InfiniBand device name, NUL included. */
export const DEVINFO_IBDEV_NAME_SIZE = 64;
/** `DOCA_DEVINFO_REP_VUID_SIZE`: the longest representor VUID, NUL included. */
export const DEVINFO_VUID_SIZE = 128;

/** @internal Tracks whether the list an entry came from was destroyed. */
export class ListLife {
  destroyed = false;
}

function parseAddr(call: string, text: string): PciAddress {
  if (typeof text !== 'string') throw new DocaError('INVALID_VALUE', call, `the PCI address must be a string, not ${describeValue(text)}`);
  return PciAddress.tryParse(text) ?? (() => {
    throw new DocaError('INVALID_VALUE', call, `${JSON.stringify(text)} is not a PCI address (DDDD:BB:DD.F or BB:DD.F)`);
  })();
}

function bytesOf(text: string, sep: string, radix: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  if (sep === ':' && size === 16) return out; // '::' is the only IPv6 address the topology gives
  text.split(sep).forEach((part, i) => (out[i] = parseInt(part, radix)));
  return out;
}

/**
 * `struct doca_devinfo`: what a device reports before it is opened.
 *
 * @example
 * ```ts
 * // doca_devinfo_create_list(&list, &n); pick the one whose PCI address matches; doca_dev_open(...)
 * const list = devinfoCreateList();
 * const devinfo = list.find((d) => d.isEqualPciAddr('03:00.0'));
 * const dev = devinfo && comchCapServerIsSupported(devinfo) ? Dev.open(devinfo) : undefined;
 * devinfoDestroyList(list);
 * ```
 */
export class Devinfo {
  /** @internal */
  constructor(
    readonly spec: DeviceSpec,
    readonly fabric: Fabric,
    private readonly life?: ListLife,
  ) {}

  /** Which side of the fabric the device is on: the DPU's Arm side or the host. */
  get side(): Side {
    return this.spec.side;
  }

  /** `doca_devinfo_get_pci_addr_str`: `DDDD:BB:DD.F`. */
  getPciAddrStr(): string {
    this.check('doca_devinfo_get_pci_addr_str');
    return this.spec.pci.toString();
  }

  /** `doca_devinfo_is_equal_pci_addr`: accepts `DDDD:BB:DD.F` or `BB:DD.F`; INVALID_VALUE for anything else. */
  isEqualPciAddr(address: string): boolean {
    this.check('doca_devinfo_is_equal_pci_addr');
    return this.spec.pci.equals(parseAddr('doca_devinfo_is_equal_pci_addr', address));
  }

  /** `doca_devinfo_get_iface_name`. */
  getIfaceName(): string {
    this.check('doca_devinfo_get_iface_name');
    return this.spec.iface;
  }

  /** `doca_devinfo_get_ibdev_name`. */
  getIbdevName(): string {
    this.check('doca_devinfo_get_ibdev_name');
    return this.spec.ibdev;
  }

  /** `doca_devinfo_get_mac_addr`: 6 bytes. */
  getMac(): Uint8Array {
    this.check('doca_devinfo_get_mac_addr');
    return bytesOf(this.spec.mac, ':', 16, 6);
  }

  /** `doca_devinfo_get_ipv4_addr`: 4 bytes. */
  getIpv4(): Uint8Array {
    this.check('doca_devinfo_get_ipv4_addr');
    return bytesOf(this.spec.ipv4, '.', 10, 4);
  }

  /** `doca_devinfo_get_ipv6_addr`: 16 bytes. */
  getIpv6(): Uint8Array {
    this.check('doca_devinfo_get_ipv6_addr');
    return bytesOf(this.spec.ipv6, ':', 16, 16);
  }

  /** `doca_devinfo_get_lid`. */
  getLid(): number {
    this.check('doca_devinfo_get_lid');
    return this.spec.lid;
  }

  /** `doca_devinfo_get_active_rate`: bits per second. */
  getActiveRate(): number {
    this.check('doca_devinfo_get_active_rate');
    return this.spec.activeRate;
  }

  /** `doca_devinfo_get_vhca_id`. */
  getVhcaId(): number {
    this.check('doca_devinfo_get_vhca_id');
    return this.spec.vhcaId;
  }

  /** `doca_devinfo_cap_is_hotplug_manager_supported`: only the DPU's Arm side manages hot-plug. */
  capIsHotplugManagerSupported(): boolean {
    this.check('doca_devinfo_cap_is_hotplug_manager_supported');
    return this.spec.side === 'dpu';
  }

  /** `doca_devinfo_cap_is_notification_moderation_supported`. */
  capIsNotificationModerationSupported(): boolean {
    this.check('doca_devinfo_cap_is_notification_moderation_supported');
    return true;
  }

  /** `doca_devinfo_cap_is_accelerate_resource_reclaim_supported`. */
  capIsAccelerateResourceReclaimSupported(): boolean {
    this.check('doca_devinfo_cap_is_accelerate_resource_reclaim_supported');
    return false;
  }

  /** `doca_devinfo_rep_cap_is_filter_all_supported`: representors exist only on the DPU side. */
  repCapIsFilterAllSupported(): boolean {
    return this.spec.side === 'dpu';
  }

  /** `doca_devinfo_rep_cap_is_filter_net_supported`. */
  repCapIsFilterNetSupported(): boolean {
    return this.spec.side === 'dpu';
  }

  /** `doca_devinfo_rep_cap_is_filter_emulated_supported`. */
  repCapIsFilterEmulatedSupported(): boolean {
    return this.spec.side === 'dpu';
  }

  /** @internal throws once the list this entry came from is destroyed. */
  check(call: string): void {
    if (this.life?.destroyed) throw new DocaError('BAD_STATE', call, `the devinfo list holding ${this.spec.pci} was destroyed`);
  }
}

/** `doca_devinfo_create_list`: every device of the fabric (both sides; a process takes a side by opening one). */
export function devinfoCreateList(options: { fabric?: Fabric } = {}): Devinfo[] {
  const fabric = options.fabric ?? currentFabric();
  const life = new ListLife();
  const list = fabric.topology.devices.map((spec) => new Devinfo(spec, fabric, life));
  if (list.length === 0) throw new DocaError('NOT_FOUND', 'doca_devinfo_create_list', `the topology ${fabric.topology.source} has no devices`);
  lists.set(list, life);
  return list;
}

/** @internal lists made here and in dev.ts, to validate destroy calls. */
export const lists = new WeakMap<readonly object[], ListLife>();

/** `doca_devinfo_destroy_list`: its entries may no longer be used (opened devices keep working). */
export function devinfoDestroyList(list: Devinfo[]): void {
  const life = lists.get(list);
  if (!life) throw new DocaError('INVALID_VALUE', 'doca_devinfo_destroy_list', `${describeValue(list)} is not a list made by devinfoCreateList`);
  if (life.destroyed) throw new DocaError('BAD_STATE', 'doca_devinfo_destroy_list', 'the list was already destroyed');
  life.destroyed = true;
}

/**
 * `struct doca_devinfo_rep`: a representor of a host function, as seen from a DPU Arm device.
 *
 * @example
 * ```ts
 * // doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n); doca_dev_rep_open(...)
 * const reps = devinfoRepCreateList(dev, DevinfoRepFilter.NET);
 * const rep = reps.find((r) => r.isEqualPciAddr('b1:00.0'));
 * const devRep = rep ? DevRep.open(rep) : undefined;
 * devinfoRepDestroyList(reps);
 * ```
 */
export class DevinfoRep {
  /** @internal */
  constructor(
    readonly spec: RepresentorSpec,
    /** The Arm device it was listed from. */
    readonly parent: Devinfo,
    private readonly life?: ListLife,
  ) {}

  /** `doca_devinfo_rep_get_pci_addr_str`: the represented host function's address. */
  getPciAddrStr(): string {
    this.check('doca_devinfo_rep_get_pci_addr_str');
    return this.spec.pci.toString();
  }

  /** `doca_devinfo_rep_is_equal_pci_addr`. */
  isEqualPciAddr(address: string): boolean {
    this.check('doca_devinfo_rep_is_equal_pci_addr');
    return this.spec.pci.equals(parseAddr('doca_devinfo_rep_is_equal_pci_addr', address));
  }

  /** `doca_devinfo_rep_get_vuid`. */
  getVuid(): string {
    this.check('doca_devinfo_rep_get_vuid');
    return this.spec.vuid;
  }

  /** `doca_devinfo_rep_get_pci_func_type`. */
  getPciFuncType(): PciFuncType {
    this.check('doca_devinfo_rep_get_pci_func_type');
    return PciFuncType[this.spec.funcType];
  }

  /** `doca_devinfo_rep_get_iface_name`. */
  getIfaceName(): string {
    this.check('doca_devinfo_rep_get_iface_name');
    return this.spec.iface;
  }

  /** `doca_devinfo_rep_get_vhca_id`. */
  getVhcaId(): number {
    this.check('doca_devinfo_rep_get_vhca_id');
    return this.spec.vhcaId;
  }

  /** `doca_devinfo_rep_get_is_hotplug`. */
  getIsHotplug(): boolean {
    this.check('doca_devinfo_rep_get_is_hotplug');
    return this.spec.hotplug;
  }

  /** @internal */
  check(call: string): void {
    if (this.life?.destroyed) throw new DocaError('BAD_STATE', call, `the representor list holding ${this.spec.pci} was destroyed`);
  }
}

/** `doca_devinfo_rep_destroy_list`. */
export function devinfoRepDestroyList(list: DevinfoRep[]): void {
  const life = lists.get(list);
  if (!life) throw new DocaError('INVALID_VALUE', 'doca_devinfo_rep_destroy_list', `${describeValue(list)} is not a list made by devinfoRepCreateList`);
  if (life.destroyed) throw new DocaError('BAD_STATE', 'doca_devinfo_rep_destroy_list', 'the list was already destroyed');
  life.destroyed = true;
}
