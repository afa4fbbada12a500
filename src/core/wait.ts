/** The one way softdpu waits for something beyond DOCA's API: with an optional AbortSignal and timeout. */
import { DocaError } from './error.js';
import { settled as adapterSettled } from './settled.js';

/** setTimeout's limit (~24.8 days); longer finite timeouts are clamped to it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How long softdpu's promise and iterator adapters may wait (`waitForState`, `connected`, `messages`,
 * `waitNotification`...): DOCA itself never blocks, so these bounds are softdpu's own.
 */
export interface WaitOptions {
  /** Ends the wait: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Milliseconds, >= 0; `undefined` or `Infinity`: no timeout. */
  timeoutMs?: number;
}

/**
 * A promise settled by whatever `attach` hooks up, or by the signal (rejects with its reason), or by the
 * timeout (settles with what `onTimeout` returns: an Error rejects, anything else resolves). The detach
 * function `attach` returns runs exactly once, however the wait ends.
 */
export function boundedWait<T>(
  options: WaitOptions,
  onTimeout: () => T | Error,
  attach: (resolve: (value: T) => void, reject: (err: unknown) => void) => () => void,
): Promise<T> {
  const { signal, timeoutMs } = options;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs >= 0)) {
    return Promise.reject(new DocaError('INVALID_VALUE', 'wait', `timeoutMs ${String(timeoutMs)} is not a number of milliseconds >= 0`));
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let detach: () => void = () => {};
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      adapterSettled.any = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      detach();
      settle();
    };
    const onAbort = () => finish(() => reject(signal!.reason));
    detach = attach(
      (value) => finish(() => resolve(value)),
      (err) => finish(() => reject(err)),
    );
    if (settled) {
      detach();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined && timeoutMs !== Infinity) {
      timer = setTimeout(() => {
        const outcome = onTimeout();
        finish(() => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
      }, Math.min(timeoutMs, MAX_TIMER_MS));
    }
  });
}
