/** The tests' one bounded wait. */

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
