/**
 * DPA threads (`struct doca_dpa_thread`): a function and its argument that an execution unit runs once
 * per activation, to completion. Completions attached to the thread (a DPA completion, a notification
 * completion, a comch consumer completion) activate it; an activation while it runs makes it run once
 * more afterwards. `thread_reschedule` (or returning) gives the execution unit back; `thread_finish`
 * ends the thread for good. Its state word (objects.ts, ThreadState) is the only truth about it.
 */
import { DocaError, describeValue } from '../core/error.js';
import { Counter, DpaThreadStatState, StatKind, type StatRecord, statRecord } from '../fabric/stats.js';
import type { DpaFuncRef } from './app.js';
import type { Dpa } from './dpa.js';
import { ObjKind, OBJ } from './layout.js';
import { DpaObject } from './object.js';
import { THREAD, ThreadState } from './objects.js';

/**
 * A DPA thread, `struct doca_dpa_thread` (`doca_dpa_thread_create`): a function of the DPA application
 * and its argument, which an execution unit runs once per activation, to completion. Completions
 * attached to it activate it (a `DpaCompletion`, a `DpaNotificationCompletion`, a
 * `ComchConsumerCompletion`); an activation while it runs makes it run once more afterwards.
 *
 * @example
 * ```ts
 * // doca_dpa_thread_create(dpa, &thread); doca_dpa_thread_set_func_arg(thread, &on_event, arg); ..._start; ..._run
 * const thread = DpaThread.create(dpa);
 * thread.setFuncArg('onEvent', 0n); // an export of the DPA application
 * thread.start();
 * const notify = DpaNotificationCompletion.create(dpa, thread);
 * notify.start();
 * thread.run(); // activations from now on run onEvent
 * ```
 */
export class DpaThread extends DpaObject {
  private func: DpaFuncRef | undefined;
  private arg = 0n;
  private local = 0n;
  /** Its life as its owner knows it: 'stopping' once a stop began (also one that timed out: it can be destroyed). */
  private life: 'idle' | 'started' | 'stopping' = 'idle';
  /**
   * What observers of the fabric see of it (fabric/stats.ts DPA_THREAD): its activations are counted by
   * the execution unit that runs it, in the slot its object entry names (THREAD.STATS).
   */
  private readonly stat: StatRecord;

  private constructor(dpa: Dpa) {
    super(dpa, ObjKind.THREAD, 'doca_dpa_thread_create');
    this.stat = statRecord(dpa.dev.fabric.dir, StatKind.DPA_THREAD, `${this.name} (id ${this.index})`, dpa._stat, this.index);
    this.dpaRun.objects.store(this.index, THREAD.STATS, this.stat.slot + 1);
    dpa._stat.c[Counter.DPA.THREADS]!++;
  }

  /** `doca_dpa_thread_create`: on a started DPA. */
  static create(dpa: Dpa): DpaThread {
    return new DpaThread(dpa);
  }

  /** `doca_dpa_thread_set_func_arg`: the function each activation runs, and its u64 argument. */
  setFuncArg(func: DpaFuncRef, arg: bigint | number = 0n): void {
    const call = 'doca_dpa_thread_set_func_arg';
    this.configurable(call);
    this.dpa._func(this.dpaRun, func, call);
    if (!(typeof arg === 'bigint' ? arg >= 0n && arg < 1n << 64n : Number.isSafeInteger(arg) && arg >= 0)) throw new DocaError('INVALID_VALUE', call, `arg ${describeValue(arg)} is not a u64`);
    this.func = func;
    this.arg = BigInt(arg);
  }

  /** `doca_dpa_thread_get_func_arg`. */
  getFuncArg(): { func: DpaFuncRef | undefined; arg: bigint } {
    return { func: this.func, arg: this.arg };
  }

  /** `doca_dpa_thread_set_local_storage`: a DPA pointer (`Dpa.memAlloc`) the thread reads with `threadGetLocalStorage`. */
  setLocalStorage(ptr: bigint): void {
    const call = 'doca_dpa_thread_set_local_storage';
    this.configurable(call);
    if (typeof ptr !== 'bigint' || ptr < 0n || ptr >= 1n << 64n) throw new DocaError('INVALID_VALUE', call, `${describeValue(ptr)} is not a DPA pointer`);
    this.local = ptr;
  }

  /** `doca_dpa_thread_get_local_storage`. */
  getLocalStorage(): bigint {
    return this.local;
  }

  /** `doca_dpa_thread_get_id`. */
  getId(): number {
    return this.index;
  }

  /**
   * Started, and not stopped since (its owner's own record: its state word is shared with the execution
   * units, and a word another thread could overwrite must not keep it from being stopped or destroyed).
   */
  override get isStarted(): boolean {
    return !this.isDestroyed && this.life !== 'idle';
  }

  /** `doca_dpa_thread_start`: activations are remembered from now on, and run once it is `run()`. */
  start(): void {
    const call = 'doca_dpa_thread_start';
    this.configurable(call);
    this.dpa._running(call);
    if (this.func === undefined) throw new DocaError('BAD_STATE', call, `${this.name} has no function (setFuncArg)`);
    const v = this.dpaRun.tables.view;
    v.setUint32(this.dpaRun.objects.at(this.index, THREAD.FUNC), this.dpa._func(this.dpaRun, this.func, call), true);
    v.setBigUint64(this.dpaRun.objects.at(this.index, THREAD.ARG), this.arg, true);
    v.setBigUint64(this.dpaRun.objects.at(this.index, THREAD.LOCAL), this.local, true);
    this.dpaRun.objects.setState(this.index, ThreadState.STARTED);
    this.life = 'started';
    this.stat.setState(DpaThreadStatState.STARTED);
  }

  /**
   * `doca_dpa_thread_run`: runnable; completions attached to it activate it from now on (one that came
   * since `start()` runs it at once).
   */
  run(): void {
    const call = 'doca_dpa_thread_run';
    this.alive(call);
    this.dpa._running(call);
    const i32 = this.dpaRun.tables.i32;
    const at = this.dpaRun.objects.at(this.index, OBJ.STATE) / 4;
    if (Atomics.compareExchange(i32, at, ThreadState.STARTED, ThreadState.IDLE) === ThreadState.STARTED) return this.stat.setState(DpaThreadStatState.RUNNABLE);
    if (Atomics.compareExchange(i32, at, ThreadState.STARTED_PENDING, ThreadState.QUEUED) === ThreadState.STARTED_PENDING) {
      this.stat.setState(DpaThreadStatState.RUNNABLE);
      this.dpaRun.tables.sched.ready(this.dpaRun.layout.objectBits, this.index);
      return;
    }
    throw new DocaError('BAD_STATE', call, `${this.name} is not started, or already runs`);
  }

  /** `doca_dpa_thread_stop`: no more activations; waits (bounded) for a running activation to end. */
  stop(): void {
    const call = 'doca_dpa_thread_stop';
    this.alive(call);
    if (this.life === 'idle') throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    this.life = 'stopping';
    const i32 = this.dpaRun.tables.i32;
    const at = this.dpaRun.objects.at(this.index, OBJ.STATE) / 4;
    for (let s = Atomics.load(i32, at); s !== ThreadState.STOPPED; s = Atomics.load(i32, at)) {
      const running = s === ThreadState.RUNNING || s === ThreadState.RUNNING_AGAIN || s === ThreadState.STOPPING;
      if (!this.dpa.isStarted || !running) {
        Atomics.compareExchange(i32, at, s, ThreadState.STOPPED);
        continue;
      }
      if (s !== ThreadState.STOPPING && Atomics.compareExchange(i32, at, s, ThreadState.STOPPING) !== s) continue;
      // As long as a kernel may run: a run that takes longer is not coming back by itself.
      const waitMs = this.dpa.getKernelMaxRunTime() * 1000;
      if (this.dpaRun.pool.waitSync(() => Atomics.load(i32, at) === ThreadState.STOPPED, waitMs)) break;
      if (this.dpa.isStarted) throw new DocaError('TIME_OUT', call, `${this.name} is still in its function after ${waitMs} ms (the kernel max run time); it is never activated again, can be destroyed, and its execution unit is ended with the DPA`);
    }
    this.life = 'idle';
    this.stat.setState(DpaThreadStatState.STOPPED);
  }

  /**
   * `doca_dpa_thread_destroy`: stopped (or never started), and no completion attached to it. A thread
   * whose stop timed out (it is still in its function) can be destroyed too: it is never activated
   * again, and the execution unit it holds is ended when the DPA stops.
   */
  destroy(): void {
    const call = 'doca_dpa_thread_destroy';
    if (this.isDestroyed) return;
    if (this.life === 'started') throw new DocaError('BAD_STATE', call, `${this.name} is started; stop it first`);
    this.destroyObject(call);
    this.stat.release();
    this.dpa._stat.c[Counter.DPA.THREADS]!--;
  }


}
