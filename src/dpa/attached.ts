/**
 * What the DPA's completion contexts that activate a DPA thread share: `ThreadAttached`, the base of
 * DpaCompletion (completion.ts), DpaNotificationCompletion (notification-completion.ts) and
 * ComchConsumerCompletion (consumer-completion.ts). Attaching a thread makes the context activate it,
 * while armed (cq.ts): contexts start armed, and DPA code re-arms with `*_request_notification`.
 */
import { DpaObject } from './object.js';
import { ATTACHED } from './objects.js';
import type { DpaThread } from './thread.js';

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
    const objects = this.dpaRun.objects;
    objects.store(this.index, ATTACHED.THREAD, this.thread ? this.thread.index + 1 : 0);
    objects.store(this.index, ATTACHED.THREAD_GEN, this.thread ? objects.generation(this.thread.index) : 0);
    objects.store(this.index, ATTACHED.ARMED, 1);
  }

  protected detach(): void {
    this.thread?._users.delete(this);
    this.thread = undefined;
  }
}
