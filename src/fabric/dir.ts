/**
 * The fabric directory: the runtime state of one emulated machine (sockets and records of the
 * processes that joined it). Private to its user: mode 0700, owned by us, never a symlink.
 */
import { accessSync, constants, lstatSync, mkdirSync, readdirSync, realpathSync, statfsSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DocaError, osError } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import { foldIntoTally } from './faults/files.js';
import { isAlive } from './liveness.js';
import { entryOwner, FAULT_STATS_KIND } from './names.js';

const log = sdkLogSource('fabric');

/** `$XDG_RUNTIME_DIR/softdpu`, else `/tmp/softdpu-<uid>`. */
export function defaultFabricDir(): string {
  const xdg = process.env.XDG_RUNTIME_DIR;
  return xdg ? join(xdg, 'softdpu') : join('/tmp', `softdpu-${process.getuid?.() ?? 'user'}`);
}

/** The `--fabric` option, else `$SOFTDPU_FABRIC`, else the default. */
export function resolveFabricDir(option?: string): string {
  return option ?? process.env.SOFTDPU_FABRIC ?? defaultFabricDir();
}

/**
 * Filesystems that cannot hold a fabric (its files, sockets and locks), by `statfs` magic: the kernel's
 * pseudo filesystems. Creating a directory under procfs even hangs `mkdirSync(..., { recursive: true })`
 * in Node 20, so the location is checked before anything is created.
 */
const PSEUDO_FILESYSTEMS: Record<number, string> = {
  0x9fa0: 'procfs',
  0x62656572: 'sysfs',
  0x1cd1: 'devpts',
  0x27e0eb: 'cgroup',
  0x63677270: 'cgroup2',
  0x64626720: 'debugfs',
  0x74726163: 'tracefs',
  0x73636673: 'securityfs',
  0xcafe4a11: 'bpf',
  0x62656570: 'configfs',
  0x6165676c: 'pstore',
  0xde5e81e4: 'efivarfs',
  0x65735543: 'fusectl',
  0x42494e4d: 'binfmt_misc',
  0x6e736673: 'nsfs',
  0xf97cff8c: 'selinuxfs',
  0x19800202: 'mqueue',
};

/**
 * Refuses a fabric location that cannot work, before anything is created: a path through a symlink
 * that leads nowhere, a part of it that is not a directory, a pseudo filesystem (procfs, sysfs...), or a
 * directory this process cannot create entries in (read-only filesystem, no permission). `path` may not
 * exist yet; then its nearest existing ancestor is what is checked.
 */
export function checkFabricLocation(path: string, call = 'fabric'): void {
  const target = resolve(path);
  let existing = target;
  for (;;) {
    const st = lstatSync(existing, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) {
      if (!statSync(existing, { throwIfNoEntry: false })) {
        throw new DocaError('NOT_FOUND', call, `fabric directory ${path}: ${existing} is a symbolic link to something that does not exist`);
      }
      break;
    }
    if (st) break;
    const up = dirname(existing);
    if (up === existing) break;
    existing = up;
  }
  if (!statSync(existing).isDirectory()) {
    throw new DocaError('NOT_PERMITTED', call, `fabric directory ${path}: ${existing === target ? 'it' : existing} is not a directory`);
  }
  const fs = PSEUDO_FILESYSTEMS[Number(statfsSync(existing).type)];
  if (fs) throw new DocaError('NOT_SUPPORTED', call, `fabric directory ${path} is on ${fs}, which cannot hold a fabric's files and sockets; choose a directory under /tmp or $XDG_RUNTIME_DIR`);
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw osError(err, call, `fabric directory ${path}: cannot create entries in ${realpathSync(existing)}`);
  }
}

/** Creates the directory if needed and refuses one that others could read or plant files in. */
export function ensureFabricDir(path: string): void {
  checkFabricLocation(path);
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw osError(err, 'fabric', `cannot create fabric directory ${path}`);
  }
  const st = lstatSync(path);
  if (!st.isDirectory()) throw new DocaError('NOT_PERMITTED', 'fabric', `fabric directory ${path} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new DocaError('NOT_PERMITTED', 'fabric', `fabric directory ${path} is owned by uid ${st.uid}, not by this user (${uid})`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new DocaError('NOT_PERMITTED', 'fabric', `fabric directory ${path} has mode 0${(st.mode & 0o777).toString(8)}; it must be private (0700)`);
  }
}

/** What a sweep did. */
export interface SweepReport {
  /** Entries removed because their owner is gone. */
  readonly removed: readonly string[];
  /** Entries of live owners, left alone. */
  readonly live: number;
}

/** Removes every entry whose owner process is dead (`softdpu fabric clean`; also run on joining). */
export function sweepFabricDir(path: string): SweepReport {
  const removed: string[] = [];
  let live = 0;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return { removed, live };
  }
  for (const name of names) {
    const owner = entryOwner(name);
    if (!owner) continue;
    if (isAlive(owner)) {
      live++;
      continue;
    }
    try {
      // A thread's fault counts outlive it in the plan's tally (faults/files.ts).
      if (owner.kind === FAULT_STATS_KIND) foldIntoTally(path, name);
      else unlinkSync(join(path, name));
      removed.push(name);
      log.info(`removed ${name}: owner pid ${owner.pid} is gone`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`cannot remove ${name}: ${(err as Error).message}`);
    }
  }
  return { removed, live };
}
