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

/** Results of the blocking waits, as numbers to keep the hot path allocation-free. */
export const WaitResult = {
  /** Woken (futex), or the fd is readable (poll). */
  Ok: 0,
  /** The word did not hold the expected value when the wait began (futex). */
  NotEqual: 1,
  TimedOut: 2,
} as const;
export type WaitResult = (typeof WaitResult)[keyof typeof WaitResult];

/** What {@link Native.pipeRing} did. */
export const RingResult = {
  Rung: 0,
  /** The pipe already held unread bytes: the reader is being woken anyway. */
  AlreadyRung: 1,
  /** Nobody reads the pipe any more (its owner closed it or died). */
  Gone: 2,
} as const;
export type RingResult = (typeof RingResult)[keyof typeof RingResult];

/** A pipe made by {@link Native.pipeCreate}: both ends non-blocking and close-on-exec. */
export interface NativePipe {
  readonly readFd: number;
  readonly writeFd: number;
  /** The pipe's inode, which openers check so that a reused fd number never reaches another file. */
  readonly inode: number;
}

/**
 * The addon. Errors are thrown as `Error` with a `code` of `ERR_SOFTDPU_*`
 * (ARGS, RANGE, HANDLE, CLOSED, NOT_FOUND, OS, NAPI); the fabric layer maps them to DocaError.
 */
export interface Native {
  /** memfd_create + ftruncate + mmap(MAP_SHARED); the memfd stays open until the segment is closed. */
  segmentCreate(size: number, label: string): NativeMapping;
  /** Opens and maps a segment of another process (by /proc/<pid>/fd/<n>) whose size must be `expectedSize`. */
  segmentOpen(path: string, expectedSize: number): NativeMapping;
  /** Detaches the ArrayBuffer, then unmaps. */
  segmentClose(handle: number): void;
  /** FUTEX_WAIT on the 32-bit word at `byteOffset`; EINTR-safe against an absolute deadline. Infinity: no timeout. */
  futexWait(handle: number, byteOffset: number, expected: number, timeoutMs: number): WaitResult;
  /** FUTEX_WAKE; returns how many waiters were woken. */
  futexWake(handle: number, byteOffset: number, count: number): number;
  /** pipe2(O_NONBLOCK | O_CLOEXEC): a doorbell. */
  pipeCreate(): NativePipe;
  /** Opens a doorbell's write end (`/proc/<pid>/fd/<n>`); NOT_FOUND unless it is a pipe with `inode`. */
  pipeOpen(path: string, inode: number): number;
  /** Writes one byte: one syscall, never blocks. */
  pipeRing(fd: number): RingResult;
  /** Reads whatever the pipe holds (non-blocking); returns the byte count. */
  pipeDrain(fd: number): number;
  /** poll(2) for readability, blocking this thread; Infinity: no timeout. */
  fdPoll(fd: number, timeoutMs: number): WaitResult;
  fdClose(fd: number): void;
  /** SO_PEERCRED of a connected Unix socket: [pid, uid, gid] of the process at its other end. */
  peerCred(fd: number): [number, number, number];
  /**
   * Has this thread's event loop poll `fd` (registered once): when it is readable the loop drains it and
   * calls `callback` (microtasks run right after). Unreferenced until {@link Native.fdWatchRef}.
   * Returns the watch id.
   */
  fdWatch(fd: number, callback: () => void): number;
  /** Whether the watch keeps the event loop alive (no syscall). */
  fdWatchRef(id: number, ref: boolean): void;
  /** Stops a watch: its callback never runs again. The fd stays open. */
  fdUnwatch(id: number): void;
  /** sched_yield(2). */
  schedYield(): void;
}
