/** The sync event's asynchronous tasks (`doca_sync_event_task_*`). */
import { Task, type TaskConf } from '../core/task.js';
import { Condition, toU64, type WaitOp } from './condition.js';
import type { SyncEventContext } from './ctx.js';

abstract class SyncEventTask extends Task {
  /** @internal the pool makes and recycles these; an allocation then sets its fields (`_init`). */
  constructor(
    protected readonly ctx: SyncEventContext,
    conf: TaskConf,
  ) {
    super(ctx, conf);
  }

  /** `doca_sync_event_task_*_as_doca_task`. */
  asDocaTask(): Task {
    return this;
  }
}

/**
 * `doca_sync_event_task_get`: reads the value.
 *
 * @example
 * ```ts
 * // doca_sync_event_task_get_alloc_init(se, &ret_val, user_data, &task); doca_task_submit(...)
 * const task = ctx.taskGetAllocInit();
 * await task.submitAsync();
 * console.log(task.getRetVal());
 * task.free();
 * ```
 */
export class SyncEventTaskGet extends SyncEventTask {
  private value = 0n;

  /** @internal what an allocation sets. */
  _init(userData: unknown): void {
    this.value = 0n;
    this.userData = userData;
  }

  /** `doca_sync_event_task_get_get_ret_val_ptr`: the value read (valid after completion). */
  getRetVal(): bigint {
    return this.value;
  }

  _execute(): void {
    this.value = this.ctx._apply('get');
    this.ctx._done(this);
  }
}

/**
 * `doca_sync_event_task_notify_set`: sets the value (not atomic with other updates, as DOCA says).
 *
 * @example
 * ```ts
 * // doca_sync_event_task_notify_set_alloc_init(se, 2, user_data, &task); doca_task_submit(...)
 * ctx.taskNotifySetSetConf((task) => task.free(), (task) => task.free(), 8);
 * ctx.start();
 * ctx.taskNotifySetAllocInit(2n).submit(); // waiters on the event see 2
 * ```
 */
export class SyncEventTaskNotifySet extends SyncEventTask {
  private setVal = 0n;

  /** @internal what an allocation sets (`ctx.taskNotifySetAllocInit`). */
  _init(setVal: bigint, userData: unknown): void {
    this.setVal = setVal;
    this.userData = userData;
  }

  /** `doca_sync_event_task_notify_set_get_set_val`. */
  getSetVal(): bigint {
    return this.setVal;
  }

  /** `doca_sync_event_task_notify_set_set_set_val`: the value to set, before the task is submitted again. */
  setSetVal(value: bigint | number): void {
    this.check('doca_sync_event_task_notify_set_set_set_val');
    this.setVal = toU64('doca_sync_event_task_notify_set_set_set_val', 'value', value);
  }

  _execute(): void {
    this.ctx._apply('set', this.setVal);
    this.ctx._done(this);
  }
}

/**
 * `doca_sync_event_task_notify_add`: adds atomically; the value before the add is fetched.
 *
 * @example
 * ```ts
 * // doca_sync_event_task_notify_add_alloc_init(se, 1, &fetched, user_data, &task); doca_task_submit(...)
 * const task = ctx.taskNotifyAddAllocInit(1n);
 * await task.submitAsync();
 * console.log(task.getFetchedVal()); // the value before the add
 * task.free();
 * ```
 */
export class SyncEventTaskNotifyAdd extends SyncEventTask {
  private fetched = 0n;
  private incVal = 0n;

  /** @internal what an allocation sets (`ctx.taskNotifyAddAllocInit`). */
  _init(incVal: bigint, userData: unknown): void {
    this.incVal = incVal;
    this.fetched = 0n;
    this.userData = userData;
  }

  /** `doca_sync_event_task_notify_add_get_inc_val`. */
  getIncVal(): bigint {
    return this.incVal;
  }

  /** `doca_sync_event_task_notify_add_set_inc_val`: the value to add, before the task is submitted again. */
  setIncVal(value: bigint | number): void {
    this.check('doca_sync_event_task_notify_add_set_inc_val');
    this.incVal = toU64('doca_sync_event_task_notify_add_set_inc_val', 'value', value);
  }

  /** `doca_sync_event_task_notify_add_get_fetched_val_ptr`: the value before the add (after completion). */
  getFetchedVal(): bigint {
    return this.fetched;
  }

  _execute(): void {
    this.fetched = this.ctx._apply('add', this.incVal);
    this.ctx._done(this);
  }
}

/**
 * What the two wait tasks share (`doca_sync_event_task_wait_eq`, `doca_sync_event_task_wait_neq`): they
 * complete once `(value & mask) OP waitVal`; the mask is whole bytes (0, 1, 2, 4 or 8 of them).
 *
 * @example
 * ```ts
 * // doca_sync_event_task_wait_neq_alloc_init(se, 0, 0xff, user_data, &task); doca_task_submit(...)
 * const wait = ctx.taskWaitNeqAllocInit(0n, 0xffn); // the low byte leaves 0
 * await wait.submitAsync();
 * wait.setWaitVal(wait.getWaitVal() + 1n); // and submit again for the next change
 * ```
 */
export abstract class SyncEventTaskWait extends SyncEventTask {
  /** @internal The comparison the task waits for. */
  abstract readonly op: WaitOp;

  /** @internal its wait value and mask (one object per task, set again by each allocation). */
  readonly _cond = new Condition();

  /** @internal what an allocation sets (`ctx.taskWaitEqAllocInit` / `ctx.taskWaitNeqAllocInit`): `cond` was checked. */
  _init(cond: Condition, userData: unknown): void {
    this._cond.copy(cond);
    this.userData = userData;
  }

  /** `doca_sync_event_task_wait_{eq,neq}_get_wait_val`. */
  getWaitVal(): bigint {
    return this._cond.getOperand();
  }

  /** `doca_sync_event_task_wait_{eq,neq}_set_wait_val`: before the task is submitted again. */
  setWaitVal(value: bigint | number): void {
    const call = 'doca_sync_event_task_wait_set_wait_val';
    this.check(call);
    this._cond.setOperand(call, 'value', value);
  }

  /** `doca_sync_event_task_wait_{eq,neq}_get_mask`. */
  getMask(): bigint {
    return this._cond.getMask();
  }

  /** `doca_sync_event_task_wait_{eq,neq}_set_mask`: whole bytes (INVALID_VALUE otherwise). */
  setMask(mask: bigint | number): void {
    const call = 'doca_sync_event_task_wait_set_mask';
    this.check(call);
    this._cond.setMask(call, mask, true);
  }

  _execute(): void {
    this.ctx._wait(this);
  }
}

/**
 * `doca_sync_event_task_wait_eq`: completes once `(value & mask) == waitVal`.
 *
 * @example
 * ```ts
 * // doca_sync_event_task_wait_eq_alloc_init(se, 2, UINT64_MAX, user_data, &task); doca_task_submit(...)
 * const wait = ctx.taskWaitEqAllocInit(2n, 0xffff_ffff_ffff_ffffn);
 * await wait.submitAsync(); // the other side signalled 2
 * wait.free();
 * ```
 */
export class SyncEventTaskWaitEq extends SyncEventTaskWait {
  /** @internal */
  readonly op = 'eq' as const;
}

/**
 * `doca_sync_event_task_wait_neq`: completes once `(value & mask) != waitVal`.
 *
 * @example
 * ```ts
 * // doca_sync_event_task_wait_neq_alloc_init(se, 0, UINT64_MAX, user_data, &task); doca_task_submit(...)
 * const wait = ctx.taskWaitNeqAllocInit(0n, 0xffff_ffff_ffff_ffffn);
 * await wait.submitAsync(); // someone changed the value from 0
 * wait.free();
 * ```
 */
export class SyncEventTaskWaitNeq extends SyncEventTaskWait {
  /** @internal */
  readonly op = 'neq' as const;
}
