/** The sync event's asynchronous tasks (`doca_sync_event_task_*`). */
import { Task, type TaskConf } from '../core/task.js';
import { checkTaskMask, toMask, toU64, type WaitOp } from './condition.js';
import type { SyncEventContext } from './ctx.js';

abstract class SyncEventTask extends Task {
  constructor(
    protected readonly ctx: SyncEventContext,
    conf: TaskConf,
    userData: unknown,
  ) {
    super(ctx, conf);
    this.userData = userData;
  }

  /** `doca_sync_event_task_*_as_doca_task`. */
  asDocaTask(): Task {
    return this;
  }
}

/** `doca_sync_event_task_get`: reads the value. */
export class SyncEventTaskGet extends SyncEventTask {
  private value = 0n;

  /** `doca_sync_event_task_get_get_ret_val_ptr`: the value read (valid after completion). */
  getRetVal(): bigint {
    return this.value;
  }

  _execute(): void {
    this.value = this.ctx._get();
    this.ctx._done(this);
  }
}

/** `doca_sync_event_task_notify_set`: sets the value (not atomic with other updates, as DOCA says). */
export class SyncEventTaskNotifySet extends SyncEventTask {
  constructor(ctx: SyncEventContext, conf: TaskConf, private setVal: bigint, userData: unknown) {
    super(ctx, conf, userData);
  }

  getSetVal(): bigint {
    return this.setVal;
  }

  setSetVal(value: bigint | number): void {
    this.check('doca_sync_event_task_notify_set_set_set_val');
    this.setVal = toU64('doca_sync_event_task_notify_set_set_set_val', 'value', value);
  }

  _execute(): void {
    this.ctx._set(this.setVal);
    this.ctx._done(this);
  }
}

/** `doca_sync_event_task_notify_add`: adds atomically; the value before the add is fetched. */
export class SyncEventTaskNotifyAdd extends SyncEventTask {
  private fetched = 0n;

  constructor(ctx: SyncEventContext, conf: TaskConf, private incVal: bigint, userData: unknown) {
    super(ctx, conf, userData);
  }

  getIncVal(): bigint {
    return this.incVal;
  }

  setIncVal(value: bigint | number): void {
    this.check('doca_sync_event_task_notify_add_set_inc_val');
    this.incVal = toU64('doca_sync_event_task_notify_add_set_inc_val', 'value', value);
  }

  /** `doca_sync_event_task_notify_add_get_fetched_val_ptr`: the value before the add (after completion). */
  getFetchedVal(): bigint {
    return this.fetched;
  }

  _execute(): void {
    this.fetched = this.ctx._add(this.incVal);
    this.ctx._done(this);
  }
}

/** The two wait tasks: complete once `(value & mask) OP waitVal`; the mask is whole bytes (0, 1, 2, 4 or 8). */
export abstract class SyncEventTaskWait extends SyncEventTask {
  abstract readonly op: WaitOp;

  constructor(ctx: SyncEventContext, conf: TaskConf, private waitVal: bigint, private mask: bigint, userData: unknown) {
    super(ctx, conf, userData);
  }

  getWaitVal(): bigint {
    return this.waitVal;
  }

  setWaitVal(value: bigint | number): void {
    this.check('doca_sync_event_task_wait_set_wait_val');
    this.waitVal = toU64('doca_sync_event_task_wait_set_wait_val', 'value', value);
  }

  getMask(): bigint {
    return this.mask;
  }

  setMask(mask: bigint | number): void {
    const call = 'doca_sync_event_task_wait_set_mask';
    this.check(call);
    const m = toMask(call, mask);
    checkTaskMask(call, m);
    this.mask = m;
  }

  _execute(): void {
    this.ctx._wait(this);
  }
}

/** `doca_sync_event_task_wait_eq`. */
export class SyncEventTaskWaitEq extends SyncEventTaskWait {
  readonly op = 'eq' as const;
}

/** `doca_sync_event_task_wait_neq`. */
export class SyncEventTaskWaitNeq extends SyncEventTaskWait {
  readonly op = 'neq' as const;
}
