/**
 * A fabric: one emulated machine, its runtime directory and its topology. Every process that opens a
 * device joins a fabric; joining sweeps what dead processes left in the directory.
 */
import { createHash } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { ensureFabricDir, resolveFabricDir, type SweepReport, sweepFabricDir } from './dir.js';
import { sweepEpitaphs } from './epitaphs.js';
import { followFabric } from './faults/index.js';
import { socketPath } from './names.js';
import type { PciAddress } from './pci.js';
import { type DeviceSpec, findDevice, loadTopology, type Topology } from './topology.js';

/** Which fabric `Fabric.open` and `useFabric` join (the CLI's `--fabric` and `--topology`). */
export interface FabricOptions {
  /** Fabric directory (default: `$SOFTDPU_FABRIC`, else under `$XDG_RUNTIME_DIR` or /tmp). */
  dir?: string;
  /** Topology file (default: `$SOFTDPU_TOPOLOGY`, else the embedded default). */
  topology?: string;
  /** Sweep the leftovers of dead processes on joining (default true). */
  sweep?: boolean;
}

/**
 * A fabric: one emulated machine, its runtime directory and its topology; no DOCA object of its own, it
 * is what `doca_devinfo_create_list` lists the devices of. Every process that opens a device joins one
 * (`currentFabric()`: `$SOFTDPU_FABRIC` and `$SOFTDPU_TOPOLOGY`, or what `useFabric` set); joining sweeps
 * what dead processes left in the directory.
 *
 * @example
 * ```ts
 * // a test suite's own fabric, before anything opens a device
 * useFabric({ dir: mkdtempSync('/tmp/fabric-'), topology: 'test/topology.json' });
 * const dev = openDeviceByPci('03:00.0'); // a device of that topology
 * console.log(currentFabric().findDevice('b1:00.0')?.side); // 'host'
 * ```
 */
export class Fabric {
  private constructor(
    readonly dir: string,
    readonly topology: Topology,
    /** 8 bytes naming this fabric (its directory's path and inode): export blobs carry it. */
    readonly id: Uint8Array,
  ) {}

  /** Joins (creating if needed) the fabric and sweeps the leftovers of dead processes. */
  static open(options: FabricOptions = {}): Fabric {
    const topology = loadTopology(options.topology);
    const dir = resolveFabricDir(options.dir);
    ensureFabricDir(dir);
    if (options.sweep !== false) {
      sweepFabricDir(dir);
      sweepEpitaphs(dir); // those of exited threads stay a while (fabric/epitaphs.ts)
    }
    const real = realpathSync(dir);
    const st = statSync(real);
    const id = createHash('sha256').update(`${real}\0${st.dev}\0${st.ino}`).digest().subarray(0, 8);
    followFabric(real); // its fault plan (and $SOFTDPU_FAULTS on the first join): docs/faults.md
    return new Fabric(real, topology, new Uint8Array(id));
  }

  /**
   * Removes what dead processes left (`softdpu fabric clean`), the epitaphs of exited ones included
   * (joining keeps those a while: docs/observe.md).
   */
  sweep(): SweepReport {
    const report = sweepFabricDir(this.dir);
    return { ...report, removed: [...report.removed, ...sweepEpitaphs(this.dir, { ms: 0, count: 0 })] };
  }

  /** Path for a Unix socket owned by this process. */
  socketPath(kind: string, tag: string): string {
    return socketPath(this.dir, kind, tag);
  }

  /** The topology's device (or host function) at `address` (`DDDD:BB:DD.F` or `BB:DD.F`), if there is one. */
  findDevice(address: string | PciAddress): DeviceSpec | undefined {
    return findDevice(this.topology, address);
  }
}

let current: Fabric | undefined;

/** The fabric this process works in: the one set by {@link useFabric}, else one from the environment. */
export function currentFabric(): Fabric {
  return (current ??= Fabric.open());
}

/** Makes `options` the process's fabric (the CLI's `--fabric` and `--topology`). */
export function useFabric(options: FabricOptions): Fabric {
  current = Fabric.open(options);
  return current;
}
