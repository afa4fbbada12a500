/**
 * Child processes for tests that cross the fabric: a fixture script from dist/test/fixtures, with its
 * stdout read line by line, killed when the test ends. Fixtures exit on their own when the test
 * runner dies (their stdin closes), so no child outlives its test.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FabricSnapshot } from '../../src/fabric/stats-reader.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const cliPath = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class Child {
  readonly lines: string[] = [];
  /** When each of `lines` arrived (ms since this child was spawned), for the story of a failure. */
  readonly times: number[] = [];
  private readonly born = performance.now();
  readonly stderr: string[] = [];
  readonly exited: Promise<Exit>;
  private waiters: { re: RegExp; resolve: (m: RegExpMatchArray, index: number) => void }[] = [];
  private stderrWaiters: (() => void)[] = [];

  constructor(readonly proc: ChildProcess) {
    let partial = '';
    proc.stdout!
      .setEncoding('utf8')
      .on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop()!;
        for (const line of parts) this.onLine(line);
      })
      .on('end', () => {
        // A last line without a newline is a line all the same.
        if (partial) this.onLine(partial);
        partial = '';
      });
    proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr.push(chunk);
      for (const look of [...this.stderrWaiters]) look();
    });
    // 'close', not 'exit': by then stdout and stderr are drained, so `lines` and `stderr` are complete.
    this.exited = new Promise((resolve) => proc.once('close', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Resolves with the first line (seen or to come) matching `re`; rejects after `timeoutMs` or on exit. */
  async waitFor(re: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
    return (await this.waitForLine(re, timeoutMs)).match;
  }

  /**
   * The first line from index `from` on (seen or to come) matching `re`, with its index; rejects after
   * `timeoutMs` or on exit.
   */
  waitForLine(re: RegExp, timeoutMs = 15_000, from = 0): Promise<{ match: RegExpMatchArray; index: number }> {
    for (let index = from; index < this.lines.length; index++) {
      const match = this.lines[index]!.match(re);
      if (match) return Promise.resolve({ match, index });
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      const fail = (why: string) => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`waiting for ${re} from pid ${this.pid}: ${why}; stdout: ${JSON.stringify(this.lines.slice(-10))} stderr: ${this.stderr.join('').slice(-2000)}`));
      };
      const waiter = {
        re,
        resolve: (match: RegExpMatchArray, index: number) => {
          clearTimeout(timer);
          resolve({ match, index });
        },
      };
      this.waiters.push(waiter);
      void this.exited.then((e) => {
        if (this.waiters.includes(waiter)) {
          clearTimeout(timer);
          fail(`exited with ${e.code ?? e.signal}`);
        }
      });
    });
  }

  /**
   * Resolves once the stderr seen so far satisfies `holds` (looked at on every chunk); rejects, naming
   * `what` and the stderr's tail, after `timeoutMs` or when the child exits first.
   */
  waitForStderr(holds: (text: string) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (holds(this.stderr.join(''))) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (error?: string) => {
        clearTimeout(timer);
        this.stderrWaiters = this.stderrWaiters.filter((w) => w !== look);
        if (error) reject(new Error(`pid ${this.pid} ${error} before it logged ${what}; stderr: ${this.stderr.join('').slice(-2000)}`));
        else resolve();
      };
      const look = () => holds(this.stderr.join('')) && done();
      const timer = setTimeout(() => done(`took more than ${timeoutMs} ms`), timeoutMs);
      this.stderrWaiters.push(look);
      void this.exited.then((e) => this.stderrWaiters.includes(look) && done(`exited with ${e.code ?? e.signal}`));
    });
  }

  send(line: string): void {
    this.proc.stdin!.write(line + '\n');
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }

  /** The lines with the time each arrived (+ms since spawn), one a line: the first and last `max / 2`. */
  story(max = 80): string {
    const at = (i: number) => `+${Math.round(this.times[i]!)} ${this.lines[i]}`;
    const n = this.lines.length;
    if (n <= max) return this.lines.map((_, i) => at(i)).join('\n');
    const head = Array.from({ length: max / 2 }, (_, i) => at(i));
    const tail = Array.from({ length: max / 2 }, (_, i) => at(n - max / 2 + i));
    return [...head, `... ${n - max} more lines ...`, ...tail].join('\n');
  }

  private onLine(line: string): void {
    this.lines.push(line);
    this.times.push(performance.now() - this.born);
    for (const w of [...this.waiters]) {
      const m = line.match(w.re);
      if (m) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(m, this.lines.length - 1);
      }
    }
  }
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Run a script other than a fixture (e.g. the CLI). */
  script?: string;
}

/** Starts `dist/test/fixtures/<name>.js` (or `options.script`) and kills it when the test ends. */
export function spawnChild(t: TestContext, name: string, args: string[] = [], options: SpawnOptions = {}): Child {
  const script = options.script ?? join(fixtures, `${name}.js`);
  const proc = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const child = new Child(proc);
  t.after(async () => {
    child.kill();
    await child.exited;
  });
  return child;
}

/** Runs the CLI to completion. */
export async function runCli(t: TestContext, args: string[], env: Record<string, string> = {}): Promise<{ exit: Exit; stdout: string; stderr: string }> {
  const child = spawnChild(t, 'cli', args, { script: cliPath, env });
  const exit = await child.exited;
  return { exit, stdout: child.lines.join('\n'), stderr: child.stderr.join('') };
}

/** `softdpu top --once --json` on the fabric in `dir`: the observer's snapshot (exit 0 asserted, stderr as the message). */
export async function topJson(t: TestContext, dir: string): Promise<FabricSnapshot> {
  const { exit, stdout, stderr } = await runCli(t, ['top', '--once', '--json', '--fabric', dir]);
  assert.equal(exit.code, 0, stderr);
  return JSON.parse(stdout) as FabricSnapshot;
}

/** Starts a DOCA sample through the CLI, `softdpu sample <args...> --fabric <dir>`, killed when the test ends. */
export function sample(t: TestContext, dir: string, args: string[]): Child {
  return spawnChild(t, 'sample', ['sample', ...args, '--fabric', dir], { script: cliPath });
}

/**
 * Waits for `child` to end and asserts it exited with `code` (not by a signal); the assertion message
 * carries its stderr, and that of `peers` (the other side of a pair, whose log often tells why).
 */
export async function assertExit(child: Child, code: number, peers: Child[] = []): Promise<Exit> {
  const exit = await child.exited;
  const logs = [child, ...peers].map((c) => `--- stderr of pid ${c.pid}${c === child ? '' : ' (peer)'}:\n${c.stderr.join('').slice(-4000)}`).join('\n');
  assert.deepEqual(exit, { code, signal: null }, `pid ${child.pid} exited with ${exit.code ?? exit.signal}, expected ${code}\n${logs}`);
  return exit;
}

/** How a command ran: its exit and everything it printed. */
export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion in its own process group; the group is killed after `timeoutMs` or when the test ends. */
export function runCommand(t: TestContext, cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  const proc: ChildProcess = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killGroup = () => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  t.after(killGroup);
  let stdout = '';
  let stderr = '';
  proc.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const timer = setTimeout(() => {
    stderr += `\n[killed after ${timeoutMs} ms]`;
    killGroup();
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    proc.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(); // whatever it started and left running
      resolve({ code, signal, stdout, stderr });
    });
  });
}
