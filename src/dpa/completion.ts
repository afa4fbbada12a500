/**
 * The CPU side of `doca_dpa_completion`: a queue DPA code polls (cq.ts, dev/core.ts); producer sends and
 * async ops (async-ops.ts) complete into it, and, while armed, it activates its attached thread
 * (attached.ts).
 */
import { DocaError, describeValue } from '../core/error.js';
import { powerOfTwoAtLeast, slotAt, startPosition } from '../fabric/positions.js';
import type { Dpa } from './dpa.js';
import { ObjKind } from './layout.js';
import { COMPLETION, CQE_SIZE, MAX_QUEUE } from './objects.js';
import type { DpaThread } from './thread.js';
import { ThreadAttached } from './attached.js';

/**
 * @internal A queue size `n` in [1, MAX_QUEUE], rounded up to a power of two (DpaCompletion and
 * DpaAsyncOps); INVALID_VALUE otherwise.
 */
export function queueSize(call: string, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_QUEUE) throw new DocaError('INVALID_VALUE', call, `queue size ${describeValue(n)} is not an integer in [1, ${MAX_QUEUE}]`);
  return powerOfTwoAtLeast(n);
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
    const run = this.dpa._running(call);
    const ring = this.ring ?? run.arena.alloc(this.size * CQE_SIZE);
    if (ring === undefined) throw new DocaError('NO_MEMORY', call, `the DPA has no room for a ${this.size}-element completion queue`);
    run.segment.u8.fill(0, ring, ring + this.size * CQE_SIZE);
    this.ring = ring;
    const objects = run.objects;
    run.tables.view.setUint32(objects.at(this.index, COMPLETION.SIZE), this.size, true);
    run.tables.view.setUint32(objects.at(this.index, COMPLETION.RING), ring, true);
    // Positions start where every ring's do (fabric/positions.ts), so a soak can bring the wrap forward.
    const start = startPosition();
    for (const f of [COMPLETION.RESERVE, COMPLETION.READ, COMPLETION.ACK]) objects.store(this.index, f, start);
    // An element is there when its sequence is its position + 1. Each starts as written one lap before
    // the position it will first hold, so none looks posted, wherever the positions start (a zero would
    // pass for position -1).
    for (let k = 0; k < this.size; k++) {
      const position = (start + k) | 0;
      Atomics.store(run.segment.i32, slotAt(ring, position, this.size, CQE_SIZE) / 4, (position - this.size + 1) | 0);
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
