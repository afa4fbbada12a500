/**
 * The DPA's side of a DPA consumer's receive queue (a consumer queue segment, comch/consumer-queue.ts):
 * what the owner (stopping the consumer, or a DPA that failed) and the execution units (a consumer that
 * ended) both do to it. DPA code posts receives from shared state (dev/comch-msgq.ts), so the queue's
 * post tail is read from the segment, never from the owner's `ConsumerQueue`, which did not post them.
 */
import { QUEUE_LAYOUT as Q } from '../comch/consumer-queue.js';

/**
 * Withdraws every posted receive no producer claimed yet: the claim head moves up to the post tail, so
 * producers find nothing to claim (a claim head already at or past it stays where it is).
 */
export function withdrawPosted(i32: Int32Array): void {
  for (;;) {
    const head = Atomics.load(i32, Q.CLAIM_HEAD / 4);
    const tail = Atomics.load(i32, Q.POST_TAIL / 4);
    if (((tail - head) | 0) <= 0 || Atomics.compareExchange(i32, Q.CLAIM_HEAD / 4, head, tail) === head) return;
  }
}
