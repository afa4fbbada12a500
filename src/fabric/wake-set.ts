/**
 * The futex words a sleeping context waits on, registered together when its engine arms a notification
 * and cancelled together when it clears it. Whichever changes first calls `notify`.
 */
import { Segment } from './segment.js';

export class WakeSet {
  private readonly ids: number[] = [];

  constructor(private readonly notify: () => void) {}

  /**
   * Wakes when the 32-bit word at `offset` of `segment` no longer holds `expected`, or after `timeoutMs`
   * (for sleepers that must look again now and then, e.g. at a peer that can die without ringing).
   */
  add(segment: Segment, offset: number, expected: number, timeoutMs = Infinity): void {
    if (!segment.closed) this.ids.push(segment.watch(offset, expected, this.notify, timeoutMs));
  }

  clear(): void {
    for (const id of this.ids) Segment.unwatch(id);
    this.ids.length = 0;
  }
}
