/**
 * The progress engine (doca_pe.h): contexts are connected to it, and `progress()` is the only place where
 * callbacks run and state changes. It never blocks.
 *
 * DOCA's event handle is modelled by `requestNotification()` / `waitNotification()` /
 * `clearNotification()`: a program arms the engine, sleeps until a context has work (a peer's doorbell,
 * a socket event, a local completion), clears, and progresses. `run()` is a driver that does this from
 * Node's event loop, in busy or notify mode, until an AbortSignal, a predicate, or until every context
 * is IDLE (so the process can exit).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Context } from './ctx.js';
import { CtxState } from './ctx.js';
import { DocaError } from './error.js';
import { boundedWait, type WaitOptions } from './wait.js';

/** `enum doca_pe_event_mode`. */
export const PeEventMode = { PROGRESS_SELECTIVE: 0, PROGRESS_ALL: 1 } as const;
export type PeEventMode = (typeof PeEventMode)[keyof typeof PeEventMode];

/** How long a busy driver spins without work before it lets the event loop run. */
const BUSY_SPIN_MS = 1;

export interface RunOptions {
  /**
   * 'notify' (default) sleeps between bursts of work; 'busy' polls continuously (burns a core), yielding
   * to the event loop only after `budget` calls or about a millisecond without work.
   */
  mode?: 'busy' | 'notify';
  /** Stops the driver (it resolves). */
  signal?: AbortSignal;
  /**
   * Stops the driver once this returns true, checked after each burst of progress. Without it the driver
   * stops when every context is IDLE; with it, it keeps going (sleeping in notify mode) until it holds.
   * A condition that changes outside the engine's callbacks will not wake a sleeping driver: use `signal`.
   */
  until?: () => boolean;
  /** Progress calls between turns of the event loop (default 4096). */
  budget?: number;
}

export class ProgressEngine {
  private readonly ctxs: Context[] = [];
  private next = 0;
  private inCallback = false;
  private armed = false;
  private notified = false;
  private waiters: (() => void)[] = [];
  private destroyed = false;
  private driving = false;
  private wakeDriver: (() => void) | undefined;
  private readonly notify = () => this._signal();
  private eventMode: PeEventMode = PeEventMode.PROGRESS_SELECTIVE;

  /** `doca_pe_create`. */
  static create(): ProgressEngine {
    return new ProgressEngine();
  }

  /** `doca_pe_connect_ctx`: the binding lasts until the context is destroyed. */
  connectCtx(ctx: Context): void {
    this.check('doca_pe_connect_ctx');
    ctx._connect(this);
    this.ctxs.push(ctx);
    this._signal(); // a sleeping driver has a new context to progress
  }

  /**
   * `doca_pe_progress`: runs at most one unit of work (a task completion, an event, or a context's
   * STARTING -> RUNNING / STOPPING -> IDLE transition) and returns whether it did. Never blocks.
   * Refused (NOT_PERMITTED) when called from inside a callback.
   */
  progress(): boolean {
    if (this.inCallback) throw new DocaError('NOT_PERMITTED', 'doca_pe_progress', 'called from inside a callback of the same progress engine');
    const n = this.ctxs.length;
    if (n === 0) return false;
    this.inCallback = true;
    try {
      for (let i = 0; i < n; i++) {
        const index = (this.next + i) % n;
        if (this.ctxs[index]!._progressOne()) {
          this.next = (index + 1) % n;
          return true;
        }
      }
      return false;
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
   * `doca_pe_set_event_mode`. Both modes progress every connected context on each call (SELECTIVE is a
   * hardware optimisation that softdpu does not need); the mode is recorded for parity. Refused from a
   * callback.
   */
  setEventMode(mode: PeEventMode): void {
    this.check('doca_pe_set_event_mode');
    if (this.inCallback) throw new DocaError('NOT_PERMITTED', 'doca_pe_set_event_mode', 'called from inside a callback');
    if (mode !== PeEventMode.PROGRESS_ALL && mode !== PeEventMode.PROGRESS_SELECTIVE) {
      throw new DocaError('INVALID_VALUE', 'doca_pe_set_event_mode', `mode ${String(mode)} is not PROGRESS_SELECTIVE or PROGRESS_ALL`);
    }
    this.eventMode = mode;
  }

  getEventMode(): PeEventMode {
    return this.eventMode;
  }

  /** `doca_pe_request_notification`: arms every context's wake-up sources. */
  requestNotification(): void {
    this.check('doca_pe_request_notification');
    if (this.armed) return;
    this.armed = true;
    for (const ctx of this.ctxs) if (ctx._arm(this.notify)) this.fire();
  }

  /** `doca_pe_clear_notification`: disarms; call it after each wake-up, then progress. */
  clearNotification(): void {
    if (!this.armed) return;
    this.armed = false;
    this.notified = false;
    for (const ctx of this.ctxs) ctx._disarm();
  }

  /**
   * Waits until the armed engine is notified of work: the Node form of waiting on DOCA's notification
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
      return () => (this.waiters = this.waiters.filter((w) => w !== waiter));
    });
  }

  /**
   * Drives the engine from Node's event loop until `signal` aborts, `until()` holds, or every connected
   * context is IDLE with nothing in flight (then nothing can happen any more, and the process may exit).
   * Exceptions thrown by callbacks reject the returned promise.
   */
  async run(options: RunOptions = {}): Promise<void> {
    this.check('run');
    if (this.driving) throw new DocaError('BAD_STATE', 'run', 'the progress engine is already being driven');
    const { mode = 'notify', signal, budget = 4096 } = options;
    this.driving = true;
    const onAbort = () => this.wakeDriver?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal?.aborted) {
        let n = 0;
        if (mode === 'busy') {
          // Spin without leaving the event-loop turn: a busy poller reacts in well under a microsecond.
          // After work, a short idle stretch ends the spin so that promise continuations can run.
          const until = performance.now() + BUSY_SPIN_MS;
          for (let idle = 0; n < budget; ) {
            if (this.progress()) n++;
            else if ((++idle & 255) === 0 && (n > 0 || performance.now() > until || this.done(options))) break;
          }
        } else {
          while (n < budget && this.progress()) n++;
        }
        if (this.done(options)) return;
        // Callbacks may have settled promises (submitAsync, waitForState, iterators) whose continuations
        // are what `until` waits for: let them run before deciding to sleep.
        if (n > 0 && mode === 'notify') {
          await yieldToLoop();
          if (this.done(options)) return;
        }
        if (mode === 'busy' || n === budget) {
          await yieldToLoop();
          continue;
        }
        this.requestNotification();
        // One bare promise per sleep: this is the wake-up path of every notify-mode program.
        if (!this.notified && !signal?.aborted) await new Promise<void>((resolve) => (this.wakeDriver = resolve));
        // Notified at once after a burst that did nothing: let the event loop turn rather than spin on it.
        else if (n === 0) await yieldToLoop();
        this.wakeDriver = undefined;
        this.clearNotification();
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.driving = false;
    }
  }

  private done(options: RunOptions): boolean {
    return options.until ? options.until() : this.idle();
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
    this.destroyed = true;
  }

  /** @internal a context queued work (or may now finish stopping). */
  _signal(): void {
    if (this.armed) this.fire();
  }

  /** @internal a destroyed context leaves its engine (and its wake-up sources, if armed). */
  _detach(ctx: Context): void {
    const i = this.ctxs.indexOf(ctx);
    if (i < 0) return;
    if (this.armed) ctx._disarm();
    this.ctxs.splice(i, 1);
    this.next = 0;
  }

  private fire(): void {
    this.notified = true;
    this.wakeDriver?.();
    if (this.waiters.length > 0) for (const w of [...this.waiters]) w();
  }

  private check(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, 'the progress engine was destroyed');
  }
}
