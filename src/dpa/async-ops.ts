/**
 * The CPU side of `doca_dpa_async_ops`: non-blocking DPA operations such as `post_wait` (gated.ts
 * watches them), completing into a DPA completion (completion.ts).
 */
import { DocaError, describeValue } from '../core/error.js';
import type { Dpa } from './dpa.js';
import { ObjKind } from './layout.js';
import { DpaObject } from './object.js';
import { ASYNC_OPS, WAIT_SIZE } from './objects.js';
import { type DpaCompletion, queueSize } from './completion.js';

/**
 * `struct doca_dpa_async_ops`: a queue of non-blocking DPA operations (`post_wait_*`), completing into a
 * DPA completion.
 *
 * @example
 * ```ts
 * // doca_dpa_async_ops_create(dpa, 16, user_data, &ops); doca_dpa_async_ops_attach(ops, comp); doca_dpa_async_ops_start(ops)
 * const ops = DpaAsyncOps.create(dpa, 16, 7);
 * ops.attach(comp);
 * ops.start();
 * // DPA code: syncEventPostWaitGt(ops.getDpaHandle(), event, 0n) completes into comp with user data 7
 * ```
 */
export class DpaAsyncOps extends DpaObject {
  private completion: DpaCompletion | undefined;
  private list: number | undefined;

  private constructor(
    dpa: Dpa,
    private readonly size: number,
    private readonly userData: number,
  ) {
    super(dpa, ObjKind.ASYNC_OPS, 'doca_dpa_async_ops_create');
  }

  /**
   * `doca_dpa_async_ops_create`: up to `queueSize` operations in flight; each completion carries
   * `userData` (its low 32 bits: `getCompletionUserData` on the DPA).
   */
  static create(dpa: Dpa, queueSize_: number, userData: bigint | number = 0): DpaAsyncOps {
    const call = 'doca_dpa_async_ops_create';
    const size = queueSize(call, queueSize_);
    const ud = BigInt(userData);
    if (ud < 0n || ud >= 1n << 64n) throw new DocaError('INVALID_VALUE', call, `user data ${describeValue(userData)} is not a u64`);
    return new DpaAsyncOps(dpa, size, Number(ud & 0xffffffffn));
  }

  /** `doca_dpa_async_ops_get_queue_size`. */
  getQueueSize(): number {
    return this.size;
  }

  /** `doca_dpa_async_ops_get_user_data`. */
  getUserData(): number {
    return this.userData;
  }

  /** `doca_dpa_async_ops_attach`: the completion its operations complete into (before start). */
  attach(completion: DpaCompletion): void {
    const call = 'doca_dpa_async_ops_attach';
    this.configurable(call);
    this.sameDpa(completion, 'DpaCompletion', call);
    this.completion?._users.delete(this);
    this.completion = completion;
    completion._users.add(this);
  }

  /** `doca_dpa_async_ops_start`: BAD_STATE without an attached completion. */
  start(): void {
    const call = 'doca_dpa_async_ops_start';
    this.configurable(call);
    const run = this.dpa._running(call);
    if (!this.completion) throw new DocaError('BAD_STATE', call, `${this.name} has no completion (attach)`);
    const list = this.list ?? run.arena.alloc(this.size * WAIT_SIZE);
    if (list === undefined) throw new DocaError('NO_MEMORY', call, `the DPA has no room for ${this.size} async operations`);
    run.segment.u8.fill(0, list, list + this.size * WAIT_SIZE);
    this.list = list;
    const objects = run.objects;
    run.tables.view.setUint32(objects.at(this.index, ASYNC_OPS.SIZE), this.size, true);
    run.tables.view.setUint32(objects.at(this.index, ASYNC_OPS.LIST), list, true);
    run.tables.view.setUint32(objects.at(this.index, ASYNC_OPS.USER_DATA), this.userData, true);
    objects.store(this.index, ASYNC_OPS.COMPLETION, this.completion.index + 1);
    objects.store(this.index, ASYNC_OPS.COMPLETION_GEN, objects.generation(this.completion.index));
    this.setStarted(true);
  }

  /** `doca_dpa_async_ops_stop`: posted operations are dropped. */
  stop(): void {
    const call = 'doca_dpa_async_ops_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    const run = this.dpaRun;
    this.setStarted(false);
    Atomics.and(run.tables.i32, run.layout.waitBits / 4 + (this.index >>> 5), ~(1 << (this.index & 31)));
  }

  /** `doca_dpa_async_ops_destroy`: stopped first. */
  destroy(): void {
    const call = 'doca_dpa_async_ops_destroy';
    if (this.isDestroyed) return;
    if (this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is started; stop it first`);
    this.destroyObject(call);
    if (this.list !== undefined && this.dpa.isStarted) this.dpaRun.arena.free(this.list);
    this.list = undefined;
    this.completion?._users.delete(this);
    this.completion = undefined;
  }

  /** `doca_dpa_async_ops_get_dpa_handle`: BAD_STATE before start. */
  getDpaHandle(): bigint {
    return this.dpaHandle('doca_dpa_async_ops_get_dpa_handle');
  }
}
