/**
 * The CPU side of `doca_dpa_notification_completion`: another DPA thread's `thread_notify` on its handle
 * activates its attached thread (attached.ts).
 */
import { DocaError } from '../core/error.js';
import type { Dpa } from './dpa.js';
import { ObjKind } from './layout.js';
import type { DpaThread } from './thread.js';
import { ThreadAttached } from './attached.js';

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
