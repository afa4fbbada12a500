/**
 * The execution unit a piece of DPA code runs on, as the device API sees it: set once by the EU's main
 * loop (dpa/eu-worker.ts) before any DPA code runs, and the work it runs now (a DPA thread, a kernel
 * instance or an RPC call). Outside an EU there is none, and every device call says so.
 *
 * `thread_reschedule` and `thread_finish` end the run, as on the DPA, where they do not return: they
 * throw an `Unwind` value (not an Error) that the EU catches; so do device calls once the DPA stops or
 * enters its fatal state, so that a running function cannot outlive its DPA. Do not catch them.
 */
import { DocaError } from '../../core/error.js';
import type { DpaMapReader } from '../../core/dpa-maps.js';
import type { Segment } from '../../fabric/segment.js';
import type { DpaEvents } from '../events.js';
import { DpaState, H, OBJ, WorkKind } from '../layout.js';
import { ThreadState } from '../objects.js';
import type { DpaTables } from '../tables.js';

/** Thrown to end a run early; the EU catches it. */
export class Unwind {
  constructor(readonly why: 'reschedule' | 'finish' | 'stopped') {}
}
export const RESCHEDULE = new Unwind('reschedule');
export const FINISH = new Unwind('finish');
export const STOPPED = new Unwind('stopped');

/** What runs now on this EU. */
export interface Work {
  kind: (typeof WorkKind)[keyof typeof WorkKind];
  /** Thread object index, launch slot or RPC slot. */
  index: number;
  rank: number;
  threads: number;
  /** A DPA thread's local storage (`doca_dpa_thread_set_local_storage`), 0 otherwise. */
  local: bigint;
  finished: boolean;
}

/** Everything device calls need; one per EU. */
export interface Eu {
  readonly dpa: DpaTables;
  readonly events: DpaEvents;
  readonly maps: DpaMapReader;
  readonly index: number;
  readonly heap: Segment;
  /** The DPA pointer of byte 0 of the heap segment. */
  readonly heapBase: bigint;
  /** Sends a device log line to the owner's log (`doca_dpa_dev_log`). */
  log(level: number, text: string): void;
  /** Per-EU state of the comch device API (dpa/dev/comch-msgq.ts). */
  comch?: unknown;
  work: Work | undefined;
  /** Runs this EU started (a thread's activation, a kernel instance, an RPC): what tells a run's first call. */
  runs: number;
}

let eu: Eu | undefined;

/** @internal the EU's main loop installs itself. */
export function installEu(unit: Eu): void {
  eu = unit;
}

/**
 * The EU running this code, checked to be running: NOT_PERMITTED outside DPA code. Ends the run (an
 * Unwind) once the DPA stops, or once the DPA thread running it is being stopped (`DpaThread.stop`), so
 * that a thread polling in a loop of device calls stops too.
 */
export function current(call: string): Eu {
  if (!eu) throw new DocaError('NOT_PERMITTED', call, 'the DPA device API is only for DPA code (functions of a DPA application that a started Dpa runs)');
  // Plain reads (ObjectFields.peek): a stop seen a call later is a stop all the same.
  const i32 = eu.dpa.i32;
  if (i32[H.STATE >> 2] !== DpaState.RUNNING) throw STOPPED;
  const w = eu.work;
  if (w?.kind === WorkKind.THREAD && eu.dpa.peek(w.index, OBJ.STATE) === ThreadState.STOPPING) throw STOPPED;
  return eu;
}

/** The work running now: BAD_STATE when called from outside a run (a module's top level, say). */
export function work(call: string): Work {
  const w = current(call).work;
  if (!w) throw new DocaError('BAD_STATE', call, 'no DPA thread, kernel or RPC is running on this execution unit');
  return w;
}

/** A u32 argument given as a number or a bigint; INVALID_VALUE otherwise. */
export function u32(call: string, name: string, value: unknown): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new DocaError('INVALID_VALUE', call, `${name} ${String(value)} is not a u32`);
  return n;
}

/** A u64 argument given as a number or a bigint; INVALID_VALUE otherwise. */
export function u64(call: string, name: string, value: unknown): bigint {
  const ok = typeof value === 'bigint' ? value >= 0n && value < 1n << 64n : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  if (!ok) throw new DocaError('INVALID_VALUE', call, `${name} ${String(value)} is not a u64`);
  return BigInt(value as bigint | number);
}
