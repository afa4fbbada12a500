/**
 * Activation: how work reaches an execution unit. Anything that makes work for the DPA (a DPA thread
 * activated by a completion or a notify, a kernel whose wait event reached its threshold, an RPC call)
 * publishes it in shared memory and sets its bit in a ready bitmap, then rings one sleeping EU through
 * its doorbell (fabric/doorbell.ts): no syscall unless that EU sleeps, none at all while every EU is
 * busy (a busy EU looks at the bitmaps before it sleeps).
 *
 * Why no activation is lost: an EU going to sleep (1) sets its idle bit, (2) arms its bell, (3) looks
 * at the ready count. An activator (a) sets the ready bit and adds to the ready count, (b) loads the
 * idle mask and rings an EU it finds there. All are sequentially consistent atomics: if (3) misses (a),
 * then (1) precedes (b), so the activator sees an idle EU and rings it; the ring lands after (2), so
 * that EU (or, if it rings another idle one, that one) wakes. docs/wakeup.md gives the bell's half.
 * The count is only a hint, and other threads write it (a bit set without it, or a count that says
 * nothing is ready, must not hide work): an EU scans the bitmaps before every sleep, whatever the count
 * says, and (3) sleeps only if the count is 0 or what it was when that scan began. A count unchanged
 * although (a) happened means another EU took work meanwhile (it subtracts after taking): that EU is busy
 * and scans again before it sleeps, so the work is still seen. A wrong count costs at most a sleep slice.
 *
 * A DPA thread's state word (objects.ts, ThreadState) makes an activation idempotent: one activation
 * while it waits queues it, one while it runs makes it run once more afterwards, more are absorbed.
 */
import { PeerBell } from '../fabric/doorbell.js';
import type { Segment } from '../fabric/segment.js';
import { BIT_READY, type DpaLayout, EU, H, OBJ } from './layout.js';
import { ThreadState } from './objects.js';

export class Scheduler {
  readonly i32: Int32Array;
  /** EU `e`'s bell, opened at its first ring (fabric/doorbell.ts PeerBell: a dead one is not rung). */
  private readonly bells: (PeerBell | undefined)[] = [];
  private readonly owner: PeerBell;
  /**
   * Set in execution units: an EU that makes work is awake and looks at the bitmaps before it sleeps,
   * so when that work is the only work ready it takes it itself instead of waking another EU.
   */
  selfServing = false;

  constructor(
    readonly segment: Segment,
    readonly layout: DpaLayout,
  ) {
    this.i32 = segment.i32;
    this.owner = PeerBell.at(segment, H.OWNER_BELL, 'doca_dpa');
  }

  get state(): number {
    return Atomics.load(this.i32, H.STATE / 4);
  }

  /**
   * Activates DPA thread `index` (a completion, a notify, `doca_dpa_thread_run` of a pending one); false
   * if its state word holds no thread state (the caller ends the thread).
   */
  activateThread(index: number): boolean {
    const at = (this.layout.object(index) + OBJ.STATE) / 4;
    for (;;) {
      const s = Atomics.load(this.i32, at);
      if (s < ThreadState.CREATED || s > ThreadState.STOPPED) return false;
      // QUEUED is absorbed; its bit is set again in case it was lost (a no-op when it is set: no new work).
      if (s === ThreadState.QUEUED) this.ready(this.layout.objectBits, index);
      const next = s === ThreadState.IDLE ? ThreadState.QUEUED : s === ThreadState.RUNNING ? ThreadState.RUNNING_AGAIN : s === ThreadState.STARTED ? ThreadState.STARTED_PENDING : -1;
      if (next < 0) return true; // already queued, pending or running again; finished or stopped: absorbed
      if (Atomics.compareExchange(this.i32, at, s, next) !== s) continue;
      if (next === ThreadState.QUEUED) this.ready(this.layout.objectBits, index);
      return true;
    }
  }

  /** Sets bit `index` of the bitmap at `base` and wakes an EU to take it. */
  ready(base: number, index: number): void {
    const word = base / 4 + (index >>> 5);
    const mask = 1 << (index & 31);
    const ready = (Atomics.or(this.i32, word, mask) & mask) === 0 ? Atomics.add(this.i32, H.READY / 4, 1) + 1 : Atomics.load(this.i32, H.READY / 4);
    if (!this.selfServing || ready > 1) this.wakeOne();
  }

  /** Clears bit `index` of a bitmap; true if this call cleared it (the caller owns that unit of work). */
  take(base: number, index: number): boolean {
    const mask = 1 << (index & 31);
    if ((Atomics.and(this.i32, base / 4 + (index >>> 5), ~mask) & mask) === 0) return false;
    Atomics.sub(this.i32, H.READY / 4, 1);
    return true;
  }

  /**
   * Rings one idle EU, if any (round robin, so that bursts spread over the EUs), unless an EU is looking
   * for work (eu-worker.ts lookAfterWork: it finds this before it sleeps). An EU whose bell is
   * gone (its worker died) is passed over for the next idle one: the work is never left to a dead unit
   * (whose death makes the DPA fatal anyway, eu-pool.ts).
   */
  wakeOne(): void {
    // An EU still looking after its last run reads the ready count before it sleeps: it takes the work.
    if (Atomics.load(this.i32, H.LOOKING / 4) !== 0) return;
    const idle = Atomics.load(this.i32, H.IDLE / 4);
    if (idle === 0) return;
    const eus = this.layout.dims.eus;
    // Unsigned: the cursor is an i32 every wake adds to, negative after 2^31 wakes (a negative start
    // would look at bit 31 and the first units only, leaving work to a busy unit).
    const start = (Atomics.add(this.i32, H.WAKE_CURSOR / 4, 1) >>> 0) % eus;
    for (let k = 0; k < eus; k++) {
      const e = (start + k) % eus;
      if (idle & (1 << e) && this.ringEu(e, BIT_READY)) return;
    }
  }

  /** Sets bit `bit` of EU `e`'s bell (waking it if it sleeps); false if its bell is gone (or not up yet). */
  ringEu(e: number, bit: number): boolean {
    // An EU not up yet has no bell: it looks at everything before its first sleep.
    return (this.bells[e] ??= PeerBell.at(this.segment, this.layout.eu(e) + EU.BELL, 'doca_dpa')).ring(bit);
  }

  /** Wakes the owner (an RPC finished, an EU came up or left, a stopping thread stopped). */
  ringOwner(): void {
    this.owner.ring(0);
  }

  /** Lets go of every bell this thread opened for the DPA. */
  close(): void {
    for (const bell of this.bells) bell?.release();
    this.bells.length = 0;
    this.owner.release();
  }
}
