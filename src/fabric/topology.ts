/**
 * The topology: which PCI functions exist on the emulated machine, on which side, and what each
 * reports as its capabilities. The embedded default needs no file; a JSON file (docs/topology.md)
 * describes more DPUs, VFs and SFs and overrides capabilities so edge cases can be tested small.
 */
import { readFileSync } from 'node:fs';
import { DocaError } from '../core/error.js';
import { PciAddress } from './pci.js';

/** Which side of the fabric a device is on: the DPU's Arm side, or the host. */
export type Side = 'dpu' | 'host';
/** A host function's kind (`enum doca_pci_func_type` as text). */
export type FunctionType = 'PF' | 'VF' | 'SF';

/** What `doca_comch_cap_*` answers. */
export interface ComchCaps {
  /** Longest server name including the terminating NUL (`doca_comch_cap_get_max_name_len`). */
  maxNameLen: number;
  maxMsgSize: number;
  maxRecvQueueSize: number;
  maxClients: number;
  maxSendTasks: number;
}

/** What `doca_comch_consumer_cap_*` answers. */
export interface ConsumerCaps {
  maxNumTasks: number;
  maxBufSize: number;
  maxBufListLen: number;
  maxConsumers: number;
  maxImmDataLen: number;
}

/** What `doca_comch_producer_cap_*` answers. */
export interface ProducerCaps {
  maxNumTasks: number;
  maxBufSize: number;
  maxBufListLen: number;
  maxProducers: number;
}

/** What `doca_sync_event_cap_*` answers. */
export interface SyncEventCaps {
  createFromExport: boolean;
  remoteNetCreateFromExport: boolean;
  exportToRemotePci: boolean;
  exportToRemoteNet: boolean;
  exportToDpa: boolean;
  exportToGpu: boolean;
  remoteNetExportToDpa: boolean;
  remoteNetExportToGpu: boolean;
  taskGet: boolean;
  taskNotifySet: boolean;
  taskNotifyAdd: boolean;
  taskWaitEq: boolean;
  taskWaitNeq: boolean;
}

/** What `doca_mmap_cap_*` answers. */
export interface MmapCaps {
  exportPci: boolean;
  createFromExportPci: boolean;
}

/** What the emulated DPA of a device offers (`doca_dpa_get_*`, and the fabric-wide DPA limit). */
export interface DpaCaps {
  /** Execution units: worker threads each started DPA runs its code on (`doca_dpa_get_total_num_eus_available`). */
  numEus: number;
  /** DPAs that may be started at once on one DPU, host and Arm side together, across processes. */
  maxDpas: number;
  /** `doca_dpa_get_max_threads_per_kernel`. */
  maxThreadsPerKernel: number;
  /** `doca_dpa_get_kernel_max_run_time`, in milliseconds (DOCA reports seconds). */
  kernelMaxRunTimeMs: number;
  /** Bytes of DPA memory (`doca_dpa_mem_alloc`) per DPA. */
  heapSize: number;
  /** DPA objects (threads, completions, async ops, handles) one DPA holds at once. */
  maxObjects: number;
}

/**
 * A device's capability limits by library, what the `doca_*_cap_*` queries answer (the topology's `caps`,
 * docs/topology.md); `capabilityReport` adds the answers that depend on the device's side.
 */
export interface Caps {
  comch: ComchCaps;
  consumer: ConsumerCaps;
  producer: ProducerCaps;
  syncEvent: SyncEventCaps;
  mmap: MmapCaps;
  dpa: DpaCaps;
}

/** A device a process can open (`doca_devinfo`). */
export interface DeviceSpec {
  readonly pci: PciAddress;
  readonly side: Side;
  /** Name of the DPU this device belongs to (or, on the host, the DPU it is a function of). */
  readonly dpu: string;
  readonly ibdev: string;
  readonly iface: string;
  readonly mac: string;
  readonly ipv4: string;
  readonly ipv6: string;
  readonly lid: number;
  /** Link rate in bits per second (`doca_devinfo_get_active_rate`). */
  readonly activeRate: number;
  readonly vhcaId: number;
  /** Host functions only. */
  readonly funcType?: FunctionType;
  /** Arm devices only: the host functions they represent. */
  readonly representors: readonly RepresentorSpec[];
  readonly caps: Caps;
}

/** A representor of a host function, seen from a DPU Arm device (`doca_devinfo_rep`). */
export interface RepresentorSpec {
  /** The represented host function's PCI address (`doca_devinfo_rep_get_pci_addr_str`). */
  readonly pci: PciAddress;
  readonly funcType: FunctionType;
  readonly iface: string;
  readonly vuid: string;
  readonly vhcaId: number;
  readonly hotplug: boolean;
  /** Emulated (virtio/NVMe) function rather than a network function: selects the EMULATED filter. */
  readonly emulated: boolean;
  /** The Arm device it is reached through. */
  readonly arm: PciAddress;
}

/** A validated topology: the DPUs of the emulated machine and every device on either side (docs/topology.md). */
export interface Topology {
  /** Where the topology came from: 'default' or a file path. */
  readonly source: string;
  readonly dpus: readonly string[];
  readonly devices: readonly DeviceSpec[];
}

/** The capabilities of a device whose topology entry overrides none (docs/topology.md lists them). */
export const DEFAULT_CAPS: Caps = Object.freeze({
  comch: { maxNameLen: 128, maxMsgSize: 4080, maxRecvQueueSize: 4096, maxClients: 512, maxSendTasks: 8192 },
  consumer: { maxNumTasks: 8192, maxBufSize: 1 << 30, maxBufListLen: 1, maxConsumers: 64, maxImmDataLen: 32 },
  producer: { maxNumTasks: 8192, maxBufSize: 1 << 30, maxBufListLen: 1, maxProducers: 64 },
  syncEvent: {
    createFromExport: true,
    remoteNetCreateFromExport: true,
    exportToRemotePci: true,
    exportToRemoteNet: true,
    exportToDpa: true,
    exportToGpu: false,
    remoteNetExportToDpa: true,
    remoteNetExportToGpu: false,
    taskGet: true,
    taskNotifySet: true,
    taskNotifyAdd: true,
    taskWaitEq: true,
    taskWaitNeq: true,
  },
  mmap: { exportPci: true, createFromExportPci: true },
  dpa: { numEus: 4, maxDpas: 28, maxThreadsPerKernel: 256, kernelMaxRunTimeMs: 5000, heapSize: 64 << 20, maxObjects: 4096 },
});

/** Upper bounds an override may not exceed (what the emulation can honour). */
const CAP_LIMITS: Record<string, number> = {
  maxNameLen: 4096,
  maxMsgSize: 1 << 20,
  maxRecvQueueSize: 1 << 16,
  maxClients: 1 << 16,
  maxSendTasks: 1 << 20,
  maxNumTasks: 1 << 20,
  maxBufSize: 2 ** 32 - 4096,
  maxBufListLen: 1,
  maxConsumers: 1 << 16,
  maxProducers: 1 << 16,
  maxImmDataLen: 32,
  numEus: 32,
  maxDpas: 1024,
  maxThreadsPerKernel: 1 << 16,
  kernelMaxRunTimeMs: 3_600_000,
  heapSize: 1 << 30,
  maxObjects: 1 << 15,
};

/** The embedded default: one BlueField with Arm device 03:00.0, a host PF b1:00.0 and VFs b1:00.2, b1:00.3. */
export const DEFAULT_TOPOLOGY_JSON = {
  dpus: [
    {
      name: 'bf0',
      arm: [{ pci: '03:00.0' }],
      host: [
        { pci: 'b1:00.0', type: 'PF' },
        { pci: 'b1:00.2', type: 'VF' },
        { pci: 'b1:00.3', type: 'VF' },
      ],
    },
  ],
};

function fail(path: string, problem: string): never {
  throw new DocaError('BAD_CONFIG', 'topology', `${path}: ${problem}`);
}

type Json = Record<string, unknown>;

function object(value: unknown, path: string, keys: readonly string[]): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) fail(`${path}.${key}`, `unknown field (allowed: ${keys.join(', ')})`);
  }
  return value as Json;
}

function array(value: unknown, path: string, min: number): unknown[] {
  if (!Array.isArray(value)) fail(path, 'must be an array');
  if (value.length < min) fail(path, `must have at least ${min} entr${min === 1 ? 'y' : 'ies'}`);
  return value;
}

function string(obj: Json, key: string, path: string, fallback: string): string {
  const v = obj[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || v.length === 0 || v.length > 255) fail(`${path}.${key}`, 'must be a non-empty string of at most 255 characters');
  return v;
}

function pci(obj: Json, key: string, path: string): PciAddress {
  const v = obj[key];
  if (typeof v !== 'string') fail(`${path}.${key}`, 'is required and must be a PCI address string');
  return PciAddress.tryParse(v) ?? fail(`${path}.${key}`, `${JSON.stringify(v)} is not a PCI address (BB:DD.F or DDDD:BB:DD.F)`);
}

/** Capabilities the emulation cannot provide: a topology may not claim them (caps answer truthfully). */
const UNAVAILABLE = new Set(['exportToGpu', 'remoteNetExportToGpu']);

function mergeCaps(base: Caps, override: unknown, path: string): Caps {
  if (override === undefined) return base;
  const o = object(override, path, Object.keys(base));
  const merged = structuredClone(base) as unknown as Record<string, Record<string, number | boolean>>;
  for (const [group, values] of Object.entries(o)) {
    const groupPath = `${path}.${group}`;
    const target = merged[group]!;
    const fields = object(values, groupPath, Object.keys(target));
    for (const [field, v] of Object.entries(fields)) {
      const p = `${groupPath}.${field}`;
      if (typeof target[field] === 'boolean') {
        if (typeof v !== 'boolean') fail(p, 'must be true or false');
        if (v && UNAVAILABLE.has(field)) fail(p, 'cannot be true: softdpu has no GPU');
      } else {
        const limit = CAP_LIMITS[field] ?? 2 ** 32 - 1;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > limit) {
          fail(p, `must be an integer in [1, ${limit}], got ${JSON.stringify(v)}`);
        }
      }
      target[field] = v as number | boolean;
    }
  }
  if ((merged.comch!.maxNameLen as number) < 2) fail(`${path}.comch.maxNameLen`, 'must leave room for one character and the NUL');
  return merged as unknown as Caps;
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');

/** Validates a parsed topology document; every error names the offending field. */
export function parseTopology(doc: unknown, source: string): Topology {
  const root = object(doc, '$', ['dpus', 'caps']);
  const fabricCaps = mergeCaps(DEFAULT_CAPS, root.caps, '$.caps');
  const devices: DeviceSpec[] = [];
  const seen = new Map<string, string>();
  const claim = (addr: PciAddress, path: string) => {
    const prior = seen.get(addr.toString());
    if (prior) fail(path, `PCI address ${addr} is already used by ${prior}`);
    seen.set(addr.toString(), path);
  };
  const names: string[] = [];
  let vhca = 0;
  array(root.dpus, '$.dpus', 1).forEach((rawDpu, d) => {
    const dp = `$.dpus[${d}]`;
    const dpu = object(rawDpu, dp, ['name', 'arm', 'host', 'caps']);
    const name = string(dpu, 'name', dp, `bf${d}`);
    // Export blobs carry the DPU's name in 64 bytes (core/pci-export.ts).
    if (Buffer.byteLength(name, 'utf8') > 64) fail(`${dp}.name`, `${JSON.stringify(name)} is ${Buffer.byteLength(name, 'utf8')} bytes of UTF-8; at most 64`);
    if (names.includes(name)) fail(`${dp}.name`, `DPU name ${JSON.stringify(name)} is used twice`);
    names.push(name);
    const caps = mergeCaps(fabricCaps, dpu.caps, `${dp}.caps`);
    const arms = array(dpu.arm, `${dp}.arm`, 1).map((raw, a) => {
      const ap = `${dp}.arm[${a}]`;
      const arm = object(raw, ap, ['pci', 'ibdev', 'iface', 'mac']);
      const addr = pci(arm, 'pci', ap);
      claim(addr, ap);
      return { addr, arm, ap, reps: [] as RepresentorSpec[] };
    });
    const counters = { PF: 0, VF: 0, SF: 0 };
    const hostFns = array(dpu.host ?? [], `${dp}.host`, 0).map((raw, h) => {
      const hp = `${dp}.host[${h}]`;
      const fn = object(raw, hp, ['pci', 'type', 'ibdev', 'iface', 'mac', 'arm', 'emulated', 'hotplug', 'sfnum']);
      const addr = pci(fn, 'pci', hp);
      claim(addr, hp);
      const type = (fn.type ?? 'PF') as FunctionType;
      if (!['PF', 'VF', 'SF'].includes(type)) fail(`${hp}.type`, `${JSON.stringify(fn.type)} is not PF, VF or SF`);
      for (const key of ['emulated', 'hotplug'] as const) {
        if (fn[key] !== undefined && typeof fn[key] !== 'boolean') fail(`${hp}.${key}`, 'must be true or false');
      }
      // A safe integer: both sides name the SF's interfaces after it, so it must be a number both hold exactly.
      if (fn.sfnum !== undefined && (type !== 'SF' || !Number.isSafeInteger(fn.sfnum) || (fn.sfnum as number) < 0)) {
        fail(`${hp}.sfnum`, 'is only for SF functions and must be an integer in [0, 2^53 - 1]');
      }
      const armAddr = fn.arm === undefined ? arms[0]!.addr : pci(fn, 'arm', hp);
      const owner = arms.find((a) => a.addr.equals(armAddr)) ?? fail(`${hp}.arm`, `${armAddr} is not an Arm device of ${name}`);
      const n = counters[type]++;
      const sfnum = (fn.sfnum as number | undefined) ?? n;
      const hostIface = { PF: `ens${d + 1}f${n}np${n}`, VF: `ens${d + 1}f0v${n}`, SF: `en${d + 1}f0pf0sf${sfnum}` }[type];
      const repIface = { PF: `pf${n}hpf`, VF: `pf0vf${n}`, SF: `en3f0pf0sf${sfnum}` }[type];
      owner.reps.push({
        pci: addr,
        funcType: type,
        iface: repIface,
        vuid: `${name.toUpperCase()}${repIface}`,
        vhcaId: ++vhca,
        hotplug: (fn.hotplug as boolean | undefined) ?? false,
        emulated: (fn.emulated as boolean | undefined) ?? false,
        arm: owner.addr,
      });
      return { addr, fn, hp, type, hostIface };
    });
    arms.forEach(({ addr, arm, ap, reps }, a) => {
      devices.push(device(addr, 'dpu', name, arm, ap, `mlx5_${a}`, `p${a}`, d, ++vhca, caps, reps));
    });
    hostFns.forEach(({ addr, fn, hp, type, hostIface }, h) => {
      devices.push({ ...device(addr, 'host', name, fn, hp, `mlx5_${h}`, hostIface, d, ++vhca, caps, []), funcType: type });
    });
  });
  return { source, dpus: names, devices };
}

function device(
  addr: PciAddress,
  side: Side,
  dpu: string,
  raw: Json,
  path: string,
  ibdev: string,
  iface: string,
  dpuIndex: number,
  vhcaId: number,
  caps: Caps,
  representors: RepresentorSpec[],
): DeviceSpec {
  const mac = string(raw, 'mac', path, `02:${hex2(dpuIndex)}:${side === 'dpu' ? '0d' : '0a'}:${hex2(addr.bus)}:${hex2(addr.device)}:${hex2(addr.func)}`);
  if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(mac)) fail(`${path}.mac`, `${JSON.stringify(mac)} is not a MAC address`);
  return {
    pci: addr,
    side,
    dpu,
    ibdev: string(raw, 'ibdev', path, ibdev),
    iface: string(raw, 'iface', path, iface),
    mac: mac.toLowerCase(),
    ipv4: '0.0.0.0',
    ipv6: '::',
    lid: 0,
    activeRate: 200e9,
    vhcaId,
    representors,
    caps,
  };
}

/** Reads and validates a topology file. */
export function loadTopologyFile(path: string): Topology {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new DocaError('BAD_CONFIG', 'topology', `cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new DocaError('BAD_CONFIG', 'topology', `${path} is not JSON: ${(err as Error).message}`);
  }
  return parseTopology(doc, path);
}

/** The topology named by `path`, else `$SOFTDPU_TOPOLOGY`, else the embedded default. */
export function loadTopology(path?: string): Topology {
  const file = path ?? process.env.SOFTDPU_TOPOLOGY;
  return file ? loadTopologyFile(file) : parseTopology(DEFAULT_TOPOLOGY_JSON, 'default');
}

/** The representor (on some Arm device) of host function `address`, if the topology has one. */
export function representorOf(topology: Topology, address: string | PciAddress): RepresentorSpec | undefined {
  for (const device of topology.devices) {
    const rep = device.representors.find((r) => r.pci.equals(address));
    if (rep) return rep;
  }
  return undefined;
}

/** Finds a device by PCI address, in either written form. */
export function findDevice(topology: Topology, address: string | PciAddress): DeviceSpec | undefined {
  return topology.devices.find((d) => d.pci.equals(address));
}
