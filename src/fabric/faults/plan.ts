/**
 * The fault plan's model (docs/faults.md): what a plan may say, checked field by field, and the seeded
 * generator every fault draws its decisions from. Nothing here has state; `faults.ts` runs the plan.
 *
 * A plan is `{ seed?, faults: [...] }` (or a bare array of faults). A fault is a kind, a `match` of
 * selectors saying where it applies, and trigger parameters: `after` matching calls that pass first,
 * `afterMs` since the fault came into force, a `probability` per call, and `count`, the most it injects
 * per target. Without `count` a fault is sticky: once it fired for a target it fires on every later
 * matching call there, as a broken part stays broken; with `count` each call draws afresh.
 */
import { DocaError } from '../../core/error.js';
import { PciAddress } from '../pci.js';
import { DEFAULT_CAPS } from '../topology.js';

/** Every kind of fault a plan can inject (docs/faults.md describes each). */
export const FAULT_KINDS = ['crash', 'stall', 'again', 'lose-event', 'delay-event', 'corrupt-blob', 'truncate-blob', 'caps', 'driver'] as const;
/** A fault's kind, one of {@link FAULT_KINDS}. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Event types a plan can lose or delay; `connection_status` names both connection events. */
export const FAULT_EVENTS = ['consumer_new', 'consumer_expired', 'connection_status', 'connection_established', 'connection_disconnected', 'dpa_activation'] as const;
/** Blob kinds a plan can corrupt or truncate (core/blob.ts BlobKind, by name). */
export const FAULT_BLOBS = ['mmap_pci', 'sync_event_pci', 'sync_event_net'] as const;

/** Where a fault applies; every selector given must hold. */
export interface FaultMatch {
  /** The process id. */
  pid?: number;
  /** The side of a device the thread opened (for `caps`: of the device asked about). */
  side?: 'dpu' | 'host';
  /** The PCI address of a device the thread opened (for `caps`: the device asked about). */
  device?: string;
  /** The main thread or a worker thread. */
  thread?: 'main' | 'worker';
  /** A context name, e.g. `doca_comch_producer`; for `stall`, a context connected to the engine. */
  ctx?: string;
  /** A task type, e.g. `send`, `post_recv`, `notify_add`. */
  task?: string;
  /** An event type (FAULT_EVENTS). */
  event?: (typeof FAULT_EVENTS)[number];
  /** A blob kind (FAULT_BLOBS). */
  blob?: (typeof FAULT_BLOBS)[number];
}

/** Capabilities forced small: any numeric capability of the topology, by section. */
export type FaultCaps = { readonly [section: string]: { readonly [field: string]: number } };

/** One fault as a plan writes it. */
export interface FaultSpec {
  /** Given by the plan, or assigned when added. */
  id?: string;
  kind: FaultKind;
  match?: FaultMatch;
  /** Matching calls per target that pass before the fault may fire (default 0). */
  after?: number;
  /** Milliseconds after the fault came into force in a thread before it may fire (default 0). */
  afterMs?: number;
  /** Chance that a matching call fires it (default 1). */
  probability?: number;
  /** At most this many injections per target, each call drawing afresh; absent: sticky. */
  count?: number;
  /** `delay-event`: how long the event is held back. */
  delayMs?: number;
  /** `crash`: the whole process (SIGKILL, the default) or the worker thread that hit it. */
  scope?: 'process' | 'thread';
  /** `caps`: the values forced (smaller than the topology's; a larger one changes nothing). */
  caps?: FaultCaps;
  /** This fault's own seed (default: derived from the plan's seed and the fault's id). */
  seed?: number;
}

/** A fault after validation: it has an id. */
export type Fault = FaultSpec & { readonly id: string };

/** A fault plan, as a plan file, `$SOFTDPU_FAULTS` or `softdpu fault add` give it (docs/faults.md). */
export interface FaultPlan {
  /** The seed the faults' generators derive from when they have none of their own (default 1). */
  seed?: number;
  /** The faults, each with its kind, where it applies and when it fires. */
  faults: FaultSpec[];
}

const COMMON = ['id', 'kind', 'match', 'seed'];
const TRIGGER = ['after', 'afterMs', 'probability', 'count'];
const WHO = ['pid', 'side', 'device', 'thread'];
/** The fields and selectors each kind understands: anything else is refused, naming it. */
const KINDS: Record<FaultKind, { fields: string[]; match: string[] }> = {
  crash: { fields: [...COMMON, ...TRIGGER, 'scope'], match: [...WHO, 'ctx', 'task'] },
  stall: { fields: [...COMMON, ...TRIGGER], match: [...WHO, 'ctx'] },
  again: { fields: [...COMMON, ...TRIGGER], match: [...WHO, 'ctx', 'task'] },
  'lose-event': { fields: [...COMMON, ...TRIGGER], match: [...WHO, 'ctx', 'event'] },
  'delay-event': { fields: [...COMMON, ...TRIGGER, 'delayMs'], match: [...WHO, 'ctx', 'event'] },
  'corrupt-blob': { fields: [...COMMON, ...TRIGGER], match: [...WHO, 'blob'] },
  'truncate-blob': { fields: [...COMMON, ...TRIGGER], match: [...WHO, 'blob'] },
  caps: { fields: [...COMMON, 'caps'], match: WHO },
  driver: { fields: [...COMMON, ...TRIGGER], match: [...WHO, 'ctx'] },
};
const ID = /^[A-Za-z0-9_.-]{1,32}$/;
const MAX_FAULTS = 256;

type Json = Record<string, unknown>;

/** Validates a plan (object or bare array); `where` names its origin in messages (`$SOFTDPU_FAULTS`, a file). */
export function parsePlan(input: unknown, call: string, where?: string): { seed: number | undefined; faults: FaultSpec[] } {
  const fail = (path: string, problem: string): never => {
    throw new DocaError('INVALID_VALUE', call, `${where ? `${where}: ` : ''}${path} ${problem}`);
  };
  const plan: Json = Array.isArray(input) ? { faults: input } : isObject(input) ? input : fail('the plan', `is ${describe(input)}, not an object or an array of faults`);
  for (const key of Object.keys(plan)) if (key !== 'seed' && key !== 'faults') fail(key, 'is not a plan field (seed, faults)');
  const seed = plan.seed === undefined ? undefined : uint32(plan.seed, 'seed', fail);
  if (!Array.isArray(plan.faults)) return fail('faults', `is ${describe(plan.faults)}, not an array`);
  if (plan.faults.length > MAX_FAULTS) fail('faults', `has ${plan.faults.length} entries, more than ${MAX_FAULTS}`);
  const faults = plan.faults.map((f, i) => parseFault(f, `faults[${i}]`, fail));
  faults.forEach((f, i) => f.id !== undefined && faults.findIndex((g) => g.id === f.id) < i && fail(`faults[${i}].id`, `${JSON.stringify(f.id)} is used twice`));
  return { seed, faults };
}

function parseFault(raw: unknown, path: string, fail: (path: string, problem: string) => never): FaultSpec {
  if (!isObject(raw)) return fail(path, `is ${describe(raw)}, not an object`);
  const kind = raw.kind as FaultKind;
  if (!FAULT_KINDS.includes(kind)) fail(`${path}.kind`, `is ${describe(raw.kind)}, not one of ${FAULT_KINDS.join(', ')}`);
  const rules = KINDS[kind];
  for (const key of Object.keys(raw)) if (!rules.fields.includes(key)) fail(`${path}.${key}`, `does not apply to kind ${kind} (fields: ${rules.fields.join(', ')})`);
  const out: FaultSpec = { kind };
  if (raw.id !== undefined) out.id = typeof raw.id === 'string' && ID.test(raw.id) ? raw.id : fail(`${path}.id`, `is ${describe(raw.id)}, not [A-Za-z0-9_.-]{1,32}`);
  if (raw.match !== undefined) out.match = parseMatch(raw.match, `${path}.match`, rules.match, kind, fail);
  if (raw.seed !== undefined) out.seed = uint32(raw.seed, `${path}.seed`, fail);
  if (raw.after !== undefined) out.after = integer(raw.after, `${path}.after`, 0, fail);
  if (raw.afterMs !== undefined) out.afterMs = integer(raw.afterMs, `${path}.afterMs`, 0, fail);
  if (raw.count !== undefined) out.count = integer(raw.count, `${path}.count`, 1, fail);
  if (raw.probability !== undefined) {
    const p = raw.probability;
    out.probability = typeof p === 'number' && p >= 0 && p <= 1 ? p : fail(`${path}.probability`, `is ${describe(p)}, not a number in [0, 1]`);
  }
  if (kind === 'delay-event') out.delayMs = integer(raw.delayMs, `${path}.delayMs`, 1, fail);
  if (raw.scope !== undefined) out.scope = raw.scope === 'process' || raw.scope === 'thread' ? raw.scope : fail(`${path}.scope`, `is ${describe(raw.scope)}, not "process" or "thread"`);
  if (kind === 'caps') out.caps = parseCaps(raw.caps, `${path}.caps`, fail);
  return out;
}

function parseMatch(raw: unknown, path: string, allowed: string[], kind: FaultKind, fail: (path: string, problem: string) => never): FaultMatch {
  if (!isObject(raw)) return fail(path, `is ${describe(raw)}, not an object`);
  const m: FaultMatch = {};
  for (const [key, v] of Object.entries(raw)) {
    const at = `${path}.${key}`;
    if (!allowed.includes(key)) fail(at, `does not apply to kind ${kind} (selectors: ${allowed.join(', ')})`);
    const text = () => (typeof v === 'string' && v.length > 0 && v.length <= 64 ? v : fail(at, `is ${describe(v)}, not a string of 1 to 64 characters`));
    if (key === 'pid') m.pid = integer(v, at, 1, fail);
    else if (key === 'side') m.side = v === 'dpu' || v === 'host' ? v : fail(at, `is ${describe(v)}, not "dpu" or "host"`);
    else if (key === 'thread') m.thread = v === 'main' || v === 'worker' ? v : fail(at, `is ${describe(v)}, not "main" or "worker"`);
    else if (key === 'device') m.device = PciAddress.tryParse(text())?.toString() ?? fail(at, `is ${describe(v)}, not a PCI address (BB:DD.F or DDDD:BB:DD.F)`);
    else if (key === 'event') m.event = oneOf(v, FAULT_EVENTS, at, fail);
    else if (key === 'blob') m.blob = oneOf(v, FAULT_BLOBS, at, fail);
    else if (key === 'ctx') m.ctx = text();
    else m.task = text();
  }
  return m;
}

function parseCaps(raw: unknown, path: string, fail: (path: string, problem: string) => never): FaultCaps {
  if (!isObject(raw) || Object.keys(raw).length === 0) return fail(path, `is ${describe(raw)}, not an object of capability sections`);
  const defaults = DEFAULT_CAPS as unknown as Record<string, Record<string, unknown>>;
  const out: Record<string, Record<string, number>> = {};
  for (const [section, fields] of Object.entries(raw)) {
    const known = defaults[section];
    if (!known) fail(`${path}.${section}`, `is not a capability section (${Object.keys(defaults).join(', ')})`);
    if (!isObject(fields)) fail(`${path}.${section}`, `is ${describe(fields)}, not an object`);
    out[section] = {};
    for (const [field, value] of Object.entries(fields as Json)) {
      if (typeof known![field] !== 'number') {
        fail(`${path}.${section}.${field}`, `is not a numeric capability of ${section} (${Object.keys(known!).filter((k) => typeof known![k] === 'number').join(', ')})`);
      }
      out[section]![field] = integer(value, `${path}.${section}.${field}`, 0, fail);
    }
  }
  return out;
}

function oneOf<T extends string>(v: unknown, values: readonly T[], at: string, fail: (path: string, problem: string) => never): T {
  return values.includes(v as T) ? (v as T) : fail(at, `is ${describe(v)}, not one of ${values.join(', ')}`);
}

function integer(v: unknown, at: string, min: number, fail: (path: string, problem: string) => never): number {
  return Number.isSafeInteger(v) && (v as number) >= min ? (v as number) : fail(at, `is ${describe(v)}, not an integer >= ${min}`);
}

function uint32(v: unknown, at: string, fail: (path: string, problem: string) => never): number {
  return Number.isInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 32 ? (v as number) : fail(at, `is ${describe(v)}, not an integer in [0, 2^32)`);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  const text = JSON.stringify(v);
  return text === undefined ? typeof v : text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** mulberry32: a small, fast generator whose sequence depends only on its seed. Returns [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A fault's seed: its own, else the plan's mixed with its id (FNV-1a), so faults draw independently. */
export function faultSeed(fault: Fault, planSeed: number): number {
  if (fault.seed !== undefined) return fault.seed;
  let h = (0x811c9dc5 ^ planSeed) >>> 0;
  for (let i = 0; i < fault.id.length; i++) h = Math.imul(h ^ fault.id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
