/**
 * `ProgressEngine.run()`'s loop, as callbacks rather than an async function: a burst of progress, then a
 * turn of the event loop, a sleep on the engine's doorbell, or the end. An `await` per sleep and per
 * turn made about 1.1 KB of garbage per sleeping round trip (a ~200 us scavenge every ~1000 trips, most
 * of the slow trips near the p99); here a sleep allocates nothing and a turn one Immediate.
 *
 *   burst ──(work; `until` given)──> turn of the loop ──> afterTurn: done? ──> settle
 *     │                                                      │
 *     ├──(done / aborted)──> settle                          v
 *     └──(no work, or no `until`)──────────────────────> next: busy or budget spent: a turn, then burst
 *                                                            armed, nothing yet: sleep until woken
 *                                                            notified at once: a turn, then resume
 *   woken (the doorbell's watch: at once; local work or an abort: in a microtask) ──> resume ──> burst
 *
 * `until` is asked after every unit of work too, and once it held the run ends after that burst (which
 * finishes the work already there): asked only between bursts, a condition that holds only for a while
 * (a connection is open) was run past by a burst of up to `budget` units, and the run never ended.
 * The turn after work lets the continuations of promises that callbacks settled (`submitAsync`,
 * `waitForState`, iterators) run before `until` is asked; without `until` the driver ends only when the
 * engine is idle, which no continuation can make true without a state change the engine sees, so it goes
 * straight to its sleep (the sleep itself returns to the event loop). A burst that finds more work at
 * once after the sleep's arming takes a turn first, so a steady stream never starves timers or I/O.
 */
import { active as faultsActive, faultStalled, stalledNap } from '../fabric/faults/index.js';
import { settled } from './settled.js';

/** What a driver needs of its engine (pe.ts). */
export interface Drivable {
  progress(): boolean;
  requestNotification(): void;
  clearNotification(): void;
  /** Notified since armed. */
  readonly _notified: boolean;
  /** True when every connected context is IDLE with nothing in flight. */
  idle(): boolean;
  /** The driver went to sleep on the doorbell, or woke: the watch keeps the loop alive while someone sleeps. */
  _driverSleepChanged(): void;
  /** The run ended: the engine forgets its driver. */
  _driverEnded(): void;
}

export interface DriverOptions {
  mode: 'busy' | 'notify';
  signal: AbortSignal | undefined;
  until: (() => boolean) | undefined;
  budget: number;
}

/** How long a busy driver spins without work before it lets the event loop run. */
const BUSY_SPIN_MS = 1;
const resolved = Promise.resolve();

const enum State {
  /** In a burst, or waiting for a turn of the loop it asked for. */
  RUNNING,
  /** Armed, asleep on the doorbell until woken. */
  ASLEEP,
  /** Woken or notified at once: a resume is queued (a microtask or a turn of the loop). */
  RESUMING,
  ENDED,
}

export class Driver {
  private state = State.RUNNING;
  /** `until` held after some unit of work: the run ends after this burst. */
  private held = false;

  constructor(
    private readonly pe: Drivable,
    private readonly o: DriverOptions,
    private readonly resolve: () => void,
    private readonly reject: (err: unknown) => void,
  ) {
    o.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Asleep on the doorbell (the engine keeps its watch referenced for it). */
  get asleep(): boolean {
    return this.state === State.ASLEEP;
  }

  /** From the top: a burst of progress, then the end, a turn of the loop or a sleep. */
  readonly burst = (): void => {
    if (this.state === State.ENDED) return;
    try {
      if (this.o.signal?.aborted) return this.end();
      if (faultsActive && faultStalled(this.pe)) {
        void stalledNap(this.o.signal).then(this.burst); // a stalled engine's driver sleeps (docs/faults.md)
        return;
      }
      const n = this.o.mode === 'busy' ? this.spin() : this.progressSome();
      if (this.done()) return this.end();
      if (n > 0 && this.o.mode === 'notify' && this.o.until) {
        setImmediate(this.afterTurn);
        return;
      }
      this.next(n === this.o.budget, false);
    } catch (err) {
      this.end(err);
    }
  };

  /** The engine was notified while the driver slept: `direct` from the doorbell's watch (not user code). */
  woken(direct: boolean): void {
    if (this.state !== State.ASLEEP) return;
    this.state = State.RESUMING;
    if (direct) return this.resume();
    // Local work (a submit from user code) or an abort: not inside the caller's call.
    void resolved.then(this.resume);
  }

  private progressSome(): number {
    let n = 0;
    const budget = this.o.budget;
    while (n < budget && this.pe.progress()) {
      n++;
      this.ask();
    }
    return n;
  }

  /**
   * Spins without leaving the event-loop turn, until the budget is spent or: after work, the first idle
   * poll once a promise adapter settled (settled.ts: its continuations run on the turn), else an idle
   * stretch of 256 polls in a row (the work paused: a continuation the program's own promise waits for
   * runs then); with no work at all, BUSY_SPIN_MS from the first idle stretch (the clock is read only
   * then: a read allocates). A callback ping-pong, whose answers come a few polls apart, so turns the
   * loop once per budget, where counting idle polls from the burst's start turned it every few dozen
   * trips (a turn is microseconds: they were the p99).
   */
  private spin(): number {
    let n = 0;
    const budget = this.o.budget;
    let deadline = 0;
    settled.any = false;
    for (let idle = 0; n < budget; ) {
      if (this.pe.progress()) {
        n++;
        idle = 0;
        this.ask();
      } else if (n > 0 && settled.any) {
        break;
      } else if ((++idle & 255) === 0) {
        if (n > 0 || this.done()) break;
        const now = performance.now();
        if (deadline === 0) deadline = now + BUSY_SPIN_MS;
        else if (now > deadline) break;
      }
    }
    return n;
  }

  /** After a unit of work: whether `until` holds now (asked until it first does). */
  private ask(): void {
    if (!this.held && this.o.until?.() === true) this.held = true;
  }

  private done(): boolean {
    return this.o.until ? this.held || this.o.until() : this.pe.idle();
  }

  /** After work and a turn of the loop (continuations ran): done, or on. */
  private readonly afterTurn = (): void => {
    if (this.state === State.ENDED) return;
    try {
      if (this.o.signal?.aborted || this.done()) return this.end();
      this.next(false, true);
    } catch (err) {
      this.end(err);
    }
  };

  /**
   * After a burst (that spent its whole budget, if `spent`; followed by a turn of the loop, if
   * `turned`): a turn and another burst (busy, or the budget spent), or the sleep.
   */
  private next(spent: boolean, turned: boolean): void {
    if (this.o.mode === 'busy' || spent) {
      setImmediate(this.burst);
      return;
    }
    this.pe.requestNotification();
    if (!this.pe._notified && !this.o.signal?.aborted) {
      this.state = State.ASLEEP;
      this.pe._driverSleepChanged();
      return;
    }
    // Notified at once: on at once if the loop just turned, else let it turn first (timers and I/O run
    // under a steady stream; and a burst that did nothing does not spin).
    this.state = State.RESUMING;
    if (turned) return this.resume();
    setImmediate(this.resume);
  }

  private readonly resume = (): void => {
    if (this.state !== State.RESUMING) return; // ended meanwhile
    this.state = State.RUNNING;
    this.pe._driverSleepChanged();
    this.pe.clearNotification();
    this.burst();
  };

  private readonly onAbort = (): void => this.woken(false);

  private end(err?: unknown): void {
    if (this.state === State.ENDED) return;
    this.state = State.ENDED;
    this.o.signal?.removeEventListener('abort', this.onAbort);
    this.pe._driverEnded();
    if (err === undefined) this.resolve();
    else this.reject(err);
  }
}
