/**
 * Every name the fabric puts anywhere: files and sockets in the fabric directory, memfd labels, the
 * /proc paths peers open segments by. Each carries its owner's identity (pid and start time), so a
 * sweep can tell what a dead process left behind.
 *
 * Fabric entry:  <kind>.<pid>-<start>.<tag>[.sock]   e.g. conn.4711-88012.9f2c1a.sock
 * Epitaph:       <entry>.exited                       e.g. stats.4711-88012.4711.exited
 *
 * An epitaph is what a thread leaves on purpose when it ends: it names its owner like the entry it
 * follows, but it is not an entry (ENTRY does not match it), so the sweep of dead owners' entries leaves
 * it; fabric/epitaphs.ts keeps it for a while and removes it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DocaError } from '../core/error.js';
import { type ProcessIdentity, self } from './liveness.js';

/** Longest path a Unix socket address holds (sun_path is 108 bytes with the NUL). */
export const MAX_SOCKET_PATH = 107;

const KIND = /^[a-z][a-z0-9-]{0,15}$/;
const TAG = /^[A-Za-z0-9_-]{1,40}$/;
const ENTRY = /^([a-z][a-z0-9-]{0,15})\.(\d+)-(\d+)\.([A-Za-z0-9_-]{1,40})(\.sock)?$/;

/** A short, file-name-safe digest of arbitrary text (server names may hold any byte). */
export function digest(text: string, length = 16): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, length);
}

/** Name of a fabric entry owned by `owner` (default: this process). */
export function entryName(kind: string, tag: string, options: { socket?: boolean; owner?: ProcessIdentity } = {}): string {
  if (!KIND.test(kind)) throw new DocaError('INVALID_VALUE', 'fabric', `entry kind ${JSON.stringify(kind)} is not [a-z][a-z0-9-]{0,15}`);
  if (!TAG.test(tag)) throw new DocaError('INVALID_VALUE', 'fabric', `entry tag ${JSON.stringify(tag)} is not [A-Za-z0-9_-]{1,40}`);
  const owner = options.owner ?? self;
  return `${kind}.${owner.pid}-${owner.start}.${tag}${options.socket ? '.sock' : ''}`;
}

/** Path of a Unix socket in the fabric directory; refused if it would not fit in sun_path. */
export function socketPath(dir: string, kind: string, tag: string): string {
  const path = join(dir, entryName(kind, tag, { socket: true }));
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new DocaError('INVALID_VALUE', 'fabric', `socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter fabric directory`);
  }
  return path;
}

/** Who owns a fabric entry, from its name; undefined for names the fabric did not make. */
export function entryOwner(name: string): (ProcessIdentity & { kind: string; tag: string }) | undefined {
  const m = ENTRY.exec(name);
  if (!m) return undefined;
  return { kind: m[1]!, pid: Number(m[2]), start: Number(m[3]), tag: m[4]! };
}

const EPITAPH_SUFFIX = '.exited';

/** Name of the epitaph of this process's entry `<kind>.<pid>-<start>.<tag>` (docs/protocol.md#epitaphs). */
export function epitaphName(kind: string, tag: string): string {
  return entryName(kind, tag) + EPITAPH_SUFFIX;
}

/** Whose epitaph `name` is (its entry's owner, kind and tag); undefined for any other name. */
export function epitaphOwner(name: string): (ProcessIdentity & { kind: string; tag: string }) | undefined {
  if (!name.endsWith(EPITAPH_SUFFIX)) return undefined;
  const entry = name.slice(0, -EPITAPH_SUFFIX.length);
  return entry.endsWith('.sock') ? undefined : entryOwner(entry);
}

/** Label of a memfd (visible in /proc/<pid>/fd and /proc/<pid>/maps as memfd:softdpu.<kind>.<pid>). */
export function memfdLabel(kind: string): string {
  return `softdpu.${kind}.${self.pid}`;
}

/** Where a peer opens a segment created by `pid` as memfd `fd`. */
export function segmentPath(pid: number, fd: number): string {
  return `/proc/${pid}/fd/${fd}`;
}

/** The fabric's fault plan (docs/faults.md): belongs to the fabric, not to a process, so no sweep removes it. */
export function faultPlanPath(dir: string): string {
  return join(dir, 'faults.json');
}

/**
 * The injections of fabric faults counted by threads that have ended (their counts files were folded
 * into it); belongs to the fabric, like the plan.
 */
export function faultTallyPath(dir: string): string {
  return join(dir, 'faults-tally.json');
}

/** Kind of the entries in which each thread publishes its fault injection counts. */
export const FAULT_STATS_KIND = 'faults';

/** Where thread `tid` of this process publishes its injection counts: faults.<pid>-<start>.t<tid>. */
export function faultStatsPath(dir: string, tid: number): string {
  return join(dir, entryName(FAULT_STATS_KIND, `t${tid}`));
}

/** A temporary file of this process, renamed over its target (swept with the process if it dies first). */
export function tempPath(dir: string): string {
  return join(dir, entryName('tmp', randomBytes(6).toString('hex')));
}
