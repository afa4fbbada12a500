/**
 * Introspection: what each thread of each process holds on a fabric, published in shared memory that
 * observers (`softdpu top`, `softdpu view`) read without locks and without stopping anyone. The owner
 * writes with plain stores on the paths it already takes: a connection's message counters *are* its
 * record's counters, so publishing costs nothing an unobserved program would not pay.
 * The segment is specified in docs/protocol.md#introspection.
 *
 * One stats segment per thread and fabric, announced by a file in the fabric directory
 * (`stats.<pid>-<start>.<tid>`, holding the segment descriptor), swept with its owner like any entry.
 *
 *   64    u32 magic 'STAT'  68 u32 version  72 u32 slots  76 u32 events  80 u32 pid  84 u32 tid
 *   88    f64 process start  96 i32 event count (total written)  100 u32 reserved
 *   104   f64 published since (ms since the epoch)  112 f64 exited (ms since the epoch; 0 but in an epitaph)
 *   128   title: 64 bytes of UTF-8 (the process's argv, shortened)
 *   192   events x 64 bytes: f64 time (ms since the epoch), u32 kind, u32 slot, 48 bytes UTF-8 text
 *   ...   slots x 256 bytes:
 *           +0 i32 generation (odd while the owner rewrites the slot's identity)
 *           +4 u32 kind (0 free; bit 31 set: the object ended, the slot keeps its final values until reused)
 *           +8 u32 parent slot + 1 (0: none)   +12 i32 state   +16 f64 id   +24 f64 peer pid
 *           +32 name: 64 bytes UTF-8   +96 counters x 20, 8 bytes each: an f64, except the kind's
 *               U64_COUNTERS, which hold a u64 (little-endian) exactly
 *
 * Readers check the magic, version and sizes, copy a slot, and keep it only if its generation was even
 * and unchanged across the copy (a seqlock: the owner never waits). Counters are not under the seqlock:
 * each is one aligned 8-byte store, read whole, and may move on while a slot is copied.
 *
 * An object that ends leaves its slot marked ended, and slots are reused never-used first, then the
 * longest ended: so when the thread ends (its process exits, or a worker ends), the copy of the
 * segment's used part it writes to the fabric directory, its epitaph (fabric/epitaphs.ts), holds what
 * it did, the objects it had already destroyed included. Readers list ended slots, marked (so that a look
 * that saw a slot end knows it is no news in the epitaph); `top` and `view` show them for exited threads.
 *
 * Kinds, their counters (COUNTER_NAMES) and states (STATE_NAMES); docs/observe.md says what they show:
 *   DEVICE       an opened device, "<pci> (<side>)".
 *   SERVER       connections (now), accepted, refused; context state.
 *   CLIENT       connections (now); context state.
 *   CONNECTION   sent_messages, sent_bytes, recv_messages, recv_bytes (doca_comch_connection counters);
 *                peer: the process at the other end.
 *   CONSUMER     posted, received, received_bytes, failed; context state.
 *   PRODUCER     sent, sent_bytes, again, failed; context state.
 *   SYNC_EVENT   one handle of a sync event: value (u64, exact in the segment; a JSON reader's double
 *                is exact up to 2^53 and rounded beyond), waiters, updates. Named
 *                "event <pid>:<fd> <publisher>→<subscriber>" after its control segment (creator pid and
 *                fd), so the creator's record and every importer's carry the same "<pid>:<fd>";
 *                importers say "imported (remote_pci)" or "imported (remote_net)", peer: the creator.
 *                value: the counter as this handle last wrote or read it (its updates, gets, completed
 *                waits; DPA code's updates are not seen); waiters: this handle's waits in progress
 *                (pending wait tasks, a blocking wait); updates: set/add through this handle (its
 *                synchronous calls, its notify tasks, remote-net peers it serves). State: the context's,
 *                RUNNING/IDLE for doca_sync_event_start/stop.
 *   DPA          threads (now), kernels (launched), rpcs (issued); state CREATED, STARTED, FATAL, STOPPED.
 *   DPA_THREAD   activations: runs of its function, counted by the execution unit that runs it (which
 *                maps its owner's stats segment: runs of one thread never overlap, so one writer at a
 *                time, ordered by the thread's state word); state CREATED, STARTED, RUNNABLE, STOPPED.
 *   MSGQ         consumers, producers: endpoints in its table (both sides), as of the last one this
 *                thread created or destroyed.
 *   FAULT        a fault in force in the thread: injected (its count in this thread). Published by a
 *                thread that publishes anything else on the fabric, or once a fault fires there.
 */
import { realpathSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FreeList } from '../core/free-list.js';
import { selfThread } from './liveness.js';
import { entryName, epitaphName, tempPath } from './names.js';
import { provideStats } from './faults/index.js';
import { Segment, SEGMENT_HEADER_SIZE } from './segment.js';
import { Counter, StatKind } from './stats-kinds.js';

export const STATS_MAGIC = 0x54415453; // 'STAT'
export const STATS_VERSION = 2;
export const STATS_SLOTS = 256;
export const STATS_EVENTS = 64;
export const SLOT_SIZE = 256;
export const EVENT_SIZE = 64;
export const OFF_CREATED = 104;
export const OFF_EXITED = 112;
export const OFF_TITLE = 128;
export const OFF_EVENTS = 192;
export const OFF_SLOTS = OFF_EVENTS + STATS_EVENTS * EVENT_SIZE;
export const COUNTERS = 20;
export const NAME_BYTES = 64;
/** Bit 31 of a slot's kind: the object ended (its slot keeps its final values until reused). */
export const KIND_ENDED = 0x8000_0000;

export { Counter, StatEvent, StatKind } from './stats-kinds.js';

/** The counters of each kind, by index (readers name them with this), from `Counter`. */
export const COUNTER_NAMES: Record<number, readonly string[]> = Object.fromEntries(
  Object.entries(Counter).map(([kind, counters]) => [StatKind[kind as keyof typeof StatKind], Object.entries(counters).sort((a, b) => a[1] - b[1]).map(([name]) => name.toLowerCase())]),
);

/** Counters that hold a u64 (index by kind): written through `StatRecord.u`, read as u64. */
export const U64_COUNTERS: Record<number, readonly number[]> = {
  [StatKind.SYNC_EVENT]: [Counter.SYNC_EVENT.VALUE],
};

/** Context states (core/ctx.ts CtxState), for the kinds that are contexts. */
const CTX_STATES = ['IDLE', 'STARTING', 'RUNNING', 'STOPPING'] as const;
/** What the state of a kind's slot means, by value; a kind not here has no state (0). */
export const STATE_NAMES: Record<number, readonly string[]> = {
  [StatKind.SERVER]: CTX_STATES,
  [StatKind.CLIENT]: CTX_STATES,
  [StatKind.CONSUMER]: CTX_STATES,
  [StatKind.PRODUCER]: CTX_STATES,
  [StatKind.SYNC_EVENT]: CTX_STATES,
  [StatKind.DPA]: ['CREATED', 'STARTED', 'FATAL', 'STOPPED'],
  [StatKind.DPA_THREAD]: ['CREATED', 'STARTED', 'RUNNABLE', 'STOPPED'],
};
export const DpaStatState = { CREATED: 0, STARTED: 1, FATAL: 2, STOPPED: 3 } as const;
export const DpaThreadStatState = { CREATED: 0, STARTED: 1, RUNNABLE: 2, STOPPED: 3 } as const;

/** Byte offset, in a stats segment, of counter `index` of `slot` (for a thread that maps the segment). */
export function counterOffset(slot: number, index: number): number {
  return OFF_SLOTS + slot * SLOT_SIZE + 96 + index * 8;
}


const encoder = new TextEncoder();

/** The `softdpu` command's script (dist/src/cli/main.js, beside this file's dist/src/fabric/). */
const CLI_MAIN = fileURLToPath(new URL('../cli/main.js', import.meta.url));

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * What observers call a process: its script and arguments, base names, with the `softdpu` command's
 * script (however it was started: `npx softdpu`, `node .../cli/main.js`) as `softdpu`, so that
 * `softdpu sample NAME ...` is titled so rather than `main.js sample NAME ...`.
 */
export function processTitle(argv: readonly string[] = process.argv): string {
  const [node = 'node', script, ...args] = argv;
  const base = (a: string) => a.split('/').pop() ?? a;
  if (script === undefined) return base(node);
  return [sameFile(script, CLI_MAIN) ? 'softdpu' : base(script), ...args.map(base)].join(' ');
}

/**
 * The owner's handle on one slot. `c` are its counters: write them with plain stores. `u` is the same
 * memory as u64s, for the kind's U64_COUNTERS (a store there wraps modulo 2^64, as the u64 does).
 */
export class StatRecord {
  readonly c: Float64Array;
  readonly u: BigUint64Array;

  constructor(
    private readonly stats: StatsWriter | undefined,
    readonly slot: number,
    counters: Float64Array,
  ) {
    this.c = counters;
    this.u = new BigUint64Array(counters.buffer, counters.byteOffset, counters.length);
  }

  /** The stats segment the slot is in (undefined for a detached record). */
  get segment(): Segment | undefined {
    return this.stats?.segment;
  }

  setState(state: number): void {
    if (this.stats && !this.released) Atomics.store(this.stats.i32, (this.base + 12) / 4, state);
  }

  /** The process at the other end (a connection's peer). */
  setPeer(pid: number): void {
    if (!this.released) this.stats?.setPeer(this.slot, pid);
  }

  /** Appends an event about this object to its thread's event ring. */
  event(kind: number, text: string): void {
    this.stats?.event(kind, this.released ? -1 : this.slot, text);
  }

  /**
   * The object is gone: its slot keeps its final values, marked ended, until it is reused (so that the
   * thread's epitaph holds it). Once: a second call does nothing.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.stats?.free(this.slot);
  }

  private released = false;

  private get base(): number {
    return OFF_SLOTS + this.slot * SLOT_SIZE;
  }
}

/** A record nobody publishes (no fabric, or the slots ran out): same API, private counters. */
export function detachedRecord(): StatRecord {
  return new StatRecord(undefined, -1, new Float64Array(COUNTERS));
}

/** This thread's stats segment on one fabric. */
export class StatsWriter {
  readonly segment: Segment;
  readonly i32: Int32Array;
  private readonly view: DataView;
  private readonly u8: Uint8Array;
  /** Slots never used yet; ended ones wait in `ended`, the longest ended first. */
  private readonly fresh = new FreeList(STATS_SLOTS);
  private readonly ended: number[] = [];
  /** Slots 0 to used - 1 have been used: what an epitaph copies. */
  private used = 0;

  constructor(dir: string) {
    this.segment = Segment.create('stats', OFF_SLOTS - SEGMENT_HEADER_SIZE + STATS_SLOTS * SLOT_SIZE);
    this.i32 = this.segment.i32;
    this.u8 = this.segment.u8;
    this.view = new DataView(this.u8.buffer);
    const v = this.view;
    v.setUint32(68, STATS_VERSION, true);
    v.setUint32(72, STATS_SLOTS, true);
    v.setUint32(76, STATS_EVENTS, true);
    v.setUint32(80, selfThread.pid, true);
    v.setUint32(84, selfThread.tid, true);
    v.setFloat64(88, selfThread.start, true);
    this.writeText(OFF_TITLE, NAME_BYTES, processTitle());
    Atomics.store(this.i32, 64 / 4, STATS_MAGIC);
    const d = this.segment.descriptor;
    const file = join(dir, entryName('stats', String(selfThread.tid)));
    const body = JSON.stringify({ pid: d.pid, start: d.start, fd: d.fd, size: d.size, token: Buffer.from(d.token).toString('hex'), tid: selfThread.tid });
    // Written whole under an entry name of its own (kind stats-tmp, same owner), so that one left by a
    // process killed before the rename is swept with the process like its other entries.
    const tmp = join(dir, entryName('stats-tmp', String(selfThread.tid)));
    writeFileSync(tmp, body, { mode: 0o600 });
    renameSync(tmp, file);
    // Stamped once its entry can be listed: an observer's look that began before this moment may have
    // missed the entry, so it counts the thread's objects from 0 on its next look (cli/observe.ts).
    v.setFloat64(OFF_CREATED, Date.now(), true);
    // A thread that ends normally (its process exits, by process.exit or not, or a worker ends) leaves
    // its epitaph, then takes its entry with it; one that is killed leaves its entry to the sweep.
    process.once('exit', () => {
      this.writeEpitaph(dir);
      try {
        unlinkSync(file);
      } catch {
        // swept already
      }
    });
  }

  /** A new slot of `kind` named `name` (under `parent`); a detached record when all slots are in use. */
  record(kind: StatKind, name: string, parent?: StatRecord, id = 0): StatRecord {
    let slot = this.fresh.take();
    if (slot < 0) {
      slot = this.ended.shift() ?? -1;
      if (slot < 0) return detachedRecord();
      this.orphan(slot);
    }
    this.used = Math.max(this.used, slot + 1);
    const base = OFF_SLOTS + slot * SLOT_SIZE;
    const gen = base / 4;
    Atomics.add(this.i32, gen, 1); // odd: being rewritten
    this.view.setUint32(base + 4, kind, true);
    this.view.setUint32(base + 8, parent && parent.slot >= 0 ? parent.slot + 1 : 0, true);
    this.view.setInt32(base + 12, 0, true);
    this.view.setFloat64(base + 16, id, true);
    this.view.setFloat64(base + 24, 0, true);
    this.writeText(base + 32, NAME_BYTES, name);
    const counters = new Float64Array(this.u8.buffer, base + 96, COUNTERS);
    counters.fill(0);
    Atomics.add(this.i32, gen, 1); // even: stable
    return new StatRecord(this, slot, counters);
  }

  /** @internal `StatRecord.setPeer`. */
  setPeer(slot: number, pid: number): void {
    if (slot >= 0 && !this.segment.closed) this.view.setFloat64(OFF_SLOTS + slot * SLOT_SIZE + 24, pid, true);
  }

  /** The object in `slot` ended: its slot keeps its final values, marked ended, until it is reused. */
  free(slot: number): void {
    if (slot < 0 || this.segment.closed) return;
    const base = OFF_SLOTS + slot * SLOT_SIZE;
    Atomics.add(this.i32, base / 4, 1);
    this.view.setUint32(base + 4, (this.view.getUint32(base + 4, true) | KIND_ENDED) >>> 0, true);
    Atomics.add(this.i32, base / 4, 1);
    this.ended.push(slot);
  }

  /** Before `slot` is reused: ended objects under the one it held lose their parent, not get a new one. */
  private orphan(slot: number): void {
    for (const s of this.ended) {
      const base = OFF_SLOTS + s * SLOT_SIZE;
      if (this.view.getUint32(base + 8, true) !== slot + 1) continue;
      Atomics.add(this.i32, base / 4, 1);
      this.view.setUint32(base + 8, 0, true);
      Atomics.add(this.i32, base / 4, 1);
    }
  }

  /**
   * At the thread's end: the segment's used part, as it is, to the thread's epitaph in `dir` (written
   * whole to a temporary entry and renamed). The copy's segment header (its token) is zeroed, its slot
   * count is the slots used, and it says when the thread exited. Never fails the exit.
   */
  private writeEpitaph(dir: string): void {
    if (this.segment.closed) return;
    try {
      const size = OFF_SLOTS + this.used * SLOT_SIZE;
      const copy = new Uint8Array(size);
      copy.set(this.u8.subarray(SEGMENT_HEADER_SIZE, size), SEGMENT_HEADER_SIZE);
      const v = new DataView(copy.buffer);
      v.setUint32(72, this.used, true);
      v.setFloat64(OFF_EXITED, Date.now(), true);
      const tmp = tempPath(dir);
      writeFileSync(tmp, copy, { mode: 0o600 });
      renameSync(tmp, join(dir, epitaphName('stats', String(selfThread.tid))));
    } catch {
      // the fabric directory went first: nothing to leave a record in
    }
  }

  event(kind: number, slot: number, text: string): void {
    // The event count is a u32 in an i32 word: read it unsigned, or past 2^31 events the slot would
    // be negative (a RangeError, or the header overwritten).
    const n = Atomics.load(this.i32, 96 / 4) >>> 0;
    const at = OFF_EVENTS + (n % STATS_EVENTS) * EVENT_SIZE;
    this.view.setFloat64(at, Date.now(), true);
    this.view.setUint32(at + 8, kind, true);
    this.view.setInt32(at + 12, slot, true);
    this.writeText(at + 16, EVENT_SIZE - 16, text);
    Atomics.store(this.i32, 96 / 4, (n + 1) | 0);
  }

  private writeText(at: number, size: number, text: string): void {
    const bytes = encoder.encode(text).subarray(0, size - 1);
    this.u8.fill(0, at, at + size);
    this.u8.set(bytes, at);
  }
}

const writers = new Map<string, StatsWriter>();
const writerListeners: ((dir: string) => void)[] = [];

/** This thread's stats on the fabric in `dir` (made on first use). */
export function statsFor(dir: string): StatsWriter | undefined {
  let w = writers.get(dir);
  if (!w) {
    try {
      w = new StatsWriter(dir);
    } catch {
      return undefined; // introspection is never worth failing a program for
    }
    writers.set(dir, w);
    for (const listener of writerListeners) listener(dir);
  }
  return w;
}

/** Whether this thread already publishes on the fabric in `dir`. */
export function hasStats(dir: string): boolean {
  return writers.has(dir);
}

/** Calls `listener` whenever this thread starts publishing on a fabric (fault records join then). */
export function onStatsWriter(listener: (dir: string) => void): void {
  writerListeners.push(listener);
}

/** A record for an object of the fabric in `dir`. */
export function statRecord(dir: string | undefined, kind: StatKind, name: string, parent?: StatRecord, id = 0): StatRecord {
  const w = dir === undefined ? undefined : statsFor(dir);
  return w ? w.record(kind, name, parent, id) : detachedRecord();
}

// Faults in force get records on the fabrics this thread publishes on (fabric/faults/, which cannot
// import this file: it loads without the native addon).
onStatsWriter(
  provideStats({
    has: hasStats,
    record: (dir, name) => statRecord(dir, StatKind.FAULT, name),
    start: (dir) => void statsFor(dir),
  }),
);
