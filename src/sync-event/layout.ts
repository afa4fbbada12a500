/**
 * A sync event's control block: one small segment per event, made by its creator.
 *
 *   64   u64 value (unless the program supplied the counter memory: set_addr / set_doca_buf)
 *   128  i32 sleeping waiters (engines in notification mode waiting on this event, any process)
 *   192  i32 bell (bumped and woken by an update when someone sleeps)
 *   196  i32 state (1 live, 2 destroyed by its creator)
 *
 * Updates are atomics on the value; an updater rings the bell only when a waiter announced itself,
 * so the data path makes no syscall while nobody sleeps.
 */
import { Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';

export const SE_VALUE = 64;
export const SE_WAITERS = 128;
export const SE_BELL = 192;
export const SE_STATE = 196;
const SIZE = 256;
export const SE_LIVE = 1;
export const SE_DESTROYED = 2;

export function createControl(): Segment {
  const seg = Segment.create('syncevent', SIZE - SEGMENT_HEADER_SIZE);
  Atomics.store(seg.i32, SE_STATE / 4, SE_LIVE);
  return seg;
}

/** Rings the bell: every sleeping waiter wakes and looks again. */
export function ring(control: Segment): void {
  Atomics.add(control.i32, SE_BELL / 4, 1);
  control.wake(SE_BELL);
}

/** Rings the bell if a waiter sleeps: call after every update. */
export function ringIfWaiting(control: Segment): void {
  if (Atomics.load(control.i32, SE_WAITERS / 4) > 0) ring(control);
}
