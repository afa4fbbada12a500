/**
 * The fabric directory: the runtime state of one emulated machine (sockets and records of the
 * processes that joined it). Private to its user: mode 0700, owned by us, never a symlink.
 */
import { lstatSync, mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DocaError } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import { isAlive } from './liveness.js';
import { entryOwner } from './names.js';

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

/** Creates the directory if needed and refuses one that others could read or plant files in. */
export function ensureFabricDir(path: string): void {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DocaError('OPERATING_SYSTEM', 'fabric', `cannot create fabric directory ${path}: ${(err as Error).message}`);
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
      unlinkSync(join(path, name));
      removed.push(name);
      log.info(`removed ${name}: owner pid ${owner.pid} is gone`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`cannot remove ${name}: ${(err as Error).message}`);
    }
  }
  return { removed, live };
}
