/**
 * Fault injection (docs/faults.md): where the plan in force in a thread comes from, and the hooks the
 * library calls (fault-hooks.ts, re-exported here so that loading any hook loads this module too).
 *
 * Sources, all in force together: this process's own plan (`Faults.add()` without a fabric),
 * `$SOFTDPU_FAULTS` (a JSON plan or the path of one, read when the thread first joins a fabric), and the
 * plan file of every fabric the thread joined (`softdpu fault add`), whose stamp is looked at on the one
 * liveness cadence (fabric/liveness.ts) and re-read when it changed. On the same cadence the thread
 * publishes its injection counts in the fabric directory when they changed. A worker thread starts with
 * the sources of the thread that created it (worker environment data) and follows the same plan files.
 */
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { getEnvironmentData, isMainThread, setEnvironmentData } from 'node:worker_threads';
import { DocaError } from '../core/error.js';
import { sdkLogSource } from '../core/log.js';
import { planStamp, readPlanFile, writeStats } from './fault-files.js';
import { faultOnCadence, inForce, install, type SourcePlan, takeCountsChanged } from './fault-hooks.js';
import { type Fault, type FaultSpec, parsePlan } from './fault-plan.js';
import { onLivenessPass, selfThread } from './liveness.js';
import { faultStatsPath } from './names.js';

export {
  active,
  faultAtStart,
  faultAtSubmit,
  faultBlob,
  faultCaps,
  faultEvent,
  faultStalled,
  faultStalls,
  noteDevice,
  stalledNap,
} from './fault-hooks.js';

const log = sdkLogSource('faults');
const SHARED = 'softdpu.faults';

/** Local sources ('api', 'env') and fabric plans (keyed by directory). */
const plans = new Map<string, SourcePlan>();
/** Fabric directories followed, with the stamp of their plan file as last read. */
const followed = new Map<string, string | undefined>();
/** Directories where this thread's counts file exists. */
const published = new Set<string>();
let envRead = false;

/** Sets (or, with no faults, removes) a source's plan and puts everything in force. */
export function setSourcePlan(source: string, seed: number, faults: readonly Fault[]): void {
  if (faults.length > 0) plans.set(source, { source, seed, faults });
  else plans.delete(source);
  install([...plans.values()]);
  share();
  onLivenessPass(onPass);
}

/** A source's plan, if it has one. */
export function sourcePlan(source: string): SourcePlan | undefined {
  return plans.get(source);
}

/**
 * The thread joins the fabric in `dir` (Fabric.open): on the first join, `$SOFTDPU_FAULTS` comes into
 * force (INVALID_VALUE naming the bad field otherwise); the fabric's plan file is read now and then
 * followed on the cadence.
 */
export function followFabric(dir: string): void {
  if (!envRead) {
    const env = readEnvPlan();
    envRead = true;
    if (env) setSourcePlan('env', env.seed ?? 1, env.faults.map((f, i) => ({ ...f, id: f.id ?? `env-${i + 1}` })));
  }
  if (followed.has(dir)) return;
  followed.set(dir, undefined);
  refresh(dir);
  share();
  onLivenessPass(onPass);
}

/** Re-reads a followed fabric's plan file if it changed since the last look (now, not on the next pass). */
export function refresh(dir: string): void {
  if (!followed.has(dir)) return;
  const stamp = planStamp(dir);
  if (stamp === undefined && !existsSync(dir)) {
    // The fabric is gone (a test's directory, say): stop following it; joining it again follows it again.
    followed.delete(dir);
    published.delete(dir);
    if (plans.has(dir)) setSourcePlan(dir, 1, []);
    return;
  }
  if (followed.get(dir) === stamp) return;
  followed.set(dir, stamp);
  let faults: readonly Fault[] = [];
  let seed = 1;
  try {
    ({ faults, seed } = readPlanFile(dir, 'fault plan'));
  } catch (err) {
    log.err(`${(err as Error).message}; its faults are not in force`);
  }
  setSourcePlan(dir, seed, faults);
}

/** Publishes this thread's counts in every followed fabric (a listing calls it to be current). */
export function publishCounts(): void {
  const running = inForce();
  for (const dir of followed.keys()) {
    const mine = running.filter((r) => r.injections > 0 && (r.source === dir || r.source === 'api' || r.source === 'env'));
    const path = faultStatsPath(dir, selfThread.tid);
    try {
      if (mine.length > 0) {
        const faults = mine.map((r) => ({ id: r.fault.id, source: r.source === dir ? 'fabric' : r.source, kind: r.fault.kind, injections: r.injections }));
        writeStats(dir, path, { pid: process.pid, tid: selfThread.tid, faults });
        published.add(dir);
      } else if (published.delete(dir)) {
        unlinkSync(path);
      }
    } catch (err) {
      log.dbg(`cannot publish fault counts in ${dir}: ${(err as Error).message}`);
    }
  }
}

function onPass(): void {
  for (const dir of [...followed.keys()]) refresh(dir);
  faultOnCadence();
  if (takeCountsChanged()) publishCounts();
}

/** `$SOFTDPU_FAULTS`: a JSON plan, or the path of a file holding one. */
function readEnvPlan(): { seed: number | undefined; faults: FaultSpec[] } | undefined {
  const value = process.env.SOFTDPU_FAULTS?.trim();
  if (!value) return undefined;
  const call = 'softdpu fabric join';
  let text = value;
  if (!value.startsWith('{') && !value.startsWith('[')) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (err) {
      throw new DocaError('INVALID_VALUE', call, `$SOFTDPU_FAULTS names ${JSON.stringify(value)}, which is neither a JSON plan nor a readable file: ${(err as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DocaError('INVALID_VALUE', call, `$SOFTDPU_FAULTS is not JSON: ${(err as Error).message}`);
  }
  return parsePlan(json, call, '$SOFTDPU_FAULTS');
}

/** What a worker created from now on starts with. */
function share(): void {
  if (isMainThread) setEnvironmentData(SHARED, { plans: [...plans.values()].filter((p) => !followed.has(p.source)), dirs: [...followed.keys()] });
}

function adopt(): void {
  const data = getEnvironmentData(SHARED) as { plans: SourcePlan[]; dirs: string[] } | undefined;
  if (!data) return;
  envRead = true; // the creating thread read it
  for (const p of data.plans) plans.set(p.source, p);
  install([...plans.values()]);
  for (const dir of data.dirs) {
    followed.set(dir, undefined);
    refresh(dir);
  }
  onLivenessPass(onPass);
}

if (!isMainThread) adopt();
