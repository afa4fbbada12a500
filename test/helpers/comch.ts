/** Starting the scriptable comch fixtures in a test's own fabric. */
import { connect } from 'node:net';
import type { TestContext } from 'node:test';
import { FrameReader, FrameType } from '../../src/comch/wire.js';
import { type Child, type Exit, spawnChild } from './child.js';
import { until } from './wait.js';

export function startServer(t: TestContext, fabricDir: string, options: Record<string, unknown> = {}, env: Record<string, string> = {}): Child {
  return spawnChild(t, 'comch-server', [JSON.stringify(options)], { env: { SOFTDPU_FABRIC: fabricDir, ...env } });
}

export function startClient(t: TestContext, fabricDir: string, options: Record<string, unknown> = {}, env: Record<string, string> = {}): Child {
  return spawnChild(t, 'comch-client', [JSON.stringify(options)], { env: { SOFTDPU_FABRIC: fabricDir, ...env } });
}

/** Lines of `child` matching `re`, in order. */
export function linesOf(child: Child, re: RegExp): string[] {
  return child.lines.filter((l) => re.test(l));
}

/** Waits until `count` lines match `re` (and fails at once if `child` ended with fewer). */
export async function waitCount(child: Child, re: RegExp, count: number, timeoutMs = 20_000): Promise<string[]> {
  let ended: Exit | undefined;
  void child.exited.then((e) => (ended = e));
  await until(
    () => {
      if (linesOf(child, re).length >= count) return true;
      // Ended, with an exit code or by a signal: `exited` resolves once its output is drained.
      if (ended) throw new Error(`pid ${child.pid} exited with ${ended.code ?? ended.signal}; ${linesOf(child, re).length} of ${count} lines matching ${re}; stderr: ${child.stderr.join('').slice(-1500)}`);
      return false;
    },
    () => `pid ${child.pid}: ${linesOf(child, re).length} of ${count} lines matching ${re}; last lines: ${JSON.stringify(child.lines.slice(-8))} stderr: ${child.stderr.join('').slice(-1500)}`,
    timeoutMs,
  );
  return linesOf(child, re).slice(0, count);
}

/**
 * Sends `bytes` to a comch server's socket (`end`: then half-closes); the REJECT code it answers with,
 * or 'closed' when it drops the connection without one.
 */
export function knock(path: string, bytes: Buffer, end = false): Promise<number | 'closed'> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const reader = new FrameReader();
    socket.on('connect', () => (end ? socket.end(bytes) : socket.write(bytes)));
    socket.on('data', (chunk) => {
      const [frame] = reader.push(chunk);
      if (frame?.type === FrameType.REJECT) resolve(frame.reject.code);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve('closed'));
  });
}
