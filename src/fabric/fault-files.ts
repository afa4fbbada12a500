/**
 * The fault plan's files in a fabric directory: the plan itself (`faults.json`, written whole to a
 * temporary file and renamed, so a reader sees the old plan or the new one, never half of one) and the
 * injection counts each thread publishes (`faults.<pid>-<start>.t<tid>`, swept with their process).
 * Specified in docs/protocol.md#fault-plan-files.
 *
 *   faults.json: { "version": 1, "generation": 3, "seed": 42, "nextId": 4, "faults": [ { "id": "f1", ... } ] }
 */
import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocaError } from '../core/error.js';
import { type Fault, parsePlan } from './fault-plan.js';
import { isAlive } from './liveness.js';
import { entryOwner, FAULT_STATS_KIND, faultPlanPath, tempPath } from './names.js';

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

/** Every live thread's published counts in the fabric. */
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
    if (owner?.kind !== FAULT_STATS_KIND || !isAlive(owner)) continue;
    try {
      const stats = JSON.parse(readFileSync(join(dir, name), 'utf8')) as FaultStats;
      if (Array.isArray(stats.faults)) out.push(stats);
    } catch {
      // Removed or being replaced right now: its owner publishes again on its next pass.
    }
  }
  return out;
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
