/** The tests' bounded waits: `until` polls a condition, `firstMessage` waits for a worker's word. */
import type { Worker } from 'node:worker_threads';

/**
 * Bound of a wait when none is given: far beyond what any event a test waits for takes, even on a
 * shared 2-CPU machine under load. It only detects a hang.
 */
export const WAIT_MS = 10_000;

/**
 * Polls (every 2 ms, letting the event loop turn) until `cond` holds; after `timeoutMs` fails naming
 * `what` (a function is asked only then, so it can describe the state at that moment). `cond` may be
 * async (e.g. it asks a command): it is then awaited, one call at a time.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = WAIT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * The first message `worker` posts. Fails naming `what` if the worker errors or exits first, or says
 * nothing within `timeoutMs`.
 */
export function firstMessage<T>(worker: Worker, what: string, timeoutMs = WAIT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (message: T) => (off(), resolve(message));
    const onError = (err: Error) => (off(), reject(new Error(`the worker failed before ${what}: ${err.message}`, { cause: err })));
    const onExit = (exitCode: number) => (off(), reject(new Error(`the worker exited (code ${exitCode}) before ${what}`)));
    const timer = setTimeout(() => (off(), reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))), timeoutMs);
    function off(): void {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    }
    worker.once('message', onMessage).once('error', onError).once('exit', onExit);
  });
}
