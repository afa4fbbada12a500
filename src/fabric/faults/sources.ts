/**
 * Where the fault plan in force in a thread comes from (docs/faults.md); hooks.ts runs what this gives it.
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
import { DocaError } from '../../core/error.js';
import { sdkLogSource } from '../../core/log.js';
import { planStamp, readPlanFile, writeStats } from './files.js';
import { faultOnCadence, inForce, install, onBeforeCrash, onRecordsWanted, type RunningFault, type SourcePlan, takeCountsChanged } from './hooks.js';
import { type Fault, type FaultSpec, parsePlan } from './plan.js';
import { onLivenessPass, selfThread } from '../liveness.js';
import { faultStatsPath } from '../names.js';
import { Counter } from '../stats-kinds.js';
import type { StatRecord } from '../stats.js';


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
  const before = inForce();
  install([...plans.values()]);
  const now = inForce();
  for (const r of before) if (!now.includes(r)) for (const record of r.records.values()) record.release();
  syncRecords();
  share();
  onLivenessPass(onPass);
}

/**
 * Every fault in force that can fire in this thread gets a record (fabric/stats.ts FAULT) in each followed
 * fabric it belongs to (its own fabric's, or all for API and $SOFTDPU_FAULTS faults), once the thread
 * publishes there anyway: a thread that publishes nothing (a DPA execution unit, a command) makes its
 * records when a fault first fires in it.
 */
function syncRecords(): void {
  for (const r of inForce()) {
    for (const [dir, record] of r.records) {
      if (followed.has(dir)) continue;
      record.release();
      r.records.delete(dir);
    }
    const m = r.fault.match;
    if ((m?.pid !== undefined && m.pid !== process.pid) || (m?.thread !== undefined && (m.thread === 'main') !== isMainThread)) continue;
    for (const dir of recordDirs(r)) {
      if (r.records.has(dir) || !stats?.has(dir)) continue;
      const f = r.fault;
      const what = [f.match?.ctx, f.match?.task, f.match?.event, f.match?.blob].filter((x) => x !== undefined).join(' ');
      const record = stats.record(dir, `${f.id} ${f.kind}${what ? ` ${what}` : ''} (${r.source === dir ? 'fabric' : r.source})`);
      record.c[Counter.FAULT.INJECTED] = r.injections;
      r.records.set(dir, record);
    }
  }
}

/** The followed fabrics where fault `r` is listed. */
function recordDirs(r: RunningFault): string[] {
  return [...followed.keys()].filter((dir) => r.source === dir || r.source === 'api' || r.source === 'env');
}

/**
 * What this file uses of fabric/stats.ts, which hands it over when it loads: stats.ts maps memory through
 * the native addon, and this file must load without it (the CLI's `doctor` reports a missing addon).
 */
export interface FaultStats {
  /** Whether this thread already publishes on the fabric in `dir`. */
  has(dir: string): boolean;
  /** A FAULT record named `name` on the fabric in `dir`. */
  record(dir: string, name: string): StatRecord;
  /** Starts publishing on the fabric in `dir` (which calls the function provideStats returned). */
  start(dir: string): void;
}
let stats: FaultStats | undefined;

/**
 * @internal stats.ts: how to make fault records. Returns what stats.ts calls when this thread starts
 * publishing on a fabric: its faults are listed there too. A thread whose first injection comes before
 * anything else it publishes starts publishing then.
 */
export function provideStats(s: FaultStats): () => void {
  stats = s;
  onRecordsWanted((r) => {
    for (const dir of recordDirs(r)) s.start(dir);
  });
  return syncRecords;
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
  syncRecords();
  share();
  onLivenessPass(onPass);
  publishAtEnd();
}

let endHooked = false;

/**
 * Counts published on the cadence would miss the injections of a thread's last 200 ms: the thread
 * publishes once more as it exits, and before a `crash` fault ends it.
 */
function publishAtEnd(): void {
  if (endHooked) return;
  endHooked = true;
  const last = () => {
    if (takeCountsChanged()) publishCounts();
  };
  process.once('exit', last);
  onBeforeCrash(last);
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
    else syncRecords();
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
  if (data.dirs.length > 0) publishAtEnd();
}

if (!isMainThread) adopt();
