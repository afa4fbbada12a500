/**
 * The DOCA context state machine (doca_ctx.h), shared by every context: IDLE -> (STARTING ->) RUNNING ->
 * (STOPPING ->) IDLE. Configuration only while IDLE; tasks only while RUNNING.
 *
 * Transitions made by `start()` and `stop()` themselves call the state-changed callback before they
 * return (as DOCA does); asynchronous ones (STARTING -> RUNNING, STOPPING -> IDLE) happen inside
 * `ProgressEngine.progress()`. Stopping flushes every in-flight task through its error callback with
 * DOCA_ERROR_SHUTDOWN (or the fatal error that stopped the context), and the context stays STOPPING
 * until every allocated task has been freed.
 */
import type { BellRef } from '../fabric/doorbell.js';
import { active as faultsActive, faultAtStart, faultAtSubmit } from '../fabric/faults/index.js';
import { detachedRecord, type StatRecord } from '../fabric/stats.js';
import { DocaError, describeValue } from './error.js';
import { Fifo } from './fifo.js';
import { sdkLogSource } from './log.js';
import type { ProgressEngine } from './pe.js';
import { Task, TaskConf, type TaskCompletionCb } from './task.js';
import { boundedWait, type WaitOptions } from './wait.js';

/** `enum doca_ctx_states`. */
export const CtxState = { IDLE: 0, STARTING: 1, RUNNING: 2, STOPPING: 3 } as const;
export type CtxState = (typeof CtxState)[keyof typeof CtxState];
const NAMES = ['IDLE', 'STARTING', 'RUNNING', 'STOPPING'] as const;
/** A state's name, as `ctx.state` gives it: `'IDLE'`, `'STARTING'`, `'RUNNING'` or `'STOPPING'`. */
export type CtxStateName = keyof typeof CtxState;

/** The name of a state, e.g. `'RUNNING'`. */
export function ctxStateName(state: CtxState): CtxStateName {
  return NAMES[state];
}

/** `doca_ctx_state_changed_callback_t`: runs with the context already in `nextState`. */
export type CtxStateChangedCb = (userData: unknown, ctx: Context, prevState: CtxState, nextState: CtxState) => void;

/** What `start()` and `stop()` return when they do not throw. */
export type CtxStartStopResult = 'DOCA_SUCCESS' | 'DOCA_ERROR_IN_PROGRESS';

/**
 * @internal Something in shared memory that peers change and then ring the engine's doorbell for (a
 * connection's queues, a consumer's queue, an event waited on); its context looks at it when it rang, or
 * on every call while the engine polls everything (fabric/doorbell.ts).
 */
export interface WakeSource {
  /** @internal the engine's bit for it, -1 while not registered. */
  _bit: number;
  /** @internal queued in its context's ready list. */
  _ready: boolean;
  /** @internal Looks at shared memory and queues work on its context; true when it stopped early and must look again. */
  _pollSource(): boolean;
}

const log = sdkLogSource('doca_ctx');

/** Work the context hands to `progress()`: a completed task or an event or transition to run. */
type Work = Task | (() => void);

interface StateWaiter {
  target: CtxState;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * A DOCA context, `struct doca_ctx`: what every context shares (comch server, client, producer and
 * consumer, sync event context, the DPA-side comch objects). DOCA reaches it through `*_as_ctx()`; here
 * the object is the context. IDLE -> (STARTING ->) RUNNING -> (STOPPING ->) IDLE; configuration only
 * while IDLE, tasks only while RUNNING. Transitions that `start()` and `stop()` make call the state
 * callback before they return; the asynchronous ones happen inside `ProgressEngine.progress()`.
 *
 * @example
 * ```ts
 * // doca_ctx_set_state_changed_cb(ctx, cb); doca_ctx_start(ctx); ... doca_ctx_stop(ctx)
 * server.setStateChangedCb((userData, ctx, prev, next) => console.log(ctxStateName(next)));
 * server.start(); // 'DOCA_SUCCESS': RUNNING already
 * await server.waitForState('RUNNING', { timeoutMs: 5_000 });
 * await server.stopAndWait(); // stop(), then progress until IDLE
 * ```
 */
export abstract class Context {
  private st: CtxState = CtxState.IDLE;
  private engine: ProgressEngine | undefined;
  private stateCb: CtxStateChangedCb | undefined;
  private userDataValue: unknown;
  private readonly work = new Fifo<Work>();
  /** In-flight tasks in submission order (an intrusive list: no allocation per task). */
  private inflightHead: Task | undefined;
  private inflightTail: Task | undefined;
  private inflight = 0;
  private readonly confs = new Map<string, TaskConf>();
  private stopError: DocaError | undefined;
  private stateWaiters: StateWaiter[] = [];
  private destroyed = false;
  private leakReported = false;
  /** What observers of the fabric see of this context (fabric/stats.ts); subclasses make a real one. */
  protected stat: StatRecord = detachedRecord();
  private readonly sourceList = new Set<WakeSource>();
  /** The same sources as an array, replaced (never mutated) when one comes or goes: polled by index, no iterator per poll. */
  private sourceArray: readonly WakeSource[] = [];
  private readonly readySources = new Fifo<WakeSource>();
  /** @internal in its engine's ready list. */
  _queued = false;

  /**
   * @param name what messages call this context, e.g. 'doca_comch_server'.
   * @param confErrorCode DOCA's code for configuration after start: BAD_STATE for most libraries,
   * NOT_PERMITTED for sync event task configuration.
   */
  protected constructor(
    readonly name: string,
    private readonly confErrorCode: 'BAD_STATE' | 'NOT_PERMITTED' = 'BAD_STATE',
  ) {}

  // ---- doca_ctx API -------------------------------------------------------------------------------

  /** `doca_ctx_start`: `'DOCA_SUCCESS'` when RUNNING at once, `'DOCA_ERROR_IN_PROGRESS'` when STARTING. */
  start(): CtxStartStopResult {
    this.checkAlive('doca_ctx_start');
    if (this.st !== CtxState.IDLE) throw new DocaError('BAD_STATE', 'doca_ctx_start', `${this.name} is ${ctxStateName(this.st)}, not IDLE`);
    if (!this.engine) throw new DocaError('NOT_CONNECTED', 'doca_ctx_start', `${this.name} is not connected to a progress engine`);
    this.stopError = undefined;
    if (faultsActive) faultAtStart(this.name, this); // an injected DRIVER leaves the context IDLE
    const running = this._doStart();
    this.setState(running ? CtxState.RUNNING : CtxState.STARTING);
    this.engine._signal(this); // a sleeping driver has a context to progress
    return running ? 'DOCA_SUCCESS' : 'DOCA_ERROR_IN_PROGRESS';
  }

  /**
   * `doca_ctx_stop`: flushes in-flight tasks and tears down. `'DOCA_SUCCESS'` when IDLE at once,
   * `'DOCA_ERROR_IN_PROGRESS'` when STOPPING (keep progressing until the callback reports IDLE).
   */
  stop(): CtxStartStopResult {
    this.checkAlive('doca_ctx_stop');
    if (this.st === CtxState.IDLE) throw new DocaError('BAD_STATE', 'doca_ctx_stop', `${this.name} is already IDLE`);
    if (this.st === CtxState.STOPPING) return 'DOCA_ERROR_IN_PROGRESS';
    this.beginStop(new DocaError('SHUTDOWN', 'doca_ctx_stop', `${this.name} was stopped`), true);
    this.engine?._signal(this);
    return this.getState() === CtxState.IDLE ? 'DOCA_SUCCESS' : 'DOCA_ERROR_IN_PROGRESS';
  }

  /** `doca_ctx_get_state`. */
  getState(): CtxState {
    return this.st;
  }

  get state(): CtxStateName {
    return NAMES[this.st];
  }

  /** `doca_ctx_set_state_changed_cb`. */
  setStateChangedCb(cb: CtxStateChangedCb | undefined): void {
    this.stateCb = cb;
  }

  /** `doca_ctx_set_user_data`: passed to the state callback and every task callback. */
  setUserData(value: unknown): void {
    this.userDataValue = value;
  }

  /** @internal this context's introspection record (its children hang below it). */
  get _stat(): StatRecord {
    return this.stat;
  }

  /** `doca_ctx_get_user_data`. */
  getUserData(): unknown {
    return this.userDataValue;
  }

  /** `doca_ctx_get_num_inflight_tasks`: submitted and not yet completed. */
  getNumInflightTasks(): number {
    return this.inflight;
  }

  /** The progress engine this context is connected to (`doca_pe_connect_ctx`). */
  get pe(): ProgressEngine | undefined {
    return this.engine;
  }

  /**
   * Resolves when the context reaches `target`; rejects if it becomes IDLE first (a start that failed),
   * on timeout (TIME_OUT) or on abort. State changes happen inside `progress()`, so keep progressing
   * (e.g. with `pe.run()`).
   */
  waitForState(target: CtxStateName, options: WaitOptions = {}): Promise<void> {
    const wanted = Object.hasOwn(CtxState, target) ? CtxState[target] : undefined;
    if (wanted === undefined) return Promise.reject(new DocaError('INVALID_VALUE', 'waitForState', `${describeValue(target)} is not a state (IDLE, STARTING, RUNNING, STOPPING)`));
    if (this.st === wanted) return Promise.resolve();
    if (this.destroyed) return Promise.reject(new DocaError('BAD_STATE', 'waitForState', `${this.name} was destroyed; it stays IDLE`));
    return boundedWait<void>(
      options,
      () => new DocaError('TIME_OUT', 'waitForState', `${this.name} did not reach ${target} within ${options.timeoutMs} ms (state ${this.state}${this.st === CtxState.STOPPING ? `: ${this.stopBlocker()}` : ''})`),
      (resolve, reject) => {
        const waiter: StateWaiter = { target: wanted, resolve: () => resolve(undefined), reject };
        this.stateWaiters.push(waiter);
        return () => (this.stateWaiters = this.stateWaiters.filter((w) => w !== waiter));
      },
    );
  }

  /**
   * Stops (if not IDLE) and resolves once IDLE, progressing the engine itself between turns of the event
   * loop (harmless next to a running `pe.run()`). Rejects with TIME_OUT after `timeoutMs` (default 10 s);
   * a context still STOPPING then says why in the message: tasks still in flight, or tasks that were
   * handed back (flushed) and never freed, by type and count ("2 post_recv task(s) allocated and never
   * freed; free them (doca_task_free) to let it reach IDLE"). The same words go to the SDK log at WARNING
   * once, when a STOPPING context has nothing left to flush but tasks still allocated, and still has them
   * after a turn of the event loop (a promise adapter frees its task in a continuation).
   */
  async stopAndWait(options: WaitOptions = {}): Promise<void> {
    if (this.st === CtxState.IDLE) return;
    // Stop first: a refused stop (IN_USE) rejects here and leaves no waiter or timer behind.
    if (this.st !== CtxState.STOPPING) this.stop();
    const idle = this.waitForState('IDLE', { ...options, timeoutMs: options.timeoutMs ?? 10_000 });
    let settled = false;
    idle.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Progress in bursts, turning the event loop in between so timers and sockets are served.
    while (!settled && this.engine) {
      for (let n = 0; n < 4096 && this.engine.progress(); n++);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await idle;
  }

  /** `doca_<library>_destroy`: only while IDLE (IN_USE otherwise). */
  abstract destroy(): void;

  /** `await using ctx = ...`: stops, waits for IDLE, destroys. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.destroyed) return;
    await this.stopAndWait();
    this.destroy();
  }

  // ---- for progress engines -----------------------------------------------------------------------

  /** @internal `doca_pe_connect_ctx`. */
  _connect(pe: ProgressEngine): void {
    this.checkAlive('doca_pe_connect_ctx');
    if (this.engine) throw new DocaError('NOT_PERMITTED', 'doca_pe_connect_ctx', `${this.name} is already connected to a progress engine`);
    if (this.st !== CtxState.IDLE) throw new DocaError('BAD_STATE', 'doca_pe_connect_ctx', `${this.name} is ${this.state}, not IDLE`);
    this.engine = pe;
  }

  /** @internal runs at most one unit of work: a transition, a completion or an event. */
  _progressOne(): boolean {
    let item = this.work.shift();
    if (item === undefined) {
      this.pollSources();
      item = this.work.shift();
    }
    if (item !== undefined) {
      if (item instanceof Task) this.dispatch(item);
      else item();
      return true;
    }
    if (this.canFinishStop()) {
      this.finishStop();
      return true;
    }
    if (!this.leakReported && this.leaking()) {
      // Every flushed completion was handed back, yet tasks remain allocated: only the program can free
      // them. A task a promise got back (submitAsync) is freed by its continuation, which runs after this
      // synchronous burst of progress: look again once the event loop has turned.
      this.leakReported = true;
      setImmediate(this.reportLeak).unref();
    }
    return false;
  }

  /** The leak warning, if the tasks are still allocated (see _progressOne). */
  private readonly reportLeak = (): void => {
    if (this.leaking()) log.warn(`${this.name} stays STOPPING: ${this.stopBlocker()}`);
  };

  /** STOPPING with nothing in flight, yet tasks allocated: only the program can free them. */
  private leaking(): boolean {
    return this.st === CtxState.STOPPING && this.inflight === 0 && this.liveTasks() > 0;
  }

  /** What keeps a STOPPING context from IDLE, in words (for the log and for timeouts). */
  private stopBlocker(): string {
    if (this.inflight > 0) return `${this.inflight} task(s) still in flight`;
    const leaked = [...this.confs.values()].filter((c) => c.live > 0).map((c) => `${c.live} ${c.type} task(s)`);
    if (leaked.length > 0) return `${leaked.join(' and ')} allocated and never freed; free them (doca_task_free) to let it reach IDLE`;
    return 'its teardown has not finished';
  }

  /** @internal true when `progress()` would find work right now without polling shared memory. */
  _hasQueuedWork(): boolean {
    return this.work.length > 0 || this.readySources.length > 0 || this.canFinishStop();
  }

  /** @internal looks at every source once (queueing what they hold; nothing runs): the engine's first sleep. */
  _pollEverySource(): void {
    const sources = this.sourceArray;
    for (let i = 0; i < sources.length; i++) if (sources[i]!._pollSource()) this._sourceReady(sources[i]!);
  }

  /** @internal a source of this context rang (or has work): look at it in the next `progress()`. */
  _sourceReady(source: WakeSource): void {
    if (!source._ready) {
      source._ready = true;
      this.readySources.push(source);
    }
    this.engine?._signal(this);
  }

  // ---- for subclasses -----------------------------------------------------------------------------

  /** Starts the context's resources; true when RUNNING at once, false when STARTING. Throw to refuse. */
  protected abstract _doStart(): boolean;

  /** Begins teardown; in-flight tasks are flushed right after (but those `_holdsOnStop` keeps). */
  protected _doStop(): void {}

  /** True for an in-flight task the stop must not flush yet (its result is on its way); it completes later. */
  protected _holdsOnStop(task: Task): boolean {
    void task;
    return false;
  }

  /** False while an asynchronous teardown (a disconnect handshake) is still running. */
  protected _stopComplete(): boolean {
    return true;
  }

  /** Called once IDLE is reached, to release what the run used. */
  protected _onIdle(): void {}

  /**
   * Registers a source with the engine and looks at it once now; peers ring the returned reference when
   * they change it. The engine must be connected (NOT_CONNECTED otherwise).
   */
  protected addSource(source: WakeSource, call: string): BellRef {
    if (!this.engine) throw new DocaError('NOT_CONNECTED', call, `${this.name} is not connected to a progress engine`);
    const ref = this.engine._addSource(this, source, call);
    this.sourceList.add(source);
    this.sourceArray = [...this.sourceList];
    this._sourceReady(source);
    return ref;
  }

  /** Forgets a source (it will not be looked at again; a ring still in flight is dropped). */
  protected removeSource(source: WakeSource): void {
    if (!this.sourceList.delete(source)) return;
    this.sourceArray = [...this.sourceList];
    this.engine?._removeSource(source);
  }

  /** Throws the configuration error (BAD_STATE or NOT_PERMITTED) unless IDLE. */
  protected requireIdle(call: string): void {
    this.checkAlive(call);
    if (this.st !== CtxState.IDLE) {
      throw new DocaError(this.confErrorCode, call, `${this.name} is ${this.state}; configuration is allowed only while IDLE`);
    }
  }

  /** Throws BAD_STATE unless RUNNING. */
  protected requireRunning(call: string): void {
    this.checkAlive(call);
    if (this.st !== CtxState.RUNNING) throw new DocaError('BAD_STATE', call, `${this.name} is ${this.state}, not RUNNING`);
  }

  /** Records a `*_task_*_set_conf` (IDLE only). */
  protected setTaskConf<T extends Task>(call: string, type: string, onSuccess: TaskCompletionCb<T>, onError: TaskCompletionCb<T>, numTasks: number, max: number): void {
    this.requireIdle(call);
    if (typeof onSuccess !== 'function' || typeof onError !== 'function') {
      throw new DocaError('INVALID_VALUE', call, `the success and error callbacks must be functions (got ${describeValue(onSuccess)} and ${describeValue(onError)})`);
    }
    if (!Number.isInteger(numTasks) || numTasks < 1 || numTasks > max) {
      throw new DocaError('INVALID_VALUE', call, `num_tasks ${numTasks} is not an integer in [1, ${max}]`);
    }
    this.confs.set(type, new TaskConf(type, onSuccess as TaskCompletionCb<Task>, onError as TaskCompletionCb<Task>, numTasks));
  }

  /** The recorded conf of a task type, if any. */
  protected taskConf(type: string): TaskConf | undefined {
    return this.confs.get(type);
  }

  /**
   * Takes a task from its type's pool (`*_alloc_init`): NO_MEMORY when exhausted or not configured. The
   * task may be a recycled object (TaskConf.take): the caller initializes every field of its type.
   * `make` makes a new object when the pool needs one: a function the context keeps, not a closure per call.
   */
  protected allocTask<T extends Task>(call: string, type: string, make: (conf: TaskConf) => T): T {
    this.requireRunning(call);
    const conf = this.confs.get(type);
    if (!conf) throw new DocaError('NO_MEMORY', call, `no ${type} tasks were configured before start`);
    if (conf.live >= conf.capacity) throw new DocaError('NO_MEMORY', call, `all ${conf.capacity} ${type} tasks are allocated`);
    return conf.take(make) as T;
  }

  /** Queues a task's completion for `progress()`; `err` undefined means success. */
  protected completeTask(task: Task, err?: DocaError): void {
    if (task._queueCompletion(err)) this.enqueue(task);
  }

  /** Queues an event or transition callback for `progress()`. */
  protected queueEvent(fn: () => void): void {
    this.enqueue(fn);
  }

  /** An asynchronous start finished: STARTING -> RUNNING inside the next `progress()`. */
  protected startCompleted(): void {
    this.enqueue(() => {
      if (this.st === CtxState.STARTING) this.setState(CtxState.RUNNING);
    });
  }

  /**
   * A fatal error (e.g. the peer died): the context moves to STOPPING inside `progress()` (always through
   * STOPPING, as DOCA describes), its in-flight tasks fail with `err`, and it reaches IDLE in a later one.
   */
  protected fail(err: DocaError): void {
    this.enqueue(() => {
      if (this.st === CtxState.STARTING || this.st === CtxState.RUNNING) this.beginStop(err, false);
    });
  }

  /** The error tasks are flushed with while stopping. */
  protected get flushError(): DocaError | undefined {
    return this.stopError;
  }

  /** Subclasses' destroy: only while IDLE (IN_USE otherwise); detaches from the engine. */
  protected destroyContext(call: string): void {
    this.checkAlive(call);
    if (this.st !== CtxState.IDLE) throw new DocaError('IN_USE', call, `${this.name} is ${this.state}; stop it and wait for IDLE first`);
    this.engine?._detach(this);
    this.engine = undefined;
    this.destroyed = true;
    this.stat.release();
  }

  get isDestroyed(): boolean {
    return this.destroyed;
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** @internal Task.submit lands here. */
  _submitTask(task: Task): void {
    this.requireRunning('doca_task_submit');
    if (faultsActive) faultAtSubmit(this.name, task._type, this); // an injected AGAIN leaves the task untouched
    const previous = task._stateName as 'allocated' | 'completed';
    task._markSubmitted();
    this.link(task);
    // finally, not catch-and-rethrow: a rethrow allocates (40 B in V8 11), and a retry loop meets AGAIN often.
    let accepted = false;
    try {
      task._execute();
      accepted = true;
    } finally {
      if (!accepted) {
        this.unlink(task);
        task._unmarkSubmitted(previous);
      }
    }
  }

  /** @internal a task was freed: a STOPPING context may now reach IDLE. */
  _taskFreed(): void {
    if (this.st === CtxState.STOPPING) this.engine?._signal(this);
  }

  private liveTasks(): number {
    let n = 0;
    for (const conf of this.confs.values()) n += conf.live;
    return n;
  }

  private enqueue(item: Work): void {
    this.work.push(item);
    this.engine?._signal(this);
  }

  /** Looks at the sources that rang (or at all of them while the engine polls everything) until one queues work. */
  private pollSources(): void {
    if (this.engine?._pollsAll) {
      const sources = this.sourceArray;
      for (let i = 0; i < sources.length; i++) sources[i]!._pollSource();
      for (let s = this.readySources.shift(); s; s = this.readySources.shift()) s._ready = false;
      return;
    }
    for (let n = this.readySources.length; n > 0 && this.work.length === 0; n--) {
      const source = this.readySources.shift()!;
      source._ready = false;
      if (this.sourceList.has(source) && source._pollSource()) {
        source._ready = true;
        this.readySources.push(source);
      }
    }
  }

  private canFinishStop(): boolean {
    return this.st === CtxState.STOPPING && this.inflight === 0 && this.liveTasks() === 0 && this._stopComplete();
  }

  private dispatch(task: Task): void {
    this.unlink(task);
    task._dispatch(this.userDataValue);
  }

  private link(task: Task): void {
    task._next = undefined;
    task._prev = this.inflightTail;
    if (this.inflightTail) this.inflightTail._next = task;
    else this.inflightHead = task;
    this.inflightTail = task;
    this.inflight++;
  }

  private unlink(task: Task): void {
    if (task._prev) task._prev._next = task._next;
    else this.inflightHead = task._next;
    if (task._next) task._next._prev = task._prev;
    else this.inflightTail = task._prev;
    task._prev = task._next = undefined;
    this.inflight--;
  }

  /** Enters STOPPING and flushes; a `stop()` with nothing left to wait for goes straight to IDLE. */
  private beginStop(err: DocaError, direct: boolean): void {
    const prev = this.st;
    this.st = CtxState.STOPPING;
    this.stopError = err;
    this.leakReported = false;
    this._doStop();
    for (let t = this.inflightHead; t; t = t._next) if (!this._holdsOnStop(t)) this.completeTask(t, err);
    if (direct && this.work.length === 0 && this.canFinishStop()) {
      this.st = prev;
      this.finishStop();
    } else {
      this.notifyState(prev, CtxState.STOPPING);
    }
  }

  private finishStop(): void {
    this.setState(CtxState.IDLE);
    this._onIdle();
  }

  private setState(next: CtxState): void {
    const prev = this.st;
    this.st = next;
    this.notifyState(prev, next);
  }

  private notifyState(prev: CtxState, next: CtxState): void {
    this.stat.setState(next);
    for (const w of [...this.stateWaiters]) {
      if (w.target === next) w.resolve();
      else if (next === CtxState.IDLE) {
        w.reject(this.stopError ?? new DocaError('BAD_STATE', 'waitForState', `${this.name} became IDLE before reaching ${NAMES[w.target]}`));
      }
    }
    this.stateCb?.(this.userDataValue, this, prev, next);
  }

  private checkAlive(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, `${this.name} was destroyed`);
  }
}
