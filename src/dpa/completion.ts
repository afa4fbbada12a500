/**
 * The CPU side of the DPA's completion contexts: `doca_dpa_completion` (a queue DPA code polls; producer
 * sends and async ops complete into it), `doca_dpa_notification_completion` (another DPA thread's
 * `thread_notify` activates its thread) and `doca_dpa_async_ops` (non-blocking operations such as
 * `post_wait`, completing into a DPA completion). Attaching a thread makes the context activate it,
 * while armed (cq.ts): contexts start armed, and DPA code re-arms with `*_request_notification`.
 */
import { DocaError, describeValue } from '../core/error.js';
import { startPosition } from '../fabric/positions.js';
import type { Dpa } from './dpa.js';
import { ObjKind } from './layout.js';
import { DpaObject } from './object.js';
import { ASYNC_OPS, ATTACHED, COMPLETION, CQE_SIZE, MAX_QUEUE, WAIT_SIZE } from './objects.js';
import type { DpaThread } from './thread.js';

const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(n));

function queueSize(call: string, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_QUEUE) throw new DocaError('INVALID_VALUE', call, `queue size ${describeValue(n)} is not an integer in [1, ${MAX_QUEUE}]`);
  return pow2(n);
}

/** @internal what activates a thread: it refers to the thread, which cannot be destroyed meanwhile. */
export abstract class ThreadAttached extends DpaObject {
  protected thread: DpaThread | undefined;

  protected attach(thread: DpaThread, call: string): void {
    this.configurable(call);
    this.sameDpa(thread, 'DpaThread', call);
    this.thread?._users.delete(this);
    this.thread = thread;
    thread._users.add(this);
  }

  /** Publishes the attached thread and arms the context (start). */
  protected publishThread(): void {
    const o = this.dpaRun.objects;
    o.store(this.index, ATTACHED.THREAD, this.thread ? this.thread.index + 1 : 0);
    o.store(this.index, ATTACHED.THREAD_GEN, this.thread ? o.generation(this.thread.index) : 0);
    o.store(this.index, ATTACHED.ARMED, 1);
  }

  protected detach(): void {
    this.thread?._users.delete(this);
    this.thread = undefined;
  }
}

/**
 * A DPA completion context, `struct doca_dpa_completion` (`doca_dpa_completion_create`): a queue DPA code
 * polls (`getCompletion`, `completionAck`); producer sends and async ops complete into it, and, while
 * armed, it activates its thread.
 *
 * @example
 * ```ts
 * // doca_dpa_completion_create(dpa, 64, &comp); doca_dpa_completion_set_thread(comp, thread); doca_dpa_completion_start(comp)
 * const comp = DpaCompletion.create(dpa, 64);
 * comp.setThread(thread);
 * comp.start();
 * dpaProducer.dpaCompletionAttach(comp); // DPA code: getCompletion(comp.getDpaHandle())
 * ```
 */
export class DpaCompletion extends ThreadAttached {
  private ring: number | undefined;

  private constructor(
    dpa: Dpa,
    private readonly size: number,
  ) {
    super(dpa, ObjKind.COMPLETION, 'doca_dpa_completion_create');
  }

  /** `doca_dpa_completion_create`: a queue of `queueSize` elements (rounded up to a power of two). */
  static create(dpa: Dpa, queueSize_: number): DpaCompletion {
    return new DpaCompletion(dpa, queueSize('doca_dpa_completion_create', queueSize_));
  }

  /** `doca_dpa_completion_get_queue_size`. */
  getQueueSize(): number {
    return this.size;
  }

  /** `doca_dpa_completion_set_thread`: the thread its completions activate (before start). */
  setThread(thread: DpaThread): void {
    this.attach(thread, 'doca_dpa_completion_set_thread');
  }

  /** `doca_dpa_completion_get_thread`. */
  getThread(): DpaThread | undefined {
    return this.thread;
  }

  /** `doca_dpa_completion_start`. */
  start(): void {
    const call = 'doca_dpa_completion_start';
    this.configurable(call);
    const r = this.dpa._running(call);
    const ring = this.ring ?? r.arena.alloc(this.size * CQE_SIZE);
    if (ring === undefined) throw new DocaError('NO_MEMORY', call, `the DPA has no room for a ${this.size}-element completion queue`);
    r.segment.u8.fill(0, ring, ring + this.size * CQE_SIZE);
    this.ring = ring;
    const o = r.objects;
    r.view.view.setUint32(o.at(this.index, COMPLETION.SIZE), this.size, true);
    r.view.view.setUint32(o.at(this.index, COMPLETION.RING), ring, true);
    // Positions start where every ring's do (fabric/positions.ts), so a soak can bring the wrap forward.
    const start = startPosition();
    for (const f of [COMPLETION.RESERVE, COMPLETION.READ, COMPLETION.ACK]) o.store(this.index, f, start);
    // An element is there when its sequence is its position + 1. Each starts as written one lap before
    // the position it will first hold, so none looks posted, wherever the positions start (a zero would
    // pass for position -1).
    for (let k = 0; k < this.size; k++) {
      const position = (start + k) | 0;
      Atomics.store(r.segment.i32, (ring + ((position & (this.size - 1)) >>> 0) * CQE_SIZE) / 4, (position - this.size + 1) | 0);
    }
    this.publishThread();
    this.setStarted(true);
  }

  /** `doca_dpa_completion_stop`: IN_USE while producers or async ops complete into it. */
  stop(): void {
    const call = 'doca_dpa_completion_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    if (this._users.size > 0) throw new DocaError('IN_USE', call, `${[...this._users].map((u) => u.name).join(', ')} still complete into ${this.name}`);
    this.setStarted(false);
  }

  /** `doca_dpa_completion_destroy`: stopped first. */
  destroy(): void {
    const call = 'doca_dpa_completion_destroy';
    if (this.isDestroyed) return;
    if (this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is started; stop it first`);
    this.destroyObject(call);
    this.freeRing();
    this.detach();
  }

  /** The ring stays with the object until it is destroyed: an EU may still be posting to it after a stop. */
  private freeRing(): void {
    if (this.ring !== undefined && this.dpa.isStarted) this.dpaRun.arena.free(this.ring);
    this.ring = undefined;
  }

  /** `doca_dpa_completion_get_dpa_handle`: BAD_STATE before start. */
  getDpaHandle(): bigint {
    return this.dpaHandle('doca_dpa_completion_get_dpa_handle');
  }
}

/**
 * `struct doca_dpa_notification_completion`: `thread_notify` on its handle activates its thread.
 *
 * @example
 * ```ts
 * // doca_dpa_notification_completion_create(dpa, thread, &notify); ..._start(notify); ..._get_dpa_handle(notify, &h)
 * const notify = DpaNotificationCompletion.create(dpa, worker);
 * notify.start();
 * const handle = notify.getDpaHandle(); // another DPA thread calls threadNotify(handle)
 * ```
 */
export class DpaNotificationCompletion extends ThreadAttached {
  private constructor(dpa: Dpa, thread: DpaThread) {
    super(dpa, ObjKind.NOTIFICATION, 'doca_dpa_notification_completion_create');
    this.attach(thread, 'doca_dpa_notification_completion_create');
  }

  /** `doca_dpa_notification_completion_create`. */
  static create(dpa: Dpa, thread: DpaThread): DpaNotificationCompletion {
    return new DpaNotificationCompletion(dpa, thread);
  }

  /** `doca_dpa_notification_completion_get_thread`. */
  getThread(): DpaThread | undefined {
    return this.thread;
  }

  /** `doca_dpa_notification_completion_start`. */
  start(): void {
    const call = 'doca_dpa_notification_completion_start';
    this.configurable(call);
    this.dpa._running(call);
    this.publishThread();
    this.setStarted(true);
  }

  /** `doca_dpa_notification_completion_stop`. */
  stop(): void {
    const call = 'doca_dpa_notification_completion_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    this.setStarted(false);
  }

  /** `doca_dpa_notification_completion_destroy`: stopped first. */
  destroy(): void {
    const call = 'doca_dpa_notification_completion_destroy';
    if (this.isDestroyed) return;
    if (this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is started; stop it first`);
    this.destroyObject(call);
    this.detach();
  }

  /** `doca_dpa_notification_completion_get_dpa_handle`: BAD_STATE before start. */
  getDpaHandle(): bigint {
    return this.dpaHandle('doca_dpa_notification_completion_get_dpa_handle');
  }
}

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
    const r = this.dpa._running(call);
    if (!this.completion) throw new DocaError('BAD_STATE', call, `${this.name} has no completion (attach)`);
    const list = this.list ?? r.arena.alloc(this.size * WAIT_SIZE);
    if (list === undefined) throw new DocaError('NO_MEMORY', call, `the DPA has no room for ${this.size} async operations`);
    r.segment.u8.fill(0, list, list + this.size * WAIT_SIZE);
    this.list = list;
    const o = r.objects;
    r.view.view.setUint32(o.at(this.index, ASYNC_OPS.SIZE), this.size, true);
    r.view.view.setUint32(o.at(this.index, ASYNC_OPS.LIST), list, true);
    r.view.view.setUint32(o.at(this.index, ASYNC_OPS.USER_DATA), this.userData, true);
    o.store(this.index, ASYNC_OPS.COMPLETION, this.completion.index + 1);
    o.store(this.index, ASYNC_OPS.COMPLETION_GEN, o.generation(this.completion.index));
    this.setStarted(true);
  }

  /** `doca_dpa_async_ops_stop`: posted operations are dropped. */
  stop(): void {
    const call = 'doca_dpa_async_ops_stop';
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    const r = this.dpaRun;
    this.setStarted(false);
    Atomics.and(r.view.i32, r.layout.waitBits / 4 + (this.index >>> 5), ~(1 << (this.index & 31)));
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
