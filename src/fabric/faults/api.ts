/**
 * The fault plan's API (docs/faults.md). `softdpu fault add|list|clear` is a thin command over it, so
 * the program and the command write the same plan the same way.
 */
import { realpathSync } from 'node:fs';
import { DocaError } from '../../core/error.js';
import { ensureFabricDir } from '../dir.js';
import { dropFromTally, readPlanFile, readStats, readTally, withPlanLock, writePlanFile } from './files.js';
import { inForce } from './hooks.js';
import { type Fault, type FaultPlan, type FaultSpec, parsePlan } from './plan.js';
import { publishCounts, refresh, setSourcePlan, sourcePlan } from './sources.js';

/** Which plan: this process's own (no `fabric`), or a fabric's, by directory or `Fabric`. */
export interface FaultTarget {
  fabric?: string | { readonly dir: string };
}

/** A fault in a listing, with where it came from and how often it was injected. */
export type ListedFault = Fault & {
  /** 'api' (`Faults.add` in a process), 'env' ($SOFTDPU_FAULTS) or 'fabric' (the fabric's plan file). */
  readonly source: string;
  /** Injections so far: by this thread (process listing), or by every live process of the fabric. */
  readonly injections: number;
};

/** What `Faults.list` (and `softdpu fault list --json`) says is in force, with injection counts. */
export interface FaultListing {
  /** 'thread' for what is in force in the calling thread, else the fabric directory. */
  readonly where: string;
  /** The fabric plan's seed and generation (fabric listings). */
  readonly seed?: number;
  readonly generation?: number;
  readonly faults: readonly ListedFault[];
  /** Fabric listings: faults that processes added for themselves (API, $SOFTDPU_FAULTS), with their counts. */
  readonly processes?: readonly { pid: number; tid: number; alive: boolean; id: string; source: string; kind: string; injections: number }[];
}

let apiIds = 0;

/**
 * The fault plan (softdpu's own: DOCA has no fault injection). Without `fabric`, a call concerns this
 * process: its threads and the workers it creates afterwards. With `fabric`, it concerns the fabric's
 * plan file, which every process of the fabric follows within a liveness interval (about 200 ms).
 */
export const Faults = {
  /**
   * Adds faults (one, an array, or a plan `{ seed, faults }` whose seed replaces the plan's) and returns
   * their ids. INVALID_VALUE, naming the field, for anything the plan format does not allow.
   */
  add(faults: FaultSpec | readonly FaultSpec[] | FaultPlan, target: FaultTarget = {}): string[] {
    const call = 'Faults.add';
    const parsed = parsePlan(isFault(faults) ? [faults] : faults, call);
    if (target.fabric === undefined) {
      const current = sourcePlan('api');
      const added = withIds(parsed.faults, current?.faults ?? [], () => `api-${++apiIds}`, call);
      setSourcePlan('api', parsed.seed ?? current?.seed ?? 1, [...(current?.faults ?? []), ...added]);
      return added.map((f) => f.id);
    }
    const dir = fabricDir(target.fabric);
    const added = withPlanLock(dir, call, () => {
      const plan = readPlanFile(dir, call);
      let nextId = plan.nextId;
      const added = withIds(parsed.faults, plan.faults, () => `f${nextId++}`, call);
      writePlanFile(dir, { generation: plan.generation + 1, seed: parsed.seed ?? plan.seed, nextId, faults: [...plan.faults, ...added] }, call);
      return added;
    });
    refresh(dir);
    return added.map((f) => f.id);
  },

  /** Removes faults (every one, or those named by `ids`; NOT_FOUND for an id not in the plan) and returns their ids. */
  clear(target: FaultTarget & { ids?: readonly string[] } = {}): string[] {
    const call = 'Faults.clear';
    const dir = target.fabric === undefined ? undefined : fabricDir(target.fabric);
    if (dir) {
      const ids = withPlanLock(dir, call, () => {
        const gone = clearIn(readPlanFile(dir, call), target.ids, call, (file, kept) => writePlanFile(dir, { ...file, generation: file.generation + 1, nextId: kept.length === 0 ? 1 : file.nextId, faults: kept }, call));
        // A later fault may get a removed one's id (an emptied plan numbers from f1 again): its count starts at 0.
        dropFromTally(dir, gone, call);
        return gone;
      });
      refresh(dir);
      return ids;
    }
    const plan = sourcePlan('api') ?? { seed: 1, faults: [] };
    // An emptied plan numbers its faults from 1 again: the same steps give the same ids, hence the same draws.
    return clearIn(plan, target.ids, call, (p, kept) => {
      if (kept.length === 0) apiIds = 0;
      setSourcePlan('api', p.seed, kept);
    });
  },

  /**
   * Without `fabric`: every fault in force in the calling thread (from any source) with this thread's
   * counts. With `fabric`: its plan, with the counts of every thread that ever injected one (live ones,
   * ended ones not swept yet, and the tally the sweeps kept of the others), and the faults processes
   * added for themselves.
   */
  list(target: FaultTarget = {}): FaultListing {
    if (target.fabric === undefined) {
      const faults = inForce().map((r) => ({ ...r.fault, source: r.source === 'api' || r.source === 'env' ? r.source : 'fabric', injections: r.injections }));
      return { where: 'thread', faults };
    }
    const dir = fabricDir(target.fabric);
    publishCounts();
    const plan = readPlanFile(dir, 'Faults.list');
    const stats = readStats(dir);
    const tally = readTally(dir);
    const sum = (id: string) => (tally[id] ?? 0) + stats.reduce((n, s) => n + s.faults.filter((f) => f.source === 'fabric' && f.id === id).reduce((m, f) => m + f.injections, 0), 0);
    const processes = stats.flatMap((s) => s.faults.filter((f) => f.source !== 'fabric').map((f) => ({ pid: s.pid, tid: s.tid, alive: s.alive !== false, ...f })));
    return { where: dir, seed: plan.seed, generation: plan.generation, faults: plan.faults.map((f) => ({ ...f, source: 'fabric', injections: sum(f.id) })), processes };
  },
};

function isFault(input: unknown): input is FaultSpec {
  return typeof input === 'object' && input !== null && 'kind' in input;
}

/** The fabric directory (created private if it does not exist yet, so a plan can precede its processes). */
function fabricDir(fabric: string | { readonly dir: string }): string {
  const dir = typeof fabric === 'string' ? fabric : fabric?.dir;
  if (typeof dir !== 'string' || dir.length === 0) throw new DocaError('INVALID_VALUE', 'Faults', `fabric ${JSON.stringify(fabric)} is neither a directory nor a Fabric`);
  ensureFabricDir(dir);
  return realpathSync(dir);
}

/** Removes `ids` (default: all) from `plan`, NOT_FOUND for one it lacks; `save` stores what is kept. */
function clearIn<P extends { faults: readonly Fault[] }>(plan: P, ids: readonly string[] | undefined, call: string, save: (plan: P, kept: Fault[]) => void): string[] {
  const gone = ids ?? plan.faults.map((f) => f.id);
  for (const id of gone) if (!plan.faults.some((f) => f.id === id)) throw new DocaError('NOT_FOUND', call, `no fault ${JSON.stringify(id)} in the plan (${plan.faults.map((f) => f.id).join(', ') || 'empty'})`);
  save(plan, plan.faults.filter((f) => !gone.includes(f.id)));
  return [...gone];
}

/** Gives every new fault an id, refusing one that the plan (or the same call) already has. */
function withIds(faults: readonly FaultSpec[], existing: readonly Fault[], next: () => string, call: string): Fault[] {
  const taken = new Set(existing.map((f) => f.id));
  return faults.map((f, i) => {
    let id = f.id;
    if (id !== undefined && taken.has(id)) throw new DocaError('INVALID_VALUE', call, `faults[${i}].id ${JSON.stringify(id)} is already in the plan`);
    while (id === undefined || taken.has(id)) id = next();
    taken.add(id);
    return { ...f, id };
  });
}
