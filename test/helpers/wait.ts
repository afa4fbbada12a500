/** The tests' one bounded wait. */

/**
 * Polls (every 2 ms, letting the event loop turn) until `cond` holds; after `timeoutMs` fails naming
 * `what` (a function is asked only then, so it can describe the state at that moment).
 */
export async function until(cond: () => boolean, what: string | (() => string), timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
