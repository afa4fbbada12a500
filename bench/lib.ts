/** Shared by the benchmarks: the C reference build, statistics, child processes, and the report. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Compiles `bench/c/<name>.c` with the system C compiler into build/bench (skipped when up to date). */
export function buildC(name: string): string {
  const src = join(root, 'bench', 'c', `${name}.c`);
  const out = join(root, 'build', 'bench', name);
  if (!existsSync(out) || statSync(out).mtimeMs < statSync(src).mtimeMs) {
    mkdirSync(dirname(out), { recursive: true });
    execFileSync(process.env.CC ?? 'cc', ['-O2', '-Wall', '-o', out, src], { stdio: 'inherit' });
  }
  return out;
}

/** Runs a C reference and parses the JSON line it prints. */
export function runC<T>(binary: string, args: string[]): T {
  return JSON.parse(execFileSync(binary, args, { encoding: 'utf8' })) as T;
}

/** Median and 99th percentile of `samples` after dropping the first 10% (warm-up). */
export function percentiles(samples: number[]): { p50: number; p99: number } {
  const kept = samples.slice(Math.floor(samples.length / 10)).sort((a, b) => a - b);
  return { p50: kept[Math.floor(kept.length / 2)]!, p99: kept[Math.floor(kept.length * 0.99)]! };
}

/** GB/s of `copy` walking a 64 MiB destination in `size` steps; best of 5 runs of 512 MiB. */
export function bandwidth(size: number, dst: Uint8Array, copy: (src: Uint8Array, dst: Uint8Array, offset: number) => void): number {
  const src = Buffer.alloc(size, 0x5a);
  const slots = Math.floor(dst.length / size);
  let best = 0;
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now();
    let bytes = 0;
    for (let k = 0; bytes < 512 << 20; k++, bytes += size) copy(src, dst, (k % slots) * size);
    best = Math.max(best, bytes / ((performance.now() - t0) * 1e6));
  }
  return best;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Round-trip percentiles, as a ping side prints them. */
export interface Rtt {
  p50_us: number;
  p99_us: number;
}

/** How often each measurement runs; the median of the runs is reported. */
export const RUNS = 3;

/** Runs `fn` `runs` times, one after the other. */
export async function repeat<T>(fn: () => T | Promise<T>, runs = RUNS): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn());
  return out;
}

/**
 * The median of each numeric field over `runs` (of `Rtt`s: the median p50 and the median p99); other
 * fields (a C reference's echoed `mode`) are the first run's.
 */
export function medians<T extends object>(runs: T[]): T {
  const first = runs[0] as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(first).map(([k, v]) => [k, typeof v === 'number' ? median(runs.map((r) => (r as Record<string, number>)[k]!)) : v]));
  return out as T;
}

/** Runs `fn` with a fresh directory under /tmp (a fabric, sockets), removed afterwards in any case. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync('/tmp/sdpu-bench-');
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
}

/** Starts `dist/bench/<name>.js` (on `cpu` when given and pinning works). */
export function startNode(name: string, args: string[], cpu?: number, env: Record<string, string> = {}): NodeProcess {
  const script = [process.execPath, join(root, 'dist', 'bench', `${name}.js`), ...args];
  const [cmd, ...argv] = cpu !== undefined && canPin ? ['taskset', '-c', String(cpu), ...script] : script;
  const child = spawn(cmd!, argv, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
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
  return { ready, done, kill: () => child.kill('SIGKILL') };
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

/** Starts a server process, runs a client against it, and returns the JSON the reporting side printed. */
export async function serverAndClient<T>(server: [string, string[]], client: [string, string[]], env: Record<string, string>, report: 'server' | 'client'): Promise<T> {
  const srv = startNode(server[0], server[1], 1, env);
  await srv.ready;
  const cli = startNode(client[0], client[1], 0, env);
  const [s, c] = await together([srv, cli]);
  return JSON.parse(report === 'server' ? s : c) as T;
}

export interface Row {
  what: string;
  softdpu: string;
  reference: string;
  ratio: string;
}

/** Prints rows as an aligned table. */
export function printTable(title: string, rows: Row[]): void {
  const header: Row = { what: 'measurement', softdpu: 'softdpu (Node)', reference: 'reference', ratio: 'ratio' };
  const all = [header, ...rows];
  const width = (k: keyof Row) => Math.max(...all.map((r) => r[k].length));
  const line = (r: Row) => `  ${r.what.padEnd(width('what'))}  ${r.softdpu.padStart(width('softdpu'))}  ${r.reference.padStart(width('reference'))}  ${r.ratio.padStart(width('ratio'))}`;
  process.stdout.write(`\n${title}\n${line(header)}\n${all.slice(1).map(line).join('\n')}\n`);
}

export const us = (x: number) => `${x.toFixed(2)} us`;
export const gbps = (x: number) => `${x.toFixed(2)} GB/s`;
export const ratio = (x: number) => `${x.toFixed(2)}x`;
export const msgRate = (x: number) => `${(x / 1e6).toFixed(2)} M msg/s`;
