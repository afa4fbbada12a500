/**
 * `softdpu doctor [--json]`: can softdpu work here, and what to do when it cannot. Which addon binary
 * loaded and from where (or why none did, and how to build one from source), the runtime, the kernel
 * features the fabric uses, probed for real, and the fabric directory.
 *
 * The addon is imported lazily, inside try/catch: doctor is the command people run when it does not
 * load, so it must not need it to start. The probes call the addon directly (a diagnostic of the addon,
 * not a user of it), and undo everything they make.
 */
import { existsSync, lstatSync } from 'node:fs';
import { release } from 'node:os';
import { checkFabricLocation, ensureFabricDir, resolveFabricDir } from '../fabric/dir.js';
import { digest, segmentPath, socketPath } from '../fabric/names.js';
import type { Segment } from '../fabric/segment.js';
import { type AddonAttempt, type AddonKind, AddonLoadError, buildCommand } from '../native/locate.js';
import { RingResult } from '../native/native.js';
import { packageVersion } from './version.js';

export interface Check {
  ok: boolean;
  detail: string;
}

export interface DoctorReport {
  /** Everything below is usable (the exit code is 0). */
  ok: boolean;
  version: string;
  addon: Check & { path: string | null; kind: AddonKind | null; passedOver: AddonAttempt[]; buildCommand: string };
  runtime: { node: string; napi: string | null; platform: string; arch: string; kernel: string };
  features: { memfd: Check; procFd: Check; futex: Check; pipe: Check };
  fabric: Check & { path: string; exists: boolean; mode: string | null };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function probe(fn: () => string): Check {
  try {
    return { ok: true, detail: fn() };
  } catch (err) {
    return { ok: false, detail: message(err) };
  }
}

async function checkAddon(): Promise<DoctorReport['addon']> {
  try {
    const { addon } = await import('../native/load.js');
    const { path, kind } = addon;
    return { ok: true, detail: `${kind} ${path}`, path, kind, passedOver: [...addon.passedOver], buildCommand: buildCommand() };
  } catch (err) {
    const passedOver = err instanceof AddonLoadError ? [...err.attempts] : [];
    return { ok: false, detail: message(err), path: null, kind: null, passedOver, buildCommand: buildCommand() };
  }
}

/** Makes a segment, reopens it as a peer would, waits and wakes on it, and rings a doorbell pipe. */
async function probeFeatures(): Promise<DoctorReport['features']> {
  const segments = await import('../fabric/segment.js');
  const { native } = await import('../native/load.js');
  let segment: Segment | undefined;
  const memfd = probe(() => {
    segment = segments.Segment.create('doctor', 64);
    return `created a ${segment.size}-byte shared segment (memfd ${segment.descriptor.fd})`;
  });
  const skipped = { ok: false, detail: 'not probed: no segment' };
  const procFd = !segment
    ? skipped
    : probe(() => {
        segments.Segment.open(segment!.descriptor, 'doctor').close();
        return `reopened it as ${segmentPath(process.pid, segment!.descriptor.fd)}, as a peer does`;
      });
  const futex = !segment
    ? skipped
    : probe(() => {
        const early = segment!.wait(64, 1, 0);
        const late = segment!.wait(64, 0, 1);
        if (early !== 'not-equal' || late !== 'timed-out') throw new Error(`futex waits returned ${early} and ${late}, not not-equal and timed-out`);
        segment!.wake(64);
        return 'a wait on a changed word returned at once, a 1 ms wait timed out, a wake went through';
      });
  segment?.close();
  const pipe = probe(() => {
    const bell = native.pipeCreate();
    try {
      const writer = native.pipeOpen(segmentPath(process.pid, bell.writeFd), bell.inode);
      try {
        const rung = native.pipeRing(writer);
        const drained = native.pipeDrain(bell.readFd);
        if (rung !== RingResult.Rung || drained !== 1) throw new Error(`ringing gave ${rung} and draining read ${drained} bytes, not ${RingResult.Rung} and 1`);
      } finally {
        native.fdClose(writer);
      }
    } finally {
      native.fdClose(bell.readFd);
      native.fdClose(bell.writeFd);
    }
    return `a doorbell pipe reopened through /proc/${process.pid}/fd rang and drained`;
  });
  return { memfd, procFd, futex, pipe };
}

/** The directory the CLI would use: usable as it is, or creatable. Creates nothing. */
function checkFabric(option: string | undefined): DoctorReport['fabric'] {
  const path = resolveFabricDir(option);
  const exists = existsSync(path);
  const mode = exists ? `0${(lstatSync(path).mode & 0o777).toString(8)}` : null;
  const result = probe(() => {
    // Sockets live in it: a long directory leaves no room in sun_path for their names.
    socketPath(path, 'comch-srv', digest('doctor'));
    // What joining checks first: a real filesystem, reachable, where this process can create entries.
    checkFabricLocation(path);
    if (exists) {
      ensureFabricDir(path); // refuses it (not a directory, not ours, not private) with the reason
      return `${path}: exists, mode ${mode}, owned by this user`;
    }
    return `${path}: absent; it will be created (mode 0700) on first use`;
  });
  return { ...result, path, exists, mode };
}

export async function doctor(fabricOption: string | undefined): Promise<DoctorReport> {
  const addon = await checkAddon();
  const notProbed = { ok: false, detail: 'not probed: the addon did not load' };
  const features = addon.ok ? await probeFeatures() : { memfd: notProbed, procFd: notProbed, futex: notProbed, pipe: notProbed };
  const fabric = checkFabric(fabricOption);
  const runtime = { node: process.version, napi: process.versions.napi ?? null, platform: process.platform, arch: process.arch, kernel: release() };
  const ok = addon.ok && Object.values(features).every((c) => c.ok) && fabric.ok;
  return { ok, version: packageVersion(), addon, runtime, features, fabric };
}

function line(label: string, check: Check | undefined, detail: string): string {
  const status = check === undefined ? '' : check.ok ? 'ok' : 'FAIL';
  return `  ${label.padEnd(9)}${status.padEnd(6)}${detail}`;
}

export function formatDoctor(r: DoctorReport): string {
  const { addon, runtime, features, fabric } = r;
  const out = [`softdpu ${r.version} doctor`];
  // A missing prebuild is news only when nothing loaded (a checkout has none); one that failed always is.
  const verb = addon.ok ? 'passed over' : 'tried';
  const passed = addon.passedOver.filter((a) => !addon.ok || a.problem !== 'not found').map((a) => `${verb} ${a.path}: ${a.problem}`);
  if (addon.ok) {
    out.push(line('addon', addon, `${addon.kind} ${addon.path}`), ...passed.map((p) => line('', undefined, p)));
  } else {
    out.push(line('addon', addon, 'none loads'), ...passed.map((p) => line('', undefined, p)));
    if (addon.passedOver.length === 0) out.push(line('', undefined, addon.detail));
    out.push(line('', undefined, `build it from source: ${addon.buildCommand}`), line('', undefined, '(needs a C compiler, make and python3; see docs/install.md)'));
  }
  out.push(line('runtime', undefined, `Node ${runtime.node} (N-API ${runtime.napi ?? 'none'}), ${runtime.platform}-${runtime.arch}, kernel ${runtime.kernel}`));
  out.push(line('memfd', features.memfd, features.memfd.detail));
  out.push(line('/proc fd', features.procFd, features.procFd.detail));
  out.push(line('futex', features.futex, features.futex.detail));
  out.push(line('pipe', features.pipe, features.pipe.detail));
  out.push(line('fabric', fabric, fabric.detail));
  out.push(r.ok ? 'Everything softdpu needs works here.' : 'softdpu cannot work here until the FAIL lines are fixed.');
  return out.join('\n');
}
