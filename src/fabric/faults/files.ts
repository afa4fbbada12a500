/**
 * The fault plan's files in a fabric directory: the plan itself (`faults.json`, written whole to a
 * temporary file and renamed, so a reader sees the old plan or the new one, never half of one), the
 * injection counts each thread publishes (`faults.<pid>-<start>.t<tid>`: when they change, and when the
 * thread ends or crashes), and the tally of threads that ended (`faults-tally.json`): a sweep that
 * removes a dead owner's counts file adds its counts of fabric faults to the tally first, under the plan's
 * lock, so `softdpu fault list` counts every injection, however long ago its process exited.
 * Specified in docs/protocol.md#fault-plan-files.
 *
 *   faults.json:       { "version": 1, "generation": 3, "seed": 42, "nextId": 4, "faults": [ { "id": "f1", ... } ] }
 *   faults-tally.json: { "version": 1, "injections": { "f1": 120, "f3": 2 } }
 */
import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocaError } from '../../core/error.js';
import { type Fault, parsePlan } from './plan.js';
import { isAlive } from '../liveness.js';
import { digest, entryOwner, FAULT_STATS_KIND, faultPlanPath, faultTallyPath, tempPath } from '../names.js';
import { withNameLock } from '../rendezvous.js';

const VERSION = 1;

export interface PlanFile {
  readonly generation: number;
  readonly seed: number;
  /** The number of the next id handed out (`f<n>`). */
  readonly nextId: number;
  readonly faults: readonly Fault[];
}

const EMPTY_PLAN: PlanFile = { generation: 0, seed: 1, nextId: 1, faults: [] };

/** What a thread publishes: its injection counts per fault, by where the fault came from. */
export interface FaultStats {
  readonly pid: number;
  readonly tid: number;
  readonly faults: readonly { id: string; source: string; kind: string; injections: number }[];
  /** False for a process that has ended (its file is there until a sweep folds it into the tally). */
  readonly alive?: boolean;
}

/** Identifies the plan file's current version without reading it; undefined when there is none. */
export function planStamp(dir: string): string | undefined {
  const st = statSync(faultPlanPath(dir), { bigint: true, throwIfNoEntry: false });
  return st && `${st.ino}:${st.mtimeNs}:${st.size}`;
}

/** The fabric's plan (EMPTY_PLAN when there is none); INVALID_VALUE naming what is wrong in the file. */
export function readPlanFile(dir: string, call: string): PlanFile {
  const path = faultPlanPath(dir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_PLAN;
    throw new DocaError('OPERATING_SYSTEM', call, `cannot read ${path}: ${(err as Error).message}`);
  }
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new DocaError('INVALID_VALUE', call, `${path} is not JSON: ${(err as Error).message}`);
  }
  if (raw?.version !== VERSION) throw new DocaError('INVALID_VALUE', call, `${path} has version ${JSON.stringify(raw?.version)}, not ${VERSION}`);
  const { generation, nextId, seed, faults } = raw;
  if (!Number.isSafeInteger(generation) || !Number.isSafeInteger(nextId)) throw new DocaError('INVALID_VALUE', call, `${path}: generation and nextId must be integers`);
  const plan = parsePlan({ seed, faults }, call, path);
  const ids = plan.faults.map((f) => f.id);
  if (ids.some((id) => id === undefined)) throw new DocaError('INVALID_VALUE', call, `${path}: every fault needs an id`);
  return { generation: generation as number, nextId: nextId as number, seed: plan.seed ?? 1, faults: plan.faults as Fault[] };
}

/** Replaces the fabric's plan atomically (a temporary file renamed over it). */
export function writePlanFile(dir: string, plan: PlanFile, call: string): void {
  atomicWrite(dir, faultPlanPath(dir), JSON.stringify({ version: VERSION, ...plan }, null, 2) + '\n', call);
}

/** Publishes this thread's counts at `path` (faultStatsPath). */
export function writeStats(dir: string, path: string, stats: FaultStats): void {
  atomicWrite(dir, path, JSON.stringify(stats) + '\n', 'fault statistics');
}

/** Every thread's published counts in the fabric: live ones, and ended ones not swept yet. */
export function readStats(dir: string): FaultStats[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: FaultStats[] = [];
  for (const name of names) {
    const owner = entryOwner(name);
    if (owner?.kind !== FAULT_STATS_KIND) continue;
    const stats = readCounts(join(dir, name));
    if (stats) out.push({ ...stats, alive: isAlive(owner) });
  }
  return out;
}

/** A counts file, or undefined when it is gone, being replaced right now, or not one. */
function readCounts(path: string): FaultStats | undefined {
  try {
    const stats = JSON.parse(readFileSync(path, 'utf8')) as FaultStats;
    return Array.isArray(stats?.faults) ? stats : undefined;
  } catch {
    return undefined; // removed or being replaced: its owner publishes again on its next pass
  }
}

/** A change of the fabric's plan or tally, under the fabric's lock on them: concurrent writers lose nothing. */
export function withPlanLock<T>(dir: string, call: string, fn: () => T): T {
  return withNameLock(`faults.${digest(dir)}`, call, 5000, fn);
}

/** Injections of the fabric's faults by threads that ended, by fault id. */
export function readTally(dir: string): Record<string, number> {
  let raw: { version?: unknown; injections?: unknown };
  try {
    raw = JSON.parse(readFileSync(faultTallyPath(dir), 'utf8')) as typeof raw;
  } catch {
    return {}; // none yet (or damaged: counting starts again rather than failing every listing)
  }
  if (raw?.version !== VERSION || typeof raw.injections !== 'object' || raw.injections === null) return {};
  return Object.fromEntries(Object.entries(raw.injections as Record<string, unknown>).filter((e): e is [string, number] => Number.isSafeInteger(e[1]) && (e[1] as number) >= 0));
}

function writeTally(dir: string, injections: Record<string, number>, call: string): void {
  atomicWrite(dir, faultTallyPath(dir), JSON.stringify({ version: VERSION, injections }) + '\n', call);
}

/**
 * The sweep, before it removes `name` (a dead owner's counts file): adds its counts of fabric faults to
 * the tally and removes it, under the plan's lock, so two sweepers never count it twice.
 */
export function foldIntoTally(dir: string, name: string): void {
  const call = 'fault tally';
  withPlanLock(dir, call, () => {
    const stats = readCounts(join(dir, name));
    const fabric = stats?.faults.filter((f) => f.source === 'fabric' && typeof f.id === 'string' && Number.isSafeInteger(f.injections) && f.injections > 0) ?? [];
    if (fabric.length > 0) {
      const tally = readTally(dir);
      for (const f of fabric) tally[f.id] = (tally[f.id] ?? 0) + f.injections;
      writeTally(dir, tally, call);
    }
    try {
      unlinkSync(join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  });
}

/** Forgets the tally of faults removed from the plan (the caller holds the plan's lock). */
export function dropFromTally(dir: string, ids: readonly string[], call: string): void {
  const tally = readTally(dir);
  if (!ids.some((id) => id in tally)) return;
  for (const id of ids) delete tally[id];
  writeTally(dir, tally, call);
}

function atomicWrite(dir: string, path: string, text: string, call: string): void {
  const temp = tempPath(dir);
  try {
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, path);
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch {
      // never created, or already renamed
    }
    throw new DocaError('OPERATING_SYSTEM', call, `cannot write ${path}: ${(err as Error).message}`);
  }
}
