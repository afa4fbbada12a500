/**
 * The progress engine (doca_pe.h): contexts are connected to it, and `progress()` is the only place where
 * callbacks run and state changes. It never blocks.
 *
 * What the engine looks at: contexts with local work (a completion, an event, a transition) and sources
 * in shared memory (a connection's queues, a consumer's queue, an event it waits on) whose peers rang
 * the engine's doorbell (fabric/doorbell.ts, docs/wakeup.md). Until the engine first requests a
 * notification it polls every source on every call, as a busy DOCA loop expects, and peers ring nothing;
 * from then on (PROGRESS_SELECTIVE, DOCA's default) it looks only at what rang, so a wake-up costs the
 * same with one connection or five hundred. PROGRESS_ALL polls every source on every call.
 *
 * DOCA's notification handle is `getNotificationHandle()`, a real fd; `requestNotification()` /
 * `clearNotification()` arm and disarm it, `waitNotification()` is its promise form, and `run()` drives the
 * engine from Node's event loop in busy or notify mode until an AbortSignal, a predicate, or until every
 * context is IDLE (so the process can exit).
 */
import { Bell, type BellRef, BellState } from '../fabric/doorbell.js';
import { active as faultsActive, faultStalls } from '../fabric/faults/index.js';
import { livenessTick } from '../fabric/liveness.js';
import { native } from '../native/load.js';
import type { Context, WakeSource } from './ctx.js';
import { CtxState } from './ctx.js';
import { DocaError } from './error.js';
import { Fifo } from './fifo.js';
import { Driver } from './pe-driver.js';
import { boundedWait, type WaitOptions } from './wait.js';

/** `enum doca_pe_event_mode`. */
export const PeEventMode = { PROGRESS_SELECTIVE: 0, PROGRESS_ALL: 1 } as const;
export type PeEventMode = (typeof PeEventMode)[keyof typeof PeEventMode];

/** Progress calls between two looks at the liveness cadence (fabric/liveness.ts). */
const LIVENESS_EVERY = 1024;

/** How `ProgressEngine.run()` drives the engine (a `doca_pe_progress` loop) and when it returns. */
export interface RunOptions {
  /**
   * 'notify' (default) sleeps between bursts of work; 'busy' polls continuously (burns a core), yielding
   * to the event loop after `budget` units of work, after about a millisecond without work, and after
   * work: at once when one of softdpu's promises settled (its continuations run on the turn), else once
   * 256 polls in a row found nothing (the work paused). An `until` that waits for a promise of the
   * program's own, settled in a callback under a steady stream, is seen at the next of those.
   */
  mode?: 'busy' | 'notify';
  /** Stops the driver (it resolves). */
  signal?: AbortSignal;
  /**
   * Stops the driver once this returns true. It is asked after every unit of work and after each turn
   * of the loop that follows a burst (so it sees promise continuations); the driver ends after the burst
   * in which it first held (the burst finishes the work already there, up to its budget), so a condition
   * that holds only for a while, such as "a connection is open", is never missed. Without it the driver
   * stops when every context is IDLE; with it, it keeps going (sleeping in notify mode) until it holds.
   * A condition that changes outside the engine's callbacks will not wake a sleeping driver: use `signal`.
   */
  until?: () => boolean;
  /** Progress calls that did work between turns of the event loop (default 4096). */
  budget?: number;
}

interface SourceSlot {
  readonly ctx: Context;
  readonly source: WakeSource;
}

/**
 * The progress engine, `struct doca_pe` (`doca_pe_create`): contexts are connected to it, and `progress()`
 * (`doca_pe_progress`) is the only place where their callbacks run and their states change; it never
 * blocks. Drive it with a busy loop as DOCA programs do, with DOCA's notification handle
 * (`getNotificationHandle`, `requestNotification`, `clearNotification`, or `waitNotification()` as a
 * promise), or with `run()`, which drives it from Node's event loop.
 *
 * @example
 * ```ts
 * // doca_pe_create(&pe); doca_pe_connect_ctx(pe, ctx); while (...) doca_pe_progress(pe);
 * const pe = ProgressEngine.create();
 * pe.connectCtx(server);
 * server.start();
 * const stop = new AbortController();
 * await pe.run({ mode: 'notify', signal: stop.signal }); // returns on abort, or once every context is IDLE
 * ```
 */
export class ProgressEngine {
  private readonly ctxs: Context[] = [];
  private next = 0;
  private inCallback = false;
  private armed = false;
  private notified = false;
  private waiters: (() => void)[] = [];
  private destroyed = false;
  /** The `run()` in progress (pe-driver.ts). */
  private driver: Driver | undefined;
  private eventMode: PeEventMode = PeEventMode.PROGRESS_SELECTIVE;
  /** Created with the first source or notification; its state word says whether peers must ring. */
  private bell: Bell | undefined;
  private tracking = false;
  private handleGiven = false;
  private watchId = -1;
  private readonly sources: (SourceSlot | undefined)[] = [];
  /** Contexts with something to look at: local work, or sources that rang. */
  private readonly ready = new Fifo<Context>();
  private calls = 0;
  private readonly onBit = (bit: number) => {
    const slot = this.sources[bit];
    if (slot) slot.ctx._sourceReady(slot.source);
  };

  /** `doca_pe_create`. */
  static create(): ProgressEngine {
    return new ProgressEngine();
  }

  /** `doca_pe_connect_ctx`: the binding lasts until the context is destroyed. */
  connectCtx(ctx: Context): void {
    this.check('doca_pe_connect_ctx');
    ctx._connect(this);
    this.ctxs.push(ctx);
    this._signal(ctx); // a sleeping driver has a new context to progress
  }

  /**
   * `doca_pe_progress`: runs at most one unit of work (a task completion, an event, or a context's
   * STARTING -> RUNNING / STOPPING -> IDLE transition) and returns whether it did. Never blocks.
   * Refused (NOT_PERMITTED) when called from inside a callback.
   */
  progress(): boolean {
    if (this.inCallback) throw new DocaError('NOT_PERMITTED', 'doca_pe_progress', 'called from inside a callback of the same progress engine');
    if ((++this.calls & (LIVENESS_EVERY - 1)) === 0) livenessTick();
    if (this.ctxs.length === 0) return false;
    if (faultsActive && faultStalls(this, this.ctxs)) return false; // an injected stall: docs/faults.md
    this.inCallback = true;
    try {
      return this.tracking && this.eventMode === PeEventMode.PROGRESS_SELECTIVE ? this.progressReady() : this.progressAll();
    } finally {
      this.inCallback = false;
    }
  }

  /** `doca_pe_get_num_inflight_tasks`: across every connected context. */
  getNumInflightTasks(): number {
    let n = 0;
    for (const ctx of this.ctxs) n += ctx.getNumInflightTasks();
    return n;
  }

  /**
   * `doca_pe_set_event_mode`. PROGRESS_SELECTIVE (the default) looks only at contexts that have work or
   * whose sources rang since the engine first slept; PROGRESS_ALL polls every source on every call.
   * Refused from a callback.
   */
  setEventMode(mode: PeEventMode): void {
    this.check('doca_pe_set_event_mode');
    if (this.inCallback) throw new DocaError('NOT_PERMITTED', 'doca_pe_set_event_mode', 'called from inside a callback');
    if (mode !== PeEventMode.PROGRESS_ALL && mode !== PeEventMode.PROGRESS_SELECTIVE) {
      throw new DocaError('INVALID_VALUE', 'doca_pe_set_event_mode', `mode ${String(mode)} is not PROGRESS_SELECTIVE or PROGRESS_ALL`);
    }
    this.eventMode = mode;
  }

  /** The mode `doca_pe_set_event_mode` set (PROGRESS_SELECTIVE by default; softdpu's: DOCA has no getter). */
  getEventMode(): PeEventMode {
    return this.eventMode;
  }

  /**
   * `doca_pe_get_notification_handle`: a file descriptor (the read end of the engine's doorbell pipe)
   * that becomes readable when the engine has work after `requestNotification()`, for an addon or another
   * event loop to wait on (epoll, poll). Fixed for the engine's life; `clearNotification()` consumes what
   * made it readable. Wait on it yourself or use `run()` / `waitNotification()`, not both at once.
   */
  getNotificationHandle(): number {
    this.check('doca_pe_get_notification_handle');
    this.handleGiven = true;
    return this.doorbell().readFd;
  }

  /** `doca_pe_request_notification`: announces that the engine sleeps; fires at once if work is there. */
  requestNotification(): void {
    this.check('doca_pe_request_notification');
    if (this.armed) return;
    const bell = this.doorbell();
    this.armed = true;
    const work = bell.arm();
    if (!this.tracking) {
      // Leaving POLL: ringers skipped their bits until now, so every source is looked at once more,
      // after ARMED is visible (work published before that is seen here, work after it rings).
      this.tracking = true;
      for (const ctx of this.ctxs) ctx._pollEverySource();
    }
    if (work || this.pruneReady()) this.claimAndWake();
  }

  /** `doca_pe_clear_notification`: disarms; call it after each wake-up, then progress. */
  clearNotification(): void {
    if (!this.armed) return;
    this.armed = false;
    this.notified = false;
    // A byte a ringer wrote is drained by the loop's watch; with the handle given out and no watch, here.
    if (this.bell!.disarm() === BellState.RUNG && this.handleGiven && this.watchId < 0) this.bell!.drain();
  }

  /**
   * Waits until the armed engine is notified of work: the promise form of waiting on the notification
   * handle. Resolves 'notified' at once if it already was, 'timed-out' after `timeoutMs`; rejects on
   * abort. Call `requestNotification()` first.
   */
  waitNotification(options: WaitOptions = {}): Promise<'notified' | 'timed-out'> {
    this.check('waitNotification');
    if (!this.armed) return Promise.reject(new DocaError('BAD_STATE', 'waitNotification', 'call requestNotification() first'));
    if (this.notified) return Promise.resolve('notified');
    return boundedWait<'notified' | 'timed-out'>(options, () => 'timed-out', (resolve) => {
      const waiter = () => resolve('notified');
      this.waiters.push(waiter);
      this.keepAlive(true);
      return () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.keepAlive(this.waiters.length > 0 || this.driver?.asleep === true);
      };
    });
  }

  /**
   * Drives the engine from Node's event loop until `signal` aborts, `until()` holds, or every connected
   * context is IDLE with nothing in flight (then nothing can happen any more, and the process may exit).
   * Exceptions thrown by callbacks reject the returned promise.
   */
  run(options: RunOptions = {}): Promise<void> {
    try {
      this.check('run');
      if (this.driver) throw new DocaError('BAD_STATE', 'run', 'the progress engine is already being driven');
    } catch (err) {
      return Promise.reject(err);
    }
    const { mode = 'notify', signal, budget = 4096, until } = options;
    return new Promise<void>((resolve, reject) => {
      this.driver = new Driver(this, { mode, signal, until, budget }, resolve, reject);
      this.driver.burst();
    });
  }

  /** True when every connected context is IDLE and nothing is in flight. */
  idle(): boolean {
    for (const ctx of this.ctxs) if (ctx.getState() !== CtxState.IDLE || ctx._hasQueuedWork() || ctx.getNumInflightTasks() > 0) return false;
    return true;
  }

  /** Contexts connected to this engine. */
  get contexts(): readonly Context[] {
    return this.ctxs;
  }

  /** `doca_pe_destroy`: IN_USE while contexts are still connected (destroy them first). */
  destroy(): void {
    if (this.destroyed) return;
    if (this.ctxs.length > 0) {
      throw new DocaError('IN_USE', 'doca_pe_destroy', `${this.ctxs.length} context(s) are still connected (${this.ctxs.map((c) => c.name).join(', ')}); destroy them first`);
    }
    this.clearNotification();
    if (this.watchId >= 0) native.fdUnwatch(this.watchId);
    this.watchId = -1;
    this.bell?.close();
    this.destroyed = true;
  }

  // ---- for contexts -------------------------------------------------------------------------------

  /** @internal `ctx` has work (or may now finish stopping): look at it, and wake a sleeping engine. */
  _signal(ctx: Context): void {
    if (!ctx._queued) {
      ctx._queued = true;
      this.ready.push(ctx);
    }
    if (this.armed && !this.notified) this.claimAndWake();
  }

  /** @internal registers a source of `ctx`; returns the reference its peers ring. */
  _addSource(ctx: Context, source: WakeSource, call: string): BellRef {
    this.check(call);
    const bell = this.doorbell();
    const bit = bell.allocate(call);
    this.sources[bit] = { ctx, source };
    source._bit = bit;
    return bell.ref(bit);
  }

  /** @internal a source is gone: its bit may be reused. */
  _removeSource(source: WakeSource): void {
    const bit = source._bit;
    if (bit < 0 || this.sources[bit]?.source !== source) return;
    this.sources[bit] = undefined;
    source._bit = -1;
    this.bell?.release(bit);
  }

  /**
   * @internal true until the engine first sleeps (`requestNotification`): until then its `progress()` is
   * called by a loop, never because of a wake, and polls every source.
   */
  get _neverSlept(): boolean {
    return !this.tracking;
  }

  /** @internal true when `progress()` polls every source (no doorbell to rely on). */
  get _pollsAll(): boolean {
    return !this.tracking || this.eventMode === PeEventMode.PROGRESS_ALL;
  }

  /** @internal a destroyed context leaves its engine. */
  _detach(ctx: Context): void {
    const i = this.ctxs.indexOf(ctx);
    if (i < 0) return;
    this.ctxs.splice(i, 1);
    this.next = 0;
    for (let bit = 0; bit < this.sources.length; bit++) if (this.sources[bit]?.ctx === ctx) this._removeSource(this.sources[bit]!.source);
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** Round robin over every context, each polling all its sources (before the first sleep, or PROGRESS_ALL). */
  private progressAll(): boolean {
    if (this.tracking) this.bell!.harvest(noop); // bits are moot when everything is polled
    const n = this.ctxs.length;
    for (let i = 0; i < n; i++) {
      const index = (this.next + i) % n;
      if (this.ctxs[index]!._progressOne()) {
        this.next = (index + 1) % n;
        return true;
      }
    }
    return false;
  }

  /** Round robin over the contexts that have work or whose sources rang. */
  private progressReady(): boolean {
    this.bell!.harvest(this.onBit);
    for (let ctx = this.ready.peek(); ctx; ctx = this.ready.peek()) {
      this.ready.shift();
      if (!ctx.isDestroyed && ctx._progressOne()) {
        this.ready.push(ctx); // it may have more; the others get their turn first
        return true;
      }
      ctx._queued = false;
    }
    return false;
  }

  /** Drops contexts listed as ready that have nothing queued; true if one has something. */
  private pruneReady(): boolean {
    for (let n = this.ready.length; n > 0; n--) {
      const ctx = this.ready.shift()!;
      if (!ctx.isDestroyed && ctx._hasQueuedWork()) {
        this.ready.push(ctx);
      } else {
        ctx._queued = false;
      }
    }
    return this.ready.length > 0;
  }

  private doorbell(): Bell {
    return (this.bell ??= new Bell());
  }

  /** @internal notified since armed (pe-driver.ts). */
  get _notified(): boolean {
    return this.notified;
  }

  /** @internal the driver went to sleep on the doorbell, or woke. */
  _driverSleepChanged(): void {
    this.keepAlive(this.waiters.length > 0 || this.driver?.asleep === true);
  }

  /** @internal the run ended. */
  _driverEnded(): void {
    this.driver = undefined;
    this.keepAlive(this.waiters.length > 0);
  }

  /** Whether the doorbell's watch keeps the event loop alive: only while someone sleeps on it. */
  private keepAlive(on: boolean): void {
    if (on && this.watchId < 0) this.watchId = native.fdWatch(this.doorbell().readFd, this.onWatch);
    if (this.watchId >= 0) native.fdWatchRef(this.watchId, on);
  }

  /** The loop saw the doorbell readable (and drained it). */
  private readonly onWatch = () => {
    if (this.armed && !this.notified) this.wake(true);
  };

  /**
   * Work found by this thread while armed: take ARMED -> RUNG so that no ringer writes, and show it on
   * the handle if that was given out (a ringer that got there first wrote the pipe already).
   */
  private claimAndWake(): void {
    if (this.bell!.claim() && this.handleGiven) this.bell!.ringSelf();
    this.wake(false);
  }

  /** `direct`: from the doorbell's watch (the loop's own callback), where the driver may go on at once. */
  private wake(direct: boolean): void {
    this.notified = true;
    this.driver?.woken(direct);
    if (this.waiters.length > 0) for (const w of [...this.waiters]) w();
  }

  private check(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, 'the progress engine was destroyed');
  }
}

const noop = () => {};

/**
 * @internal whether poll number `poll` of a source takes a look that a busy loop can afford only now and
 * then (a dead claim, a connection's state, its consumer announcements): one poll in `every` (a power of
 * two) while `pe` never slept, since a busy loop's polls come nanoseconds apart; every poll once it has
 * slept, since a poll is then what a ring or a wake brought and the next may be long in coming.
 */
export function lookDue(pe: ProgressEngine | undefined, poll: number, every: number): boolean {
  return (poll & (every - 1)) === 0 || pe?._neverSlept !== true;
}
