/**
 * A sync event as a context (`doca_sync_event_as_ctx`): the asynchronous tasks on a progress engine.
 * Wait tasks complete inside `progress()` once their condition holds. While waits are pending the context
 * is listed in the event's waiter table (layout.ts) with its engine's bell, so an update rings it and a
 * sleeping process burns no CPU. Task configuration after start is NOT_PERMITTED, as in DOCA.
 */
import { Context, CtxState, type WakeSource } from '../core/ctx.js';
import { DocaError } from '../core/error.js';
import type { Task, TaskCompletionCb, TaskConf } from '../core/task.js';
import type { BellRef } from '../fabric/doorbell.js';
import type { StatRecord } from '../fabric/stats.js';
import { Counter } from '../fabric/stats.js';
import { watchProcess } from '../fabric/liveness.js';
import type { Devinfo } from '../core/devinfo.js';
import {
  syncEventCapTaskGetIsSupported,
  syncEventCapTaskNotifyAddIsSupported,
  syncEventCapTaskNotifySetIsSupported,
  syncEventCapTaskWaitEqIsSupported,
  syncEventCapTaskWaitNeqIsSupported,
} from './caps.js';
import { Condition, toU64 } from './condition.js';
import { WAITER_CAPACITY } from './layout.js';
import type { SyncEvent } from './sync-event.js';
import { SyncEventTaskGet, SyncEventTaskNotifyAdd, SyncEventTaskNotifySet, type SyncEventTaskWait, SyncEventTaskWaitEq, SyncEventTaskWaitNeq } from './tasks.js';

/** Its counters' indices, by name (plain constants: a busy path indexes with them as with literals). */
const { WAITERS } = Counter.SYNC_EVENT;

/** `doca_sync_event_cap_task_*_is_supported`, by task type: checked when the task is configured. */
const TASK_CAPS: Record<string, (d: Devinfo) => boolean> = {
  get: syncEventCapTaskGetIsSupported,
  notify_set: syncEventCapTaskNotifySetIsSupported,
  notify_add: syncEventCapTaskNotifyAddIsSupported,
  wait_eq: syncEventCapTaskWaitEqIsSupported,
  wait_neq: syncEventCapTaskWaitNeqIsSupported,
};

/** Task pools may hold up to this many tasks of each kind. */
const MAX_TASKS = 1 << 16;

/**
 * A sync event as a context (`doca_sync_event_as_ctx`): its asynchronous tasks (get, notify set and add,
 * wait eq and neq) on a progress engine. Wait tasks complete inside `progress()` once their condition
 * holds; a sleeping engine is rung by the update that makes it hold.
 *
 * @example
 * ```ts
 * // doca_sync_event_as_ctx(se, &ctx); doca_pe_connect_ctx(pe, ctx); doca_sync_event_task_wait_eq_alloc_init(se, 1, UINT64_MAX, ...)
 * const ctx = event.asCtx();
 * pe.connectCtx(ctx);
 * ctx.taskWaitEqSetConf(() => {}, () => {}, 4);
 * ctx.start();
 * const wait = ctx.taskWaitEqAllocInit(1n, 0xffff_ffff_ffff_ffffn);
 * await wait.submitAsync(); // resolves once the value is 1 (keep pe progressing)
 * wait.free();
 * ```
 */
export class SyncEventContext extends Context implements WakeSource {
  /** The pending waits: the first `pending` (the rest cleared, so that the array never shrinks and grows again). */
  private readonly waits: (SyncEventTaskWait | undefined)[] = [];
  private pending = 0;
  /** An allocation's wait value and mask, checked before a task is taken from its pool. */
  private readonly args = new Condition();
  /** What each task pool calls for a new object (functions made once, not a closure per allocation). */
  private readonly make = {
    get: (conf: TaskConf) => new SyncEventTaskGet(this, conf),
    notifySet: (conf: TaskConf) => new SyncEventTaskNotifySet(this, conf),
    notifyAdd: (conf: TaskConf) => new SyncEventTaskNotifyAdd(this, conf),
    waitEq: (conf: TaskConf) => new SyncEventTaskWaitEq(this, conf),
    waitNeq: (conf: TaskConf) => new SyncEventTaskWaitNeq(this, conf),
  };
  private bellRef: BellRef | undefined;
  /** The bell a first wait registers with the waiter table (a function made once). */
  private readonly bell = (): BellRef => (this.bellRef ??= this.addSource(this, 'doca_task_submit'));
  private unwatchExporter: () => void = () => {};
  /** @internal */
  _bit = -1;
  /** @internal */
  _ready = false;

  /** @internal use `event.asCtx()`. */
  constructor(readonly event: SyncEvent) {
    super('doca_sync_event', 'NOT_PERMITTED');
  }

  /** Destroys the event (`doca_sync_event_destroy`). */
  destroy(): void {
    this.event.destroy();
  }

  /** `doca_sync_event_task_get_set_conf`. */
  taskGetSetConf(onSuccess: TaskCompletionCb<SyncEventTaskGet>, onError: TaskCompletionCb<SyncEventTaskGet>, numTasks: number): void {
    this.conf('doca_sync_event_task_get_set_conf', 'get', onSuccess, onError, numTasks);
  }

  /** `doca_sync_event_task_notify_set_set_conf`. */
  taskNotifySetSetConf(onSuccess: TaskCompletionCb<SyncEventTaskNotifySet>, onError: TaskCompletionCb<SyncEventTaskNotifySet>, numTasks: number): void {
    this.conf('doca_sync_event_task_notify_set_set_conf', 'notify_set', onSuccess, onError, numTasks);
  }

  /** `doca_sync_event_task_notify_add_set_conf`. */
  taskNotifyAddSetConf(onSuccess: TaskCompletionCb<SyncEventTaskNotifyAdd>, onError: TaskCompletionCb<SyncEventTaskNotifyAdd>, numTasks: number): void {
    this.conf('doca_sync_event_task_notify_add_set_conf', 'notify_add', onSuccess, onError, numTasks);
  }

  /** `doca_sync_event_task_wait_eq_set_conf`. */
  taskWaitEqSetConf(onSuccess: TaskCompletionCb<SyncEventTaskWaitEq>, onError: TaskCompletionCb<SyncEventTaskWaitEq>, numTasks: number): void {
    this.conf('doca_sync_event_task_wait_eq_set_conf', 'wait_eq', onSuccess, onError, numTasks);
  }

  /** `doca_sync_event_task_wait_neq_set_conf`. */
  taskWaitNeqSetConf(onSuccess: TaskCompletionCb<SyncEventTaskWaitNeq>, onError: TaskCompletionCb<SyncEventTaskWaitNeq>, numTasks: number): void {
    this.conf('doca_sync_event_task_wait_neq_set_conf', 'wait_neq', onSuccess, onError, numTasks);
  }

  /** `doca_sync_event_task_get_alloc_init`: the value read is `task.getRetVal()` after completion. */
  taskGetAllocInit(userData?: unknown): SyncEventTaskGet {
    const task = this.allocTask('doca_sync_event_task_get_alloc_init', 'get', this.make.get);
    task._init(userData);
    return task;
  }

  /** `doca_sync_event_task_notify_set_alloc_init`. */
  taskNotifySetAllocInit(setVal: bigint | number, userData?: unknown): SyncEventTaskNotifySet {
    const call = 'doca_sync_event_task_notify_set_alloc_init';
    const v = toU64(call, 'value', setVal);
    const task = this.allocTask(call, 'notify_set', this.make.notifySet);
    task._init(v, userData);
    return task;
  }

  /** `doca_sync_event_task_notify_add_alloc_init`: the value before the add is `task.getFetchedVal()`. */
  taskNotifyAddAllocInit(incVal: bigint | number, userData?: unknown): SyncEventTaskNotifyAdd {
    const call = 'doca_sync_event_task_notify_add_alloc_init';
    const v = toU64(call, 'value', incVal);
    const task = this.allocTask(call, 'notify_add', this.make.notifyAdd);
    task._init(v, userData);
    return task;
  }

  /** `doca_sync_event_task_wait_eq_alloc_init`: mask of 0, 1, 2, 4 or 8 consecutive 0xff bytes. */
  taskWaitEqAllocInit(waitVal: bigint | number, mask: bigint | number, userData?: unknown): SyncEventTaskWaitEq {
    const call = 'doca_sync_event_task_wait_eq_alloc_init';
    this.waitArgs(call, waitVal, mask);
    const task = this.allocTask(call, 'wait_eq', this.make.waitEq);
    task._init(this.args, userData);
    return task;
  }

  /** `doca_sync_event_task_wait_neq_alloc_init`. */
  taskWaitNeqAllocInit(waitVal: bigint | number, mask: bigint | number, userData?: unknown): SyncEventTaskWaitNeq {
    const call = 'doca_sync_event_task_wait_neq_alloc_init';
    this.waitArgs(call, waitVal, mask);
    const task = this.allocTask(call, 'wait_neq', this.make.waitNeq);
    task._init(this.args, userData);
    return task;
  }

  // ---- for the tasks ------------------------------------------------------------------------------

  /** @internal the event's record (fabric/stats.ts SYNC_EVENT): its state is this context's. */
  _useStat(stat: StatRecord): void {
    this.stat = stat;
  }

  /** @internal the get, notify-set and notify-add tasks: the event's one path (`SyncEvent._apply`). */
  _apply(op: 'set' | 'add' | 'get', value?: bigint): bigint {
    return this.event._apply(op, this.event._values('doca_task_submit'), value);
  }

  /** @internal a task finished at once. */
  _done(task: SyncEventTaskGet | SyncEventTaskNotifySet | SyncEventTaskNotifyAdd): void {
    this.completeTask(task);
  }

  /**
   * @internal a wait task was submitted: done at once if its condition holds, else watched. The context
   * says it waits before its last look at the value, so an update in between rings it.
   */
  _wait(task: SyncEventTaskWait): void {
    const call = 'doca_task_submit';
    if (this.event._holds(task.op, task._cond, call)) return this.completeTask(task);
    if (!this.event._waiters!.want(true, this.bell)) {
      throw new DocaError('NO_MEMORY', call, `${WAITER_CAPACITY} engines already wait on this sync event`);
    }
    if (this.event._holds(task.op, task._cond, call)) return this.completeTask(task);
    this.waits[this.pending++] = task;
    this.stat.c[WAITERS] = this.pending;
  }

  // ---- context hooks ------------------------------------------------------------------------------

  protected _doStart(): boolean {
    this.event._startCtx('doca_ctx_start');
    const exporter = this.event._exporter;
    // An exporter that dies cannot ring: the liveness cadence looks for it.
    if (exporter) this.unwatchExporter = watchProcess(exporter, () => this._sourceReady(this));
    return true;
  }

  protected override _doStop(): void {
    this.waits.length = 0;
    this.pending = 0;
    this.stat.c[WAITERS] = 0;
    this.event._waiters?.release();
    this.unwatchExporter();
    this.unwatchExporter = () => {};
  }

  /** @internal rung by updates (and by the event's end): completes the waits whose condition holds. */
  _pollSource(): boolean {
    if (this.getState() !== CtxState.RUNNING) return false;
    const gone = this.event.isImported && !this.event._valid('doca_pe_progress');
    // The exporter's last updates came before it left (the counter stays mapped here): waits they
    // satisfied complete with them; the others fail.
    if (this.pending > 0) this.completeHolding();
    if (gone) this.fail(new DocaError('NOT_CONNECTED', 'doca_sync_event', 'the exporting process destroyed the event or exited'));
    return false;
  }

  /** Completes the waits whose condition holds on the counter's value now (a read per wait). */
  private completeHolding(): void {
    const waits = this.waits;
    const n = this.pending;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const task = waits[i]!;
      waits[i] = undefined;
      if (this.event._holds(task.op, task._cond, 'doca_pe_progress', true)) this.completeTask(task);
      else waits[kept++] = task;
    }
    this.pending = kept;
    this.stat.c[WAITERS] = kept;
    if (kept === 0) this.event._waiters!.want(false, this.bell);
  }

  /** @internal the event is destroyed: leave the engine. */
  _release(call: string): void {
    if (!this.isDestroyed) this.destroyContext(call);
  }

  private conf<T extends SyncEventTaskGet | SyncEventTaskNotifySet | SyncEventTaskNotifyAdd | SyncEventTaskWait>(
    call: string,
    type: string,
    onSuccess: TaskCompletionCb<T>,
    onError: TaskCompletionCb<T>,
    numTasks: number,
  ): void {
    const dev = this.event._capDev;
    if (dev && !TASK_CAPS[type]!(dev.asDevinfo())) {
      throw new DocaError('NOT_SUPPORTED', call, `${dev.asDevinfo().spec.pci} does not support the ${type} task (its topology says so)`);
    }
    this.setTaskConf(call, type, onSuccess as TaskCompletionCb<Task>, onError as TaskCompletionCb<Task>, numTasks, MAX_TASKS);
  }

  /** Checks a wait allocation's mask, then its value, into `args`. */
  private waitArgs(call: string, waitVal: bigint | number, mask: bigint | number): void {
    this.args.setMask(call, mask, true);
    this.args.setOperand(call, 'wait value', waitVal);
  }
}
