/**
 * DOCA tasks (doca_pe.h): allocated from a per-type pool sized by `*_set_conf`, submitted, completed
 * through the success or error callback inside `ProgressEngine.progress()`, then resubmitted or freed.
 *
 * The pool recycles task objects, as DOCA's does, so that a task per message allocates nothing in steady
 * state: it makes objects as they are first needed, up to `num_tasks` (at most POOL_FRESH), and then
 * hands out the one freed longest ago. So a task used after `free()` is a clear BAD_STATE error until
 * that many other allocations have passed (DOCA C promises nothing of a freed task); after that the
 * object is another allocation's task, as a freed pointer is in C.
 */
import type { Context } from './ctx.js';
import { DocaError, type DocaErrorName } from './error.js';
import { Fifo } from './fifo.js';
import { settled } from './settled.js';

/**
 * Task objects a pool makes before it recycles (when `num_tasks` is larger): how many allocations a
 * freed task stays detectably freed for, at most. Bounds the objects a pool of a million tasks keeps.
 */
export const POOL_FRESH = 4096;

/** `doca_task_completion_cb_t`: one shape for success and error callbacks. */
export type TaskCompletionCb<T> = (task: T, taskUserData: unknown, ctxUserData: unknown) => void;

/** @internal What a `*_task_*_set_conf` call records: the callbacks and the pool size. */
export class TaskConf<T extends Task = Task> {
  /** Tasks of this type allocated and not yet freed. */
  live = 0;
  /** Task objects made so far. */
  private made = 0;
  /** Freed task objects, oldest first: what `take` recycles. */
  private readonly freed = new Fifo<T>();

  constructor(
    /** Task type name for messages, e.g. 'send'. */
    readonly type: string,
    readonly onSuccess: TaskCompletionCb<T>,
    readonly onError: TaskCompletionCb<T>,
    readonly capacity: number,
  ) {}

  /**
   * A task object for an allocation (the caller checked `live < capacity`): a new one until
   * min(capacity, POOL_FRESH) were made, then the one freed longest ago, revived as just allocated.
   */
  take(make: (conf: TaskConf<T>) => T): T {
    const task = this.made >= this.capacity || (this.made >= POOL_FRESH && this.freed.length > 0) ? this.freed.shift() : undefined;
    this.live++;
    if (task) {
      task._revive();
      return task;
    }
    this.made++;
    return make(this);
  }

  /** @internal a task was freed: it goes to the back of the queue. */
  _release(task: T): void {
    this.live--;
    this.freed.push(task);
  }
}

const ALLOCATED = 0;
const SUBMITTED = 1;
const COMPLETED = 2;
const FREED = 3;
const STATE_NAMES = ['allocated', 'submitted', 'completed', 'freed'];

/**
 * A DOCA task, `struct doca_task`: what every task type shares. A context's `*_alloc_init` call takes one
 * from the pool its `*_set_conf` call sized; `submit()` (`doca_task_submit`) hands it to the context; it
 * completes inside `ProgressEngine.progress()` through the success or the error callback, and is then
 * resubmitted or freed (`doca_task_free`). `submitAsync()` is the promise form of the same path.
 *
 * @example
 * ```ts
 * // doca_task_submit(task); ... in the completion callback: doca_task_get_status(task); doca_task_free(task)
 * const task = ctx.taskGetAllocInit();
 * task.setUserData({ started: Date.now() });
 * await task.submitAsync(); // rejects with the task's DocaError
 * console.log(task.getStatus()); // 'DOCA_SUCCESS'
 * task.free();
 * ```
 */
export abstract class Task {
  private state = ALLOCATED;
  private queued = false;
  private err: DocaError | undefined;
  private settle: ((err: DocaError | undefined) => void) | undefined;
  /** The value passed to the callbacks as `taskUserData` (`doca_task_set_user_data`). */
  userData: unknown;
  /** @internal links of the context's in-flight list */
  _prev: Task | undefined;
  /** @internal */
  _next: Task | undefined;

  protected constructor(
    private readonly context: Context,
    private readonly conf: TaskConf,
  ) {}

  /** `doca_task_get_ctx`. */
  getCtx(): Context {
    return this.context;
  }

  /** `doca_task_set_user_data`. */
  setUserData(value: unknown): void {
    this.check('doca_task_set_user_data');
    this.userData = value;
  }

  /** `doca_task_get_user_data`. */
  getUserData(): unknown {
    return this.userData;
  }

  /** `doca_task_get_status`: `'DOCA_SUCCESS'` or the failure's code, as of the last completion. */
  getStatus(): DocaErrorName {
    return this.err?.code ?? 'DOCA_SUCCESS';
  }

  /** The failure of the last completion, with its message; undefined after a success. */
  get error(): DocaError | undefined {
    return this.err;
  }

  /** True while submitted and not yet completed. */
  get inFlight(): boolean {
    return this.state === SUBMITTED;
  }

  /**
   * `doca_task_submit`: hands the task over until its callback runs. On an error (e.g. AGAIN from a
   * comch producer with no posted buffer) nothing changed and the caller still owns the task.
   */
  submit(): void {
    this.check('doca_task_submit');
    if (this.state === SUBMITTED) throw new DocaError('BAD_STATE', 'doca_task_submit', `${this.conf.type} task is already submitted`);
    this.context._submitTask(this);
  }

  /** `doca_task_try_submit`: validates, then submits (softdpu always validates on submit). */
  trySubmit(): void {
    this.submit();
  }

  /** `doca_task_free`: returns the task to its pool. Never while submitted; allowed inside callbacks. */
  free(): void {
    this.check('doca_task_free');
    if (this.state === SUBMITTED) throw new DocaError('BAD_STATE', 'doca_task_free', `${this.conf.type} task is submitted; free it in its completion callback`);
    this.state = FREED;
    this.conf._release(this);
    this.context._taskFreed();
  }

  /**
   * Promise adapter over the same path: submits, and settles inside `progress()` when the task completes
   * (resolves with the task, or rejects with its DocaError) instead of running the conf callbacks. The
   * caller owns the task again in both cases and frees or resubmits it.
   */
  submitAsync(): Promise<this> {
    return new Promise((resolve, reject) => {
      // Submit first: a refused submission (e.g. already in flight) must not take over the first
      // submission's promise. Completions run only inside progress(), so none can come in between.
      this.submit();
      this.settle = (err) => (err ? reject(err) : resolve(this));
    });
  }

  /** Throws BAD_STATE unless the task may be used (not freed). */
  protected check(call: string): void {
    if (this.state === FREED) throw new DocaError('BAD_STATE', call, `${this.conf.type} task was freed`);
  }

  /** @internal the pool hands this freed object out again: as a fresh allocation (the subclass's init follows). */
  _revive(): void {
    this.state = ALLOCATED;
    this.queued = false;
    this.err = undefined;
    this.settle = undefined;
    this.userData = undefined;
  }

  /** @internal called by the context once it accepted the submission. */
  _markSubmitted(): void {
    this.state = SUBMITTED;
    this.queued = false;
    this.err = undefined;
  }

  /** @internal called by the context when a submission was refused. */
  _unmarkSubmitted(previous: 'allocated' | 'completed'): void {
    this.state = previous === 'allocated' ? ALLOCATED : COMPLETED;
  }

  /** @internal the task type, e.g. 'send' (what fault plans select on). */
  get _type(): string {
    return this.conf.type;
  }

  /** @internal the state before a submission, to restore it if the submission is refused. */
  get _stateName(): string {
    return STATE_NAMES[this.state]!;
  }

  /** @internal queues the completion once; false if it was already queued or not in flight. */
  _queueCompletion(err: DocaError | undefined): boolean {
    if (this.state !== SUBMITTED || this.queued) return false;
    this.queued = true;
    this.err = err;
    return true;
  }

  /** @internal runs the callback (or settles the promise); the task is the user's again. */
  _dispatch(ctxUserData: unknown): void {
    this.state = COMPLETED;
    this.queued = false;
    const settle = this.settle;
    if (settle) {
      this.settle = undefined;
      settled.any = true;
      settle(this.err);
    } else {
      (this.err ? this.conf.onError : this.conf.onSuccess)(this, this.userData, ctxUserData);
    }
  }

  /**
   * @internal performs the submission: queue the work or complete at once. Throws to refuse it (the task
   * is then unchanged).
   */
  abstract _execute(): void;
}
