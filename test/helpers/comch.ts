/** Starting the scriptable comch fixtures in a test's own fabric. */
import type { TestContext } from 'node:test';
import { type Child, spawnChild } from './child.js';

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

/** Waits until `count` lines match `re`. */
export async function waitCount(child: Child, re: RegExp, count: number, timeoutMs = 20_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (linesOf(child, re).length < count) {
    if (Date.now() > deadline) throw new Error(`pid ${child.pid}: ${linesOf(child, re).length} of ${count} lines matching ${re}; last lines: ${JSON.stringify(child.lines.slice(-8))} stderr: ${child.stderr.join('').slice(-1500)}`);
    // Ended, with an exit code or by a signal: once its output is drained, the lines are all there are.
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      const { code, signal } = await child.exited;
      if (linesOf(child, re).length >= count) break;
      throw new Error(`pid ${child.pid} exited with ${code ?? signal}; ${linesOf(child, re).length} of ${count} lines matching ${re}; stderr: ${child.stderr.join('').slice(-1500)}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return linesOf(child, re).slice(0, count);
}
