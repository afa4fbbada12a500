/** The processes a benchmark runs: Node peers from dist/bench, the C references from bench/c, their pinning. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { root } from './config.js';
import { medians, repeat, type Rtt, type StreamRate } from './measure.js';

/** The C reference's trailing CPU arguments: the same pinning as the Node sides (first, second). */
export const cpuArgs = (cpus: [number, number] = [0, 1]): string[] => (canPin ? cpus.map(String) : []);

/** Compiles `bench/c/<name>.c` with the system C compiler into build/bench (skipped when up to date). */
export function buildC(name: string): string {
  const src = join(root, 'bench', 'c', `${name}.c`);
  const out = join(root, 'build', 'bench', name);
  const newest = Math.max(statSync(src).mtimeMs, statSync(join(root, 'bench', 'c', 'bench.h')).mtimeMs);
  if (!existsSync(out) || statSync(out).mtimeMs < newest) {
    mkdirSync(dirname(out), { recursive: true });
    execFileSync(process.env.CC ?? 'cc', ['-O2', '-Wall', '-o', out, src], { stdio: 'inherit' });
  }
  return out;
}

/** Runs a C reference and parses the JSON line it prints. */
export function runC<T>(binary: string, args: string[]): T {
  return JSON.parse(execFileSync(binary, args, { encoding: 'utf8' })) as T;
}

/** Runs `fn` with a fresh directory under $TMPDIR or /tmp (a fabric, sockets), removed afterwards in any case. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'sdpu-bench-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether `taskset` can pin processes here (util-linux). */
export const canPin = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
})();

export interface NodeProcess {
  /** Resolves once the process printed `ready` (servers), or exited. */
  ready: Promise<void>;
  /** Resolves with everything it printed after `ready`, once it exited with 0. */
  done: Promise<string>;
  /** Kills it (a peer failed, so it would wait forever). */
  kill(): void;
  readonly pid: number;
  /** Writes to its stdin (the peers that take commands read them there). */
  send(text: string): void;
}

/**
 * Starts `dist/bench/<name>.js`, or the program at `name` when it is a path (a C peer built by
 * lib/capi.ts), on `cpu` when given and pinning works.
 */
export function startNode(name: string, args: string[], cpu?: number, env: Record<string, string> = {}): NodeProcess {
  const script = name.includes('/') ? [name, ...args] : [process.execPath, join(root, 'dist', 'bench', `${name}.js`), ...args];
  const [cmd, ...argv] = cpu !== undefined && canPin ? ['taskset', '-c', String(cpu), ...script] : script;
  const child = spawn(cmd!, argv, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  let out = '';
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (out.startsWith('ready\n')) {
      out = out.slice(6);
      markReady();
    }
  });
  // 'close', not 'exit': by then its stdout is drained, so `out` holds everything it printed.
  const done = new Promise<string>((resolve, reject) =>
    child.once('close', (code, signal) => {
      markReady();
      if (code === 0) resolve(out);
      else reject(new Error(`bench process ${name} ${args.join(' ')} exited with ${code ?? signal}`));
    }),
  );
  return { ready, done, kill: () => child.kill('SIGKILL'), pid: child.pid!, send: (text) => child.stdin.write(text) };
}

/** Runs `dist/bench/<name>.js` to completion and resolves with its output. */
export function runNode(name: string, args: string[], cpu?: number, env: Record<string, string> = {}): Promise<string> {
  return startNode(name, args, cpu, env).done;
}

/**
 * Waits for processes that work together (peers), resolving with each one's output. Whichever fails,
 * the others would wait for it forever: they are killed, and this rejects with the first failure.
 */
export async function together(peers: NodeProcess[]): Promise<string[]> {
  const killAll = () => peers.forEach((p) => p.kill());
  return Promise.all(peers.map((p) => p.done.catch((err: unknown) => (killAll(), Promise.reject(err)))));
}

/**
 * Starts a server process (cpu 1), once it is ready a client (cpu 0) (either a Node peer or a program:
 * startNode), and resolves with what each printed
 * (its last line, parsed as JSON; `{}` for a side that printed nothing).
 */
export async function serverAndClientBoth<S, C>(server: [string, string[]], client: [string, string[]], env: Record<string, string>): Promise<{ server: S; client: C }> {
  const srv = startNode(server[0], server[1], 1, env);
  await srv.ready;
  const cli = startNode(client[0], client[1], 0, env);
  const [s, c] = await together([srv, cli]);
  const last = (out: string) => JSON.parse(out.trim().split('\n').pop() || '{}');
  return { server: last(s) as S, client: last(c) as C };
}

/** Starts a server process, runs a client against it, and returns the JSON the reporting side printed. */
export async function serverAndClient<T>(server: [string, string[]], client: [string, string[]], env: Record<string, string>, report: 'server' | 'client'): Promise<T> {
  const both = await serverAndClientBoth<T, T>(server, client, env);
  return report === 'server' ? both.server : both.client;
}

/**
 * A cross-process ping-pong of two Node peers: the pinger prints rttSummary's figures (p50_us, p99_us,
 * p99_9_us, first_us, warmup_mean_us, cpu_us_per_msg), the echoer {cpu_us_per_msg}; the median of RUNS runs, with both sides' CPU per round trip.
 */
export async function pingPong(server: [string, string[]], client: [string, string[]], env: Record<string, string>, pinger: 'server' | 'client' = 'client'): Promise<Rtt> {
  type Out = Rtt & { cpu_us_per_msg: number };
  const runs = await repeat(async (): Promise<Rtt> => {
    const both = await serverAndClientBoth<Out, Out>(server, client, env);
    const [p, e] = pinger === 'client' ? [both.client, both.server] : [both.server, both.client];
    const { cpu_us_per_msg, ...latency } = p;
    return { ...latency, cpu_pinger_us_per_msg: cpu_us_per_msg, cpu_echoer_us_per_msg: e.cpu_us_per_msg };
  });
  return medians(runs);
}

/** Messages per write of the batched socket baseline. */
export const SOCKET_BATCH = 256;

/**
 * The socket streaming baseline: N messages of SIZE bytes, one write per message (batch 1) or `batch`
 * copied into each write; its receiver's StreamRate (after the warm-up, and over all), the median of RUNS runs.
 */
export async function socketStream(sock: string, n: number, size: number, batch: number, env: Record<string, string>): Promise<StreamRate> {
  return medians(await repeat(() => serverAndClient<StreamRate>(['socket-peer', ['sink', sock, String(n), String(size)]], ['socket-peer', ['flood', sock, String(n), String(size), String(batch)]], env, 'server')));
}

/**
 * The socket ping-pong baseline, both asleep, in callback style (`'data'` events) or promise style
 * (bench/socket-peer.ts promise-echo, promise-ping): SIZE-byte messages, N round trips, median of RUNS runs.
 */
export function socketRtt(sock: string, n: number, size: number, env: Record<string, string>, style: 'callbacks' | 'promises' = 'callbacks'): Promise<Rtt> {
  const role = style === 'promises' ? 'promise-' : '';
  return pingPong(['socket-peer', [`${role}echo`, sock, String(size)]], ['socket-peer', [`${role}ping`, sock, String(n), String(size)]], env);
}

/** The C limit of a sleeping round trip through shared buffers (futex wake-ups), median of RUNS runs. */
export function ringRtt(ref: string, size: number, n: number): Promise<Rtt> {
  return runCRuns<Rtt>(ref, ['ring_rtt', String(size), String(n), ...cpuArgs()]);
}

/** What one fast-path run (bench/fastpath-peer.ts) is told: sizes, counts, endpoints, posted buffers. */
export interface FastpathRun {
  size: number;
  count: number;
  consumers: number;
  producers: number;
  posted: number;
}

/** One fast-path run, consumer side first (cpu 1), producer second (cpu 0): the consumer's StreamRate. */
export async function fastpathRun(o: FastpathRun, env: Record<string, string>): Promise<StreamRate> {
  return (await serverAndClientBoth<StreamRate, unknown>(['fastpath-peer', ['consume', JSON.stringify(o)]], ['fastpath-peer', ['produce', JSON.stringify(o)]], env)).server;
}

/** A C reference's figure: the median of RUNS runs. */
export async function runCRuns<T extends object>(binary: string, args: string[]): Promise<T> {
  return medians(await repeat(() => runC<T>(binary, args)));
}

