/**
 * The futex words a sleeping context waits on, registered together when its engine arms a notification
 * and cancelled together when it clears it. Whichever changes first calls `notify`.
 */
import { Segment } from './segment.js';

export class WakeSet {
  private ids: number[] = [];

  constructor(private readonly notify: () => void) {}

  /** Wakes when the 32-bit word at `offset` of `segment` no longer holds `expected`. */
  add(segment: Segment, offset: number, expected: number): void {
    if (!segment.closed) this.ids.push(segment.watch(offset, expected, this.notify));
  }

  clear(): void {
    for (const id of this.ids) Segment.unwatch(id);
    this.ids = [];
  }
}
