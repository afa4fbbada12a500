/**
 * A sync event's control block: one small segment per event, made by its creator, and the table of
 * engines that sleep waiting on it. docs/protocol.md is the specification.
 *
 *   64   u32 magic 'SEVT'   68 u32 version   72 u32 table capacity   76 i32 state (1 live, 2 destroyed)
 *   128  u64 value (unless the program supplied the counter memory: set_addr / set_doca_buf)
 *   192  i32 waiting: entries whose `wants` is set (updaters look at the table only when > 0)
 *   196  i32 entries claimed so far (high-water mark)
 *   256  waiter entries x 128 bytes:
 *          +0 i32 state (0 free, 1 claimed)   +4 i32 wants (1 while its engine waits for a condition)
 *          +8 i32 generation (bumped by every claim)
 *          +16 owner thread: u32 pid, u32 tid, f64 process start, f64 thread start
 *          +64 bell reference of the waiting context (fabric/doorbell.ts)
 *
 * An updater changes the value, then rings every entry that wants: no syscall unless that engine
 * sleeps, none at all while nobody waits. A waiter claims an entry once per run of its context and
 * flips `wants` as its waits come and go, announcing before it looks at the value a last time, so an
 * update in between is never missed. Everything read from the table is checked; a bad entry is skipped,
 * and an entry whose thread died (a process killed while it waited) is given back by the next updater
 * that finds it, so the waiting count never stays raised by the dead.
 *
 * Trust: an importer checks the block's magic, version, size and capacity before using it (INVALID_VALUE
 * otherwise); the value's place is checked against its segment's size.
 */
import { type BellRef, PeerBell, publishBellRef } from '../fabric/doorbell.js';
import { recentlyAlive, selfThread, type ThreadIdentity } from '../fabric/liveness.js';
import { Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';

const MAGIC = 0x54564553; // 'SEVT'
const VERSION = 2;
const OFF_MAGIC = 64;
const OFF_VERSION = 68;
const OFF_CAPACITY = 72;
export const SE_STATE = 76;
export const SE_VALUE = 128;
const WAITING = 192 / 4;
const HIGH = 196 / 4;
const TABLE = 256;
const ENTRY_SIZE = 128;
const E_STATE = 0;
const E_WANTS = 4;
const E_GEN = 8;
const E_OWNER = 16;
const E_BELL = 64;
/** Rings between two looks at the waiters' liveness (a dead waiter's pipe tells sooner). */
const AUDIT_EVERY = 1024;
/** Engines that can sleep on one event at the same time. */
export const WAITER_CAPACITY = 128;
export const SE_LIVE = 1;
export const SE_DESTROYED = 2;

export function createControl(): Segment {
  const seg = Segment.create('syncevent', TABLE - SEGMENT_HEADER_SIZE + WAITER_CAPACITY * ENTRY_SIZE);
  const v = new DataView(seg.u8.buffer);
  v.setUint32(OFF_VERSION, VERSION, true);
  v.setUint32(OFF_CAPACITY, WAITER_CAPACITY, true);
  Atomics.store(seg.i32, SE_STATE / 4, SE_LIVE);
  Atomics.store(seg.i32, OFF_MAGIC / 4, MAGIC);
  return seg;
}

/** Why a mapped segment is not a live control block of this version, or undefined when it is one. */
export function controlProblem(seg: Segment): string | undefined {
  if (seg.size < TABLE || Atomics.load(seg.i32, OFF_MAGIC / 4) !== MAGIC) return 'is not a sync event control block';
  const v = new DataView(seg.u8.buffer);
  if (v.getUint32(OFF_VERSION, true) !== VERSION) return `is a control block of version ${v.getUint32(OFF_VERSION, true)}, not ${VERSION}`;
  const capacity = v.getUint32(OFF_CAPACITY, true);
  if (capacity < 1 || TABLE + capacity * ENTRY_SIZE > seg.size) return `declares ${capacity} waiters in ${seg.size} bytes`;
  if (Atomics.load(seg.i32, SE_STATE / 4) !== SE_LIVE) return 'belongs to an event that was destroyed';
  return undefined;
}

/** A waiter's bell, for one claim of its entry (the entry's generation). */
interface Cached {
  generation: number;
  bell: PeerBell;
}

/** One handle's view of an event's waiter table: ringing the waiters, and being one. */
export class Waiters {
  private readonly i32: Int32Array;
  private readonly capacity: number;
  private readonly bells: (Cached | undefined)[] = [];
  private entry = -1;
  private wanting = false;
  private rings = 0;

  constructor(readonly control: Segment) {
    this.i32 = control.i32;
    const declared = new DataView(control.u8.buffer).getUint32(OFF_CAPACITY, true);
    this.capacity = Math.min(declared, Math.floor((control.size - TABLE) / ENTRY_SIZE));
  }

  /** After an update: rings every engine that waits (a load, unless somebody does). */
  ringIfWaiting(): void {
    if (Atomics.load(this.i32, WAITING) > 0) this.ring(true);
  }

  /** Rings every claimed entry, waiting or not (the event is being destroyed). */
  ringAll(): void {
    this.ring(false);
  }

  /**
   * Says that this context waits (`on`) or no longer does. The first time, it claims an entry for
   * `bell`; false when the table is full (the caller reports it). Call before the last look at the value.
   */
  want(on: boolean, bell: () => BellRef): boolean {
    if (on === this.wanting) return true;
    if (on && this.entry < 0 && !this.claim(bell())) return false;
    this.wanting = on;
    Atomics.store(this.i32, this.at(this.entry, E_WANTS), on ? 1 : 0);
    Atomics.add(this.i32, WAITING, on ? 1 : -1);
    return true;
  }

  /** Gives the entry back (the context stops). */
  release(): void {
    if (this.entry < 0 || this.control.closed) return;
    if (this.wanting) {
      this.wanting = false;
      Atomics.store(this.i32, this.at(this.entry, E_WANTS), 0);
      Atomics.sub(this.i32, WAITING, 1);
    }
    Atomics.store(this.i32, this.at(this.entry, E_BELL), 0);
    Atomics.store(this.i32, this.at(this.entry, E_STATE), 0);
    this.entry = -1;
  }

  /** Lets go of every bell this handle opened. */
  close(): void {
    for (const c of this.bells) c?.bell.release();
    this.bells.length = 0;
  }

  private claim(ref: BellRef): boolean {
    for (let i = 0; i < this.capacity; i++) {
      if (Atomics.compareExchange(this.i32, this.at(i, E_STATE), 0, 1) !== 0) continue;
      const base = TABLE + i * ENTRY_SIZE;
      Atomics.add(this.i32, this.at(i, E_GEN), 1);
      const v = new DataView(this.control.u8.buffer);
      v.setUint32(base + E_OWNER, selfThread.pid, true);
      v.setUint32(base + E_OWNER + 4, selfThread.tid, true);
      v.setFloat64(base + E_OWNER + 8, selfThread.start, true);
      v.setFloat64(base + E_OWNER + 16, selfThread.tstart, true);
      publishBellRef(this.control, base + E_BELL, ref);
      for (let high = Atomics.load(this.i32, HIGH); high < i + 1; high = Atomics.load(this.i32, HIGH)) {
        if (Atomics.compareExchange(this.i32, HIGH, high, i + 1) === high) break;
      }
      this.entry = i;
      return true;
    }
    return false;
  }

  private ring(onlyWanting: boolean): void {
    const n = Math.min(Atomics.load(this.i32, HIGH), this.capacity);
    // A waiter that died asleep is found by its pipe (no reader); one that died awake, now and then here.
    const audit = (++this.rings & (AUDIT_EVERY - 1)) === 0;
    for (let i = 0; i < n; i++) {
      if (Atomics.load(this.i32, this.at(i, E_STATE)) !== 1) continue;
      if (onlyWanting && Atomics.load(this.i32, this.at(i, E_WANTS)) !== 1) continue;
      const bell = this.bell(i);
      const dead = bell.unreachable || (audit && !recentlyAlive(this.owner(i)));
      if (!dead) bell.ring();
      else if (i !== this.entry && !recentlyAlive(this.owner(i))) this.reap(i);
    }
  }

  private owner(i: number): ThreadIdentity {
    const v = new DataView(this.control.u8.buffer);
    const base = TABLE + i * ENTRY_SIZE + E_OWNER;
    return { pid: v.getUint32(base, true), tid: v.getUint32(base + 4, true), start: v.getFloat64(base + 8, true), tstart: v.getFloat64(base + 16, true) };
  }

  /** Gives back the entry of a waiter that died, and its part of the waiting count. */
  private reap(i: number): void {
    const generation = Atomics.load(this.i32, this.at(i, E_GEN));
    if (Atomics.compareExchange(this.i32, this.at(i, E_WANTS), 1, 0) === 1) Atomics.sub(this.i32, WAITING, 1);
    // Only if nobody claimed it again meanwhile (the generation would differ).
    if (Atomics.load(this.i32, this.at(i, E_GEN)) === generation) {
      Atomics.store(this.i32, this.at(i, E_BELL), 0);
      Atomics.compareExchange(this.i32, this.at(i, E_STATE), 1, 0);
    }
  }

  /** The bell of entry `i`, for the current claim of it (a waiter that died or wrote nonsense: unreachable). */
  private bell(i: number): PeerBell {
    const generation = Atomics.load(this.i32, this.at(i, E_GEN));
    const cached = this.bells[i];
    if (cached?.generation === generation) return cached.bell;
    cached?.bell.release();
    const bell = PeerBell.at(this.control, TABLE + i * ENTRY_SIZE + E_BELL, 'doca_sync_event');
    this.bells[i] = { generation, bell };
    return bell;
  }

  private at(entry: number, field: number): number {
    return (TABLE + entry * ENTRY_SIZE + field) / 4;
  }
}
