/**
 * The running side of fault injection (docs/faults.md): the faults in force in this thread and the
 * hooks the library calls where hardware fails. Every hook sits behind the one module-level flag
 * `active`, false while no plan says anything, so a program without a plan pays one boolean check per
 * hook and nothing else.
 *
 * Each fault draws from its own seeded generator and keeps, per target (the context for `again`,
 * `driver` and events; the engine for `stall`; the thread for `crash` and blobs; the device for
 * `caps`), how many matching calls it saw and whether it fired: the same seed and the same calls give
 * the same injections. Where the plan comes from is faults.ts; this module runs what it is given.
 */
import { isMainThread } from 'node:worker_threads';
import { DocaError } from '../../core/error.js';
import { sdkLogSource } from '../../core/log.js';
import { type Fault, type FaultCaps, type FaultKind, type FaultMatch, faultSeed, mulberry32 } from './plan.js';
import { LIVENESS_INTERVAL_MS, selfThread } from '../liveness.js';
import { Counter, StatEvent } from '../stats-kinds.js';
import type { StatRecord } from '../stats.js';

const log = sdkLogSource('faults');

/** True while any fault is in force in this thread: every hook is called only behind this check. */
export let active = false;

/** Set whenever the counts changed since they were last taken for publishing. */
let countsChanged = false;

interface TargetState {
  calls: number;
  injections: number;
  fired: boolean;
}

/** A fault in force, with its generator and what it did so far. */
export interface RunningFault {
  readonly fault: Fault;
  /** Where it came from: 'api', 'env', or the fabric directory whose plan holds it. */
  readonly source: string;
  readonly key: string;
  readonly rng: () => number;
  /** When it came into force here (performance.now()), for `afterMs`. */
  readonly since: number;
  readonly targets: WeakMap<object, TargetState>;
  readonly devices: Set<string>;
  injections: number;
  /** Its records for observers (fabric/stats.ts FAULT), by fabric directory; faults.ts keeps them. */
  readonly records: Map<string, StatRecord>;
  /** Whether its first injection asked for records already (a thread that published nothing before). */
  asked: boolean;
}

/** A source's faults, as faults.ts hands them over. */
export interface SourcePlan {
  readonly source: string;
  readonly seed: number;
  readonly faults: readonly Fault[];
}

let running: readonly RunningFault[] = [];
const NONE: readonly RunningFault[] = [];
/** The faults in force by kind. */
let byKind = new Map<FaultKind, readonly RunningFault[]>();
/** The stall faults: progress() is called far more often than anything else, so it looks at this first. */
let stalls: readonly RunningFault[] = NONE;
/**
 * The context names that the submit hook's faults (crash, again) and the stall faults select, or
 * undefined when one of them selects no context: a call on a context no fault names is one set lookup.
 */
let submitCtxs: ReadonlySet<string> | undefined;
let stallCtxs: ReadonlySet<string> | undefined;
/** The thread, as the target of `crash` and blob faults. */
const THREAD = {};
const opened: { pci: string; side: string }[] = [];

/**
 * @internal Puts `plans` in force. A fault that was already in force (same source, same text, same
 * seed) keeps its generator, counts and stickiness; the others start afresh.
 */
export function install(plans: readonly SourcePlan[]): void {
  const old = new Map(running.map((r) => [r.key, r]));
  const next: RunningFault[] = [];
  for (const plan of plans) {
    for (const fault of plan.faults) {
      const key = `${plan.source}\0${plan.seed}\0${JSON.stringify(fault)}`;
      const seed = faultSeed(fault, plan.seed);
      next.push(old.get(key) ?? { fault, source: plan.source, key, rng: mulberry32(seed), since: performance.now(), targets: new WeakMap(), devices: new Set(), injections: 0, records: new Map(), asked: false });
    }
  }
  if (running.some((r) => r.injections > 0 && !next.includes(r))) countsChanged = true;
  running = next;
  byKind = new Map();
  for (const r of next) byKind.set(r.fault.kind, [...(byKind.get(r.fault.kind) ?? []), r]);
  stalls = byKind.get('stall') ?? NONE;
  submitCtxs = ctxNames([...(byKind.get('crash') ?? NONE), ...(byKind.get('again') ?? NONE)]);
  stallCtxs = ctxNames(stalls);
  active = next.length > 0;
}

/** @internal the faults in force, with their counts. */
export function inForce(): readonly RunningFault[] {
  return running;
}

/** @internal true once per change of the counts: time to publish them again. */
export function takeCountsChanged(): boolean {
  const changed = countsChanged;
  countsChanged = false;
  return changed;
}

/** @internal a device this thread opened: what `side` and `device` selectors look at. */
export function noteDevice(pci: string, side: string): void {
  if (!opened.some((d) => d.pci === pci)) opened.push({ pci, side });
}

// ---- hooks ----------------------------------------------------------------------------------------

/**
 * `doca_task_submit` (core/ctx.ts), before the task is touched: a `crash`, or an injected AGAIN, thrown
 * with the task unchanged and still the caller's, exactly like a real AGAIN.
 */
export function faultAtSubmit(ctx: string, task: string, target: object): void {
  if (submitCtxs !== undefined && !submitCtxs.has(ctx)) return;
  const point = { ctx, task };
  for (const r of byKind.get('crash') ?? NONE) if (crashes(r, point)) crash(r, `at a ${task} submit of ${ctx}`);
  for (const r of byKind.get('again') ?? NONE) {
    if (!matches(r.fault.match, point) || !fires(r, target)) continue;
    warn(r, `AGAIN at a ${task} submit of ${ctx}`);
    throw new DocaError('AGAIN', 'doca_task_submit', `fault ${r.fault.id} injected AGAIN on a ${task} task of ${ctx}; the task is unchanged and still yours`);
  }
}

/** `doca_ctx_start` (core/ctx.ts), before the context starts anything: DRIVER, as when resources run out. */
export function faultAtStart(ctx: string, target: object): void {
  for (const r of byKind.get('driver') ?? NONE) {
    if (!matches(r.fault.match, { ctx }) || !fires(r, target)) continue;
    warn(r, `DRIVER at the start of ${ctx}`);
    throw new DocaError('DRIVER', 'doca_ctx_start', `fault ${r.fault.id} injected a driver failure (resources exhausted) starting ${ctx}`);
  }
}

/**
 * An event about to be queued for `progress()`: `deliver` runs now, later (`delay-event`) or never
 * (`lose-event`). Called by comch for `consumer_new`, `consumer_expired`, `connection_established` and
 * `connection_disconnected`; by the DPA (dpa/cq.ts) with `'dpa_activation'` for each activation of a DPA
 * thread by a completion context, `ctx` `doca_dpa` and `target` the DPA. `later` runs a delayed event
 * (default: an unreferenced timer; an execution unit, whose loop never yields to timers, passes its own).
 */
export function faultEvent(ctx: string, event: string, target: object, deliver: () => void, later: (deliver: () => void, ms: number) => void = defaultLater): void {
  const point = { ctx, event };
  for (const r of byKind.get('lose-event') ?? NONE) {
    if (!matches(r.fault.match, point) || !fires(r, target)) continue;
    warn(r, `lost a ${event} event of ${ctx}`);
    return;
  }
  for (const r of byKind.get('delay-event') ?? NONE) {
    if (!matches(r.fault.match, point) || !fires(r, target)) continue;
    warn(r, `delayed a ${event} event of ${ctx} by ${r.fault.delayMs} ms`);
    later(deliver, r.fault.delayMs!);
    return;
  }
  deliver();
}

/** A delayed event runs from an unreferenced timer (a thread whose event loop turns). */
function defaultLater(deliver: () => void, ms: number): void {
  setTimeout(deliver, ms).unref();
}

const BLOB_NAMES: Record<number, string> = { 1: 'mmap_pci', 2: 'sync_event_pci', 3: 'sync_event_net' };

/**
 * A finished export blob on its way out (core/blob.ts): a byte flipped after the checksum was taken,
 * or its tail cut off, so the importer refuses it as DOCA refuses a damaged blob.
 */
export function faultBlob(blob: Uint8Array): Uint8Array {
  const point = { blob: BLOB_NAMES[blob[6]! | (blob[7]! << 8)] ?? 'unknown' };
  for (const r of byKind.get('corrupt-blob') ?? NONE) {
    if (!matches(r.fault.match, point) || !fires(r, THREAD)) continue;
    const at = 16 + Math.floor(r.rng() * (blob.length - 16));
    blob[at] ^= 0xff;
    warn(r, `corrupted byte ${at} of a ${point.blob} blob`);
  }
  for (const r of byKind.get('truncate-blob') ?? NONE) {
    if (!matches(r.fault.match, point) || !fires(r, THREAD)) continue;
    const keep = Math.floor(r.rng() * blob.length);
    warn(r, `truncated a ${blob.length}-byte ${point.blob} blob to ${keep} bytes`);
    blob = blob.slice(0, keep);
  }
  return blob;
}

/** A device's capability report (core/caps.ts), with every matching `caps` fault's values as upper bounds. */
export function faultCaps<T extends object>(pci: string, side: string, report: T): T {
  let out = report as unknown as Record<string, Record<string, unknown>>;
  for (const r of byKind.get('caps') ?? NONE) {
    if (!matches(r.fault.match, { device: { pci, side } })) continue;
    if (!r.devices.has(pci)) {
      r.devices.add(pci);
      r.injections++;
      countsChanged = true;
      published(r);
      warn(r, `capabilities of ${pci} forced to ${JSON.stringify(r.fault.caps)}`);
    }
    out = overlay(out, r.fault.caps!);
  }
  return out as unknown as T;
}

/**
 * `doca_pe_progress` (core/pe.ts): true when the engine, one of whose contexts is `ctxs`, stopped
 * progressing; the call then does nothing. Counted once per engine.
 */
export function faultStalls(engine: object, ctxs: readonly { readonly name: string }[]): boolean {
  if (stalls.length === 0 || (stallCtxs !== undefined && !namesAny(ctxs, stallCtxs))) return false;
  let stalled = false;
  for (const r of stalls) {
    const already = r.targets.get(engine)?.fired;
    if (!matches(r.fault.match, { ctxs }) || !fires(r, engine)) continue;
    if (!already) warn(r, `the progress engine of ${ctxs.map((c) => c.name).join(', ')} stops progressing`);
    stalled = true;
  }
  return stalled;
}

/** True once a sticky `stall` fired for `engine`: its driver (`pe.run()`) then sleeps instead of spinning. */
export function faultStalled(engine: object): boolean {
  for (const r of stalls) if (r.fault.count === undefined && r.targets.get(engine)?.fired) return true;
  return false;
}

/** A stalled driver's sleep: one liveness interval (the plan may be cleared meanwhile), or until `signal`. */
export function stalledNap(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, LIVENESS_INTERVAL_MS);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** @internal the liveness cadence: a `crash` that names no context or task fires here once due. */
export function faultOnCadence(): void {
  for (const r of byKind.get('crash') ?? NONE) if (crashes(r, {})) crash(r, 'on the liveness cadence');
}

// ---- internals ------------------------------------------------------------------------------------

interface Point {
  ctx?: string;
  ctxs?: readonly { readonly name: string }[];
  task?: string;
  event?: string;
  blob?: string;
  device?: { pci: string; side: string };
}

/** The context names `faults` select, or undefined if one selects none (it may match any context). */
function ctxNames(faults: readonly RunningFault[]): ReadonlySet<string> | undefined {
  const names = new Set<string>();
  for (const r of faults) {
    if (r.fault.match?.ctx === undefined) return undefined;
    names.add(r.fault.match.ctx);
  }
  return names;
}

function namesAny(ctxs: readonly { readonly name: string }[], names: ReadonlySet<string>): boolean {
  for (let i = 0; i < ctxs.length; i++) if (names.has(ctxs[i]!.name)) return true;
  return false;
}

function matches(m: FaultMatch | undefined, p: Point): boolean {
  if (!m) return true;
  if (m.pid !== undefined && m.pid !== process.pid) return false;
  if (m.thread !== undefined && (m.thread === 'main') !== isMainThread) return false;
  if (m.ctx !== undefined && (p.ctxs ? !p.ctxs.some((c) => c.name === m.ctx) : p.ctx !== m.ctx)) return false;
  if (m.task !== undefined && m.task !== p.task) return false;
  if (m.event !== undefined && m.event !== p.event && !(m.event === 'connection_status' && p.event?.startsWith('connection_'))) return false;
  if (m.blob !== undefined && m.blob !== p.blob) return false;
  if (m.side === undefined && m.device === undefined) return true;
  return (p.device ? [p.device] : opened).some((d) => (m.side === undefined || d.side === m.side) && (m.device === undefined || d.pci === m.device));
}

/** Decides one matching call on `target`: the trigger rules of docs/faults.md. */
function fires(r: RunningFault, target: object): boolean {
  let st = r.targets.get(target);
  if (!st) r.targets.set(target, (st = { calls: 0, injections: 0, fired: false }));
  const f = r.fault;
  st.calls++;
  if (f.count === undefined && st.fired) {
    // Sticky: a stalled engine is one injection, however often it is polled.
    if (f.kind !== 'stall') inject(r, st);
    return true;
  }
  if (f.count !== undefined && st.injections >= f.count) return false;
  if (st.calls <= (f.after ?? 0)) return false;
  if (f.afterMs !== undefined && performance.now() - r.since < f.afterMs) return false;
  if (f.probability !== undefined && f.probability < 1 && !(r.rng() < f.probability)) return false;
  st.fired = true;
  inject(r, st);
  return true;
}

function inject(r: RunningFault, st: TargetState): void {
  st.injections++;
  r.injections++;
  countsChanged = true;
  published(r);
}

/** @internal faults.ts: publishes this thread's counts now, before a crash ends it without an exit hook. */
let beforeCrash: (() => void) | undefined;
export function onBeforeCrash(fn: () => void): void {
  beforeCrash = fn;
}

/** @internal faults.ts: makes a fault's records in a thread that published nothing yet (its first injection). */
let recordsWanted: ((r: RunningFault) => void) | undefined;
export function onRecordsWanted(fn: (r: RunningFault) => void): void {
  recordsWanted = fn;
}

/** The injection count, on the fault's records (plain stores); records are asked for once if it has none. */
function published(r: RunningFault): void {
  if (r.records.size === 0 && !r.asked) {
    r.asked = true;
    recordsWanted?.(r);
  }
  for (const s of r.records.values()) s.c[Counter.FAULT.INJECTED] = r.injections;
}

/**
 * The first ten injections of a fault and every 1000th after: a probabilistic AGAIN on a hot path must
 * not flood. The same ones go to the thread's event ring for observers (`softdpu top`, `softdpu view`).
 */
function warn(r: RunningFault, what: string): void {
  if (r.injections <= 10 || r.injections % 1000 === 0) {
    log.warn(`fault ${r.fault.id} (${r.fault.kind}): ${what}${r.injections > 1 ? ` (${r.injections} injections so far)` : ''}`);
    for (const s of r.records.values()) s.event(StatEvent.FAULT, `${r.fault.id}: ${what}`);
  }
}

/** A `crash` decision: a thread crash fires only in a worker (the main thread's end is the process's). */
function crashes(r: RunningFault, point: Point): boolean {
  return (r.fault.scope !== 'thread' || !isMainThread) && matches(r.fault.match, point) && fires(r, THREAD);
}

function crash(r: RunningFault, where: string): never {
  beforeCrash?.();
  if (r.fault.scope === 'thread') {
    log.warn(`fault ${r.fault.id} (crash): worker thread ${selfThread.tid} of process ${process.pid} ends without a word ${where}`);
    process.exit(1); // in a worker, ends this thread only, at once
  }
  log.warn(`fault ${r.fault.id} (crash): process ${process.pid} kills itself with SIGKILL ${where}`);
  process.kill(process.pid, 'SIGKILL');
  // The signal lands before this wait ends; nothing more of the program runs meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
  throw new DocaError('UNEXPECTED', 'fault injection', `process ${process.pid} survived its own SIGKILL`);
}

function overlay(report: Record<string, Record<string, unknown>>, caps: FaultCaps): Record<string, Record<string, unknown>> {
  const out = { ...report };
  for (const [section, fields] of Object.entries(caps)) {
    if (!out[section]) continue;
    const merged = { ...out[section] };
    for (const [field, value] of Object.entries(fields)) if (typeof merged[field] === 'number') merged[field] = Math.min(merged[field] as number, value);
    out[section] = merged;
  }
  return out;
}
