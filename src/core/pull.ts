/**
 * A pull-based async iterator: at most one `next()` waits at a time, and the source hands it a value
 * only while it waits, so nothing is buffered and nothing is lost when the consumer `break`s out (the
 * unread data stays where it was, e.g. in a receive queue that keeps applying flow control).
 *
 * `options.signal` ends the iteration with the signal's reason; `options.timeoutMs` bounds each `next()`:
 * a wait that long ends the iteration with TIME_OUT.
 */
import { DocaError } from './error.js';
import { settled } from './settled.js';
import type { WaitOptions } from './wait.js';

interface Waiter<T> {
  resolve: (r: IteratorResult<T>) => void;
  reject: (err: unknown) => void;
}

/** Settles a waiting `next()`: with `err`, else `result`; a busy driver then lets its continuation run (settled.ts). */
function settleWaiter<T>(w: Waiter<T>, err: unknown, result: IteratorResult<T>): void {
  settled.any = true;
  if (err === undefined) w.resolve(result);
  else w.reject(err);
}

export class PullIterator<T> implements AsyncIterableIterator<T> {
  private waiter: Waiter<T> | undefined;
  private done = false;
  private failure: unknown;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** Called once when the iterator ends (break, return, abort, end or failure). */
    private readonly onClose: () => void,
    /** Called when a `next()` starts waiting, so the source can look for a value. */
    private readonly onWant: () => void,
    private readonly options: WaitOptions = {},
    /** What is iterated, for messages. */
    private readonly what = 'messages',
  ) {
    const ms = options.timeoutMs;
    if (ms !== undefined && !(typeof ms === 'number' && ms >= 0)) throw new DocaError('INVALID_VALUE', what, `timeoutMs ${String(ms)} is not a number of milliseconds >= 0`);
    if (options.signal?.aborted) queueMicrotask(this.onAbort);
    else options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** True while a `next()` waits for a value. */
  get wants(): boolean {
    return this.waiter !== undefined;
  }

  /**
   * Takes the waiting `next()` for a value to be handed over later (e.g. inside a progress engine's
   * next unit of work): returns its resolver, or undefined if none waits. The iterator stops wanting.
   */
  claim(): ((value: T) => void) | undefined {
    const w = this.waiter;
    if (!w) return undefined;
    this.waiter = undefined;
    this.stopTimer();
    return (value) => settleWaiter(w, undefined, { value, done: false });
  }

  /** Hands a value to the waiting `next()`; false if none waits (keep the value). */
  deliver(value: T): boolean {
    const w = this.waiter;
    if (!w) return false;
    this.waiter = undefined;
    this.stopTimer();
    settleWaiter(w, undefined, { value, done: false });
    return true;
  }

  /** Ends the iteration normally (the source is gone). */
  end(): void {
    this.close(undefined);
  }

  /** Ends the iteration with an error thrown by the next `next()`. */
  fail(err: unknown): void {
    this.close(err);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.failure !== undefined) {
      const err = this.failure;
      this.failure = undefined;
      return Promise.reject(err);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter) return Promise.reject(new DocaError('BAD_STATE', this.what, 'a previous next() is still pending'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      const ms = this.options.timeoutMs;
      if (ms !== undefined && ms !== Infinity) {
        this.timer = setTimeout(() => this.close(new DocaError('TIME_OUT', this.what, `nothing arrived within ${ms} ms`)), Math.min(ms, 2 ** 31 - 1));
      }
      this.onWant();
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.close(undefined);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private readonly onAbort = () => this.close(this.options.signal!.reason);

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private close(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.stopTimer();
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.onClose();
    const w = this.waiter;
    this.waiter = undefined;
    if (w) {
      settleWaiter(w, err, { value: undefined, done: true });
    } else if (err !== undefined) {
      this.failure = err;
    }
  }
}
