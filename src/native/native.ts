/**
 * Everything the C addon (`softdpu.c`) exports, declared once. Nothing else in the package talks to the
 * addon directly; `fabric/segment.ts` wraps it.
 */

/** A mapping made by {@link Native.segmentCreate} or {@link Native.segmentOpen}. */
export interface NativeMapping {
  /** Opaque handle for the other calls; stale handles are refused, never reused. */
  readonly handle: number;
  /** External, non-shared ArrayBuffer over the mapping; detached (length 0) once the segment is closed. */
  readonly buffer: ArrayBuffer;
  /** memfd of a created segment (reachable by peers as /proc/<pid>/fd/<fd>), -1 for an opened one. */
  readonly fd: number;
  readonly size: number;
}

/** Results of the futex waits, as numbers to keep the hot path allocation-free. */
export const WaitResult = {
  /** Woken, or (async) the word no longer holds the expected value. */
  Ok: 0,
  /** The word did not hold the expected value when the wait began (sync waits only). */
  NotEqual: 1,
  TimedOut: 2,
  /** Cancelled by waitCancel, or the segment was unmapped. */
  Cancelled: 3,
} as const;
export type WaitResult = (typeof WaitResult)[keyof typeof WaitResult];

export type WaitCallback = (result: WaitResult, id: number) => void;

/**
 * The addon. Errors are thrown as `Error` with a `code` of `ERR_SOFTDPU_*`
 * (ARGS, RANGE, HANDLE, CLOSED, BUSY, NOT_FOUND, OS, NAPI); `fabric/segment.ts` maps them to DocaError.
 */
export interface Native {
  /** memfd_create + ftruncate + mmap(MAP_SHARED); the memfd stays open until the segment is closed. */
  segmentCreate(size: number, label: string): NativeMapping;
  /** Opens and maps a segment of another process (by /proc/<pid>/fd/<n>) whose size must be `expectedSize`. */
  segmentOpen(path: string, expectedSize: number): NativeMapping;
  /** Detaches the ArrayBuffer, then unmaps; throws ERR_SOFTDPU_BUSY while async waits are in flight. */
  segmentClose(handle: number): void;
  /** FUTEX_WAIT on the 32-bit word at `byteOffset`; EINTR-safe against an absolute deadline. Infinity: no timeout. */
  futexWait(handle: number, byteOffset: number, expected: number, timeoutMs: number): WaitResult;
  /** FUTEX_WAKE; returns how many waiters were woken. */
  futexWake(handle: number, byteOffset: number, count: number): number;
  /**
   * Registers an async wait with the process's waiter thread. The callback runs on this thread's event
   * loop with Ok once the word differs from `expected`, TimedOut, or Cancelled. `keepAlive` decides
   * whether the pending wait keeps the event loop alive. Returns the wait id.
   */
  waitAsync(
    handle: number,
    byteOffset: number,
    expected: number,
    timeoutMs: number,
    keepAlive: boolean,
    callback: WaitCallback,
  ): number;
  /**
   * Cancels an async wait not yet delivered; true if there was one. Not `quiet`: its callback then
   * reports Cancelled. `quiet`: its callback never runs.
   */
  waitCancel(id: number, quiet: boolean): boolean;
  /** sched_yield(2). */
  schedYield(): void;
}
