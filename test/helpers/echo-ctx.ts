/**
 * A minimal context for testing the core machinery (state machine, task pools, stop, progress engine)
 * on its own: its "echo" tasks complete at once, or are held until `release()`.
 */
import { Context } from '../../src/core/ctx.js';
import { DocaError } from '../../src/core/error.js';
import { Task, type TaskCompletionCb, type TaskConf } from '../../src/core/task.js';

export class EchoTask extends Task {
  value = 0;

  constructor(
    private readonly echo: EchoCtx,
    conf: TaskConf,
  ) {
    super(echo, conf);
  }

  _execute(): void {
    this.echo.accept(this);
  }
}

export class EchoCtx extends Context {
  mode: 'immediate' | 'hold' = 'immediate';
  asyncStart = false;
  asyncStop = false;
  stopDone = false;
  held: EchoTask[] = [];
  refuseNextSubmit: DocaError | undefined;
  private readonly makeTask = (conf: TaskConf): EchoTask => new EchoTask(this, conf);

  constructor(confError: 'BAD_STATE' | 'NOT_PERMITTED' = 'BAD_STATE') {
    super('echo ctx', confError);
  }

  taskEchoSetConf(onSuccess: TaskCompletionCb<EchoTask>, onError: TaskCompletionCb<EchoTask>, numTasks: number): void {
    this.setTaskConf('echo_task_set_conf', 'echo', onSuccess, onError, numTasks, 1024);
  }

  taskEchoAllocInit(value: number): EchoTask {
    const task = this.allocTask('echo_task_alloc_init', 'echo', this.makeTask);
    task.value = value;
    return task;
  }

  setSomething(): void {
    this.requireIdle('echo_set_something');
  }

  accept(task: EchoTask): void {
    if (this.refuseNextSubmit) {
      const err = this.refuseNextSubmit;
      this.refuseNextSubmit = undefined;
      throw err;
    }
    if (this.mode === 'hold') this.held.push(task);
    else this.completeTask(task, task.value < 0 ? new DocaError('INVALID_VALUE', 'echo', `value ${task.value} is negative`) : undefined);
  }

  release(): void {
    for (const t of this.held.splice(0)) this.completeTask(t);
  }

  finishStart(): void {
    this.startCompleted();
  }

  crash(err: DocaError): void {
    this.fail(err);
  }

  destroy(): void {
    this.destroyContext('echo_destroy');
  }

  protected _doStart(): boolean {
    this.stopDone = false;
    return !this.asyncStart;
  }

  protected override _doStop(): void {
    this.held = [];
  }

  protected override _stopComplete(): boolean {
    return !this.asyncStop || this.stopDone;
  }
}

/** Progresses until nothing happens; returns how many units of work ran. */
export function drain(pe: { progress(): boolean }): number {
  let n = 0;
  while (pe.progress()) n++;
  return n;
}
