/**
 * What a device answers to the capability queries, from its topology entry and its side, as real DOCA
 * answers them: a comch server only on the DPU's Arm side, a client only on the host side. The
 * `doca_*_cap_*` functions and `softdpu devices` both read this one report.
 */
import { active as faultsActive, faultCaps } from '../fabric/faults/index.js';
import type { Caps, DeviceSpec } from '../fabric/topology.js';

/**
 * Everything a device answers to `doca_*_cap_*` queries, by library: the topology's limits ({@link Caps})
 * with the `*_is_supported` answers that depend on the device's side and function type.
 */
export interface CapabilityReport {
  /** `doca_comch_cap_*`; `server` and `client` are `doca_comch_cap_server_is_supported` / `_client_is_supported`. */
  readonly comch: Caps['comch'] & { readonly server: boolean; readonly client: boolean };
  readonly consumer: Caps['consumer'] & { readonly supported: boolean };
  readonly producer: Caps['producer'] & { readonly supported: boolean };
  readonly syncEvent: Caps['syncEvent'];
  readonly mmap: Caps['mmap'];
  /** `doca_dpa_cap_is_supported`: the DPU's Arm side and host physical functions have a DPA (not VFs, SFs). */
  readonly dpa: Caps['dpa'] & { readonly supported: boolean };
}

/** The device's report; a fault plan's `caps` faults lower what it says (docs/faults.md). */
export function capabilityReport(spec: DeviceSpec): CapabilityReport {
  return faultsActive ? faultCaps(spec.pci.toString(), spec.side, fromTopology(spec)) : fromTopology(spec);
}

function fromTopology(spec: DeviceSpec): CapabilityReport {
  return {
    comch: { ...spec.caps.comch, server: spec.side === 'dpu', client: spec.side === 'host' },
    consumer: { ...spec.caps.consumer, supported: true },
    producer: { ...spec.caps.producer, supported: true },
    syncEvent: { ...spec.caps.syncEvent },
    mmap: { ...spec.caps.mmap },
    dpa: { ...spec.caps.dpa, supported: spec.side === 'dpu' || spec.funcType === 'PF' },
  };
}
