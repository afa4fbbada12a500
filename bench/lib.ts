/** Shared by the benchmarks: the C reference build, statistics, child processes, and the report. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `softdpu bench --quick`: a smoke run, every message count divided by 10 and every measurement run once
 * instead of RUNS times (figures are noisier). Set by `configure()` before any benchmark starts; read
 * these live bindings when measuring, not at import.
 */
export let QUICK = false;

/** How often each measurement runs (the median of the runs is reported): 3, or 1 in a quick run. */
export let RUNS = 3;

/** `--filter REGEX`: the scenarios to measure, matched against "bench/scenario" (and the bench's name). */
let filter: RegExp | undefined;

/** The runner's settings for the benchmarks that follow. */
export function configure(o: { quick: boolean; filter?: RegExp | undefined }): void {
  QUICK = o.quick;
  RUNS = o.quick ? 1 : 3;
  filter = o.filter;
}

/** A message count: `n`, or a tenth of it (at least `min`) in a quick run. Every contender of a row gets it. */
export const count = (n: number, min = 100): number => (QUICK ? Math.max(min, Math.round(n / 10)) : n);

/** The C reference's trailing CPU arguments: the same pinning as the Node sides (first, second). */
export const cpuArgs = (cpus: [number, number] = [0, 1]): string[] => (canPin ? cpus.map(String) : []);

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

/** GB/s of `copy` walking `dst` in `size` steps; best of 5 runs of `total` bytes (default 512 MiB, 64 quick). */
export function bandwidth(size: number, dst: Uint8Array, copy: (src: Uint8Array, dst: Uint8Array, offset: number) => void, total = (QUICK ? 64 : 512) << 20): number {
  const src = Buffer.alloc(size, 0x5a);
  const slots = Math.floor(dst.length / size);
  let best = 0;
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now();
    let bytes = 0;
    for (let k = 0; bytes < total; k++, bytes += size) copy(src, dst, (k % slots) * size);
    best = Math.max(best, bytes / ((performance.now() - t0) * 1e6));
  }
  return best;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Round-trip percentiles, and each side's CPU time (user + system) per round trip where measured. */
export interface Rtt {
  p50_us: number;
  p99_us: number;
  cpu_pinger_us_per_msg?: number;
  cpu_echoer_us_per_msg?: number;
}

/**
 * For a peer process: starts a CPU meter (process.cpuUsage, user + system of the whole process, every
 * thread); the function it returns gives the microseconds used since.
 */
export function cpuMeter(): () => number {
  const start = process.cpuUsage();
  return () => {
    const d = process.cpuUsage(start);
    return d.user + d.system;
  };
}

/** For a pinging peer: prints its round trips (ms from performance.now(), as us) and its CPU per trip. */
export function printRtt(samplesUs: number[], cpuUs: number): void {
  const { p50, p99 } = percentiles(samplesUs);
  process.stdout.write(JSON.stringify({ p50_us: p50, p99_us: p99, cpu_us_per_msg: cpuUs / samplesUs.length }) + '\n');
}

/** For a peer: its CPU over `wait()` (sitting idle), in % of one core. */
export async function idleCpu(wait: () => Promise<unknown>): Promise<number> {
  const cpu = cpuMeter();
  const t0 = performance.now();
  await wait();
  return (cpu() / ((performance.now() - t0) * 1000)) * 100;
}

/** For an echoing peer: prints its CPU per message over the messages it answered. */
export function printCpu(cpuUs: number, messages: number): void {
  process.stdout.write(JSON.stringify({ cpu_us_per_msg: cpuUs / Math.max(1, messages), messages }) + '\n');
}

/** Runs `fn` `runs` times, one after the other. */
export async function repeat<T>(fn: () => T | Promise<T>, runs = RUNS): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn());
  return out;
}

/**
 * The median of each numeric field over `runs` (of `Rtt`s: the median p50 and the median p99), field by
 * field into nested objects (a peer that reports several contenders); other fields (a C reference's
 * echoed `mode`) are the first run's.
 */
export function medians<T extends object>(runs: T[]): T {
  const first = runs[0] as Record<string, unknown>;
  const field = (k: string) => runs.map((r) => (r as Record<string, unknown>)[k]);
  const out = Object.fromEntries(
    Object.entries(first).map(([k, v]) => [k, typeof v === 'number' ? median(field(k) as number[]) : v !== null && typeof v === 'object' && !Array.isArray(v) ? medians(field(k) as object[]) : v]),
  );
  return out as T;
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

/** Starts `dist/bench/<name>.js` (on `cpu` when given and pinning works). */
export function startNode(name: string, args: string[], cpu?: number, env: Record<string, string> = {}): NodeProcess {
  const script = [process.execPath, join(root, 'dist', 'bench', `${name}.js`), ...args];
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
 * Starts a server process (cpu 1), once it is ready a client (cpu 0), and resolves with what each printed
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
 * A cross-process ping-pong of two Node peers: the pinger prints {p50_us, p99_us, cpu_us_per_msg}, the
 * echoer {cpu_us_per_msg}; the median of RUNS runs, with both sides' CPU per round trip.
 */
export async function pingPong(server: [string, string[]], client: [string, string[]], env: Record<string, string>, pinger: 'server' | 'client' = 'client'): Promise<Rtt> {
  type Out = { p50_us: number; p99_us: number; cpu_us_per_msg: number };
  const runs = await repeat(async () => {
    const both = await serverAndClientBoth<Out, Out>(server, client, env);
    const [p, e] = pinger === 'client' ? [both.client, both.server] : [both.server, both.client];
    return { p50_us: p.p50_us, p99_us: p.p99_us, cpu_pinger_us_per_msg: p.cpu_us_per_msg, cpu_echoer_us_per_msg: e.cpu_us_per_msg };
  });
  return medians(runs);
}

/** Messages per write of the batched socket baseline. */
export const SOCKET_BATCH = 256;

/**
 * The socket streaming baseline: N messages of SIZE bytes, one write per message (batch 1) or `batch`
 * copied into each write; {rate (messages/s), gbps} at the receiving side, the median of RUNS runs.
 */
export async function socketStream(sock: string, n: number, size: number, batch: number, env: Record<string, string>): Promise<{ rate: number; gbps: number }> {
  return medians(await repeat(() => serverAndClient<{ rate: number; gbps: number }>(['socket-peer', ['sink', sock, String(n), String(size)]], ['socket-peer', ['flood', sock, String(n), String(size), String(batch)]], env, 'server')));
}

/** The socket ping-pong baseline (callbacks, both asleep): SIZE-byte messages, N round trips, median of RUNS runs. */
export function socketRtt(sock: string, n: number, size: number, env: Record<string, string>): Promise<Rtt> {
  return pingPong(['socket-peer', ['echo', sock, String(size)]], ['socket-peer', ['ping', sock, String(n), String(size)]], env);
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

/** One fast-path run, consumer side first (cpu 1), producer second (cpu 0): {gbps, rate} at the consumer. */
export async function fastpathRun(o: FastpathRun, env: Record<string, string>): Promise<{ gbps: number; rate: number }> {
  return (await serverAndClientBoth<{ gbps: number; rate: number }, unknown>(['fastpath-peer', ['consume', JSON.stringify(o)]], ['fastpath-peer', ['produce', JSON.stringify(o)]], env)).server;
}

/** A C reference's figure: the median of RUNS runs. */
export async function runCRuns<T extends object>(binary: string, args: string[]): Promise<T> {
  return medians(await repeat(() => runC<T>(binary, args)));
}

export interface Row {
  what: string;
  softdpu: string;
  reference: string;
  ratio: string;
  /** The target and whether this run met it ("<= 1.0x: met"), when the row has one. */
  target?: string;
}

/**
 * Prints rows as an aligned table. Latency cells read "p50 / p99", and their ratios "p50 ratio / p99
 * ratio"; "CPU" rows give each process's CPU time (user + system) per message.
 */
export function printTable(title: string, rows: Row[]): void {
  const header: Required<Row> = { what: 'measurement', softdpu: 'softdpu (Node)', reference: 'reference', ratio: 'ratio', target: 'target: this run' };
  const keys = (rows.some((r) => r.target) ? ['what', 'softdpu', 'reference', 'ratio', 'target'] : ['what', 'softdpu', 'reference', 'ratio']) as (keyof Row)[];
  const all: Row[] = [header, ...rows];
  const width = (k: keyof Row) => Math.max(...all.map((r) => (r[k] ?? '').length));
  const line = (r: Row) => '  ' + keys.map((k) => (k === 'what' || k === 'target' ? (r[k] ?? '').padEnd(width(k)) : (r[k] ?? '').padStart(width(k)))).join('  ').trimEnd();
  hooks.beforeOutput();
  process.stdout.write(`\n${title}\n${line(header)}\n${rows.map(line).join('\n')}\n`);
}

export const gbps = (x: number) => `${x.toFixed(2)} GB/s`;
export const ratio = (x: number) => `${x.toFixed(2)}x`;

// ---- scenarios: one softdpu measurement next to its baselines, for the tables, --json and --plot -------

/**
 * One contender's figures, whichever it measured: round-trip percentiles; CPU time (user + system) per
 * message of every process or thread involved (for a ping-pong also each side's); rates; idle CPU.
 */
export interface Figure {
  p50_us?: number;
  p99_us?: number;
  cpu_us_per_msg?: number;
  cpu_pinger_us_per_msg?: number;
  cpu_echoer_us_per_msg?: number;
  msgs_per_s?: number;
  gbps?: number;
  ops_per_s?: number;
  cpu_pct?: number;
  idle_cpu_pct?: number;
}
export type FigureKey = keyof Figure;

/** What softdpu is compared with, named for the tables and the plots. */
export interface Baseline extends Figure {
  label: string;
}

/** The figure a scenario is about: latency and CPU are better lower, rates higher. */
export type Metric = 'p50_us' | 'msgs_per_s' | 'gbps' | 'ops_per_s' | 'cpu_pct';

/** A target of the project: softdpu's figure, or its ratio to a baseline (`of`), against a limit. */
export interface TargetSpec {
  metric: FigureKey;
  op: '<=' | '>=' | '<';
  limit: number;
  /** The baseline (key) the limit is a ratio to; absent: a limit on softdpu's own figure. */
  of?: string;
  /** Said after the verdict, e.g. "stretch". */
  note?: string;
}
export interface TargetResult extends TargetSpec {
  /** softdpu's figure, or its ratio to the baseline. */
  value: number;
  met: boolean;
  /** The limit as written: "1.0x" (against a baseline) or "2 us". */
  bound: string;
  /** e.g. "p50 <= 1.0x socket, callbacks". */
  text: string;
}

/** What a benchmark measured for one scenario. */
export interface ScenarioSpec {
  title: string;
  metric: Metric;
  /** Messages (round trips, adds...) every contender made, and what they are. */
  count?: number;
  unit?: string;
  size_bytes?: number;
  /** The message-size sweep this scenario is a point of, plotted against size_bytes. */
  sweep?: { id: string; title: string };
  softdpu: Figure;
  /** How the tables name softdpu's contender (default "softdpu"). */
  softdpu_label?: string;
  baselines?: Record<string, Baseline>;
  targets?: TargetSpec[];
}

/** A scenario as `--json` gives it: every key always there (null where it does not apply). */
export interface Scenario {
  /** "bench/scenario", what --filter matches. */
  id: string;
  bench: string;
  title: string;
  metric: Metric;
  better: 'lower' | 'higher';
  count: number | null;
  unit: string | null;
  size_bytes: number | null;
  sweep: { id: string; title: string } | null;
  softdpu: Figure & { label: string };
  baselines: Record<string, Baseline>;
  /** softdpu / baseline, for every figure both have. */
  ratios: Record<string, Partial<Record<FigureKey, number>>>;
  targets: TargetResult[];
}

/** What the runner hears: a benchmark's scenario starts; and what it must do before a table is printed. */
export const hooks = {
  progress: (_bench: string, _scenario: string): void => {},
  beforeOutput: (): void => {},
};

let bench = '';
let recorded: Scenario[] = [];

/** The runner: `name` starts; scenarios recorded from here on are its. */
export function beginBench(name: string): void {
  bench = name;
  recorded = [];
}

/** The scenarios the current benchmark recorded. */
export const benchScenarios = (): Scenario[] => recorded;

/** Whether --filter selects scenario `id` of the current benchmark (it matches "bench/id", or the bench). */
export const selected = (id: string): boolean => !filter || filter.test(bench) || filter.test(`${bench}/${id}`);

const RATIO_KEYS: FigureKey[] = ['p50_us', 'p99_us', 'cpu_us_per_msg', 'msgs_per_s', 'gbps', 'ops_per_s', 'cpu_pct', 'idle_cpu_pct'];
const SHORT: Record<FigureKey, string> = {
  p50_us: 'p50',
  p99_us: 'p99',
  cpu_us_per_msg: 'CPU per msg',
  cpu_pinger_us_per_msg: 'pinger CPU',
  cpu_echoer_us_per_msg: 'echoer CPU',
  msgs_per_s: 'rate',
  gbps: 'bandwidth',
  ops_per_s: 'rate',
  cpu_pct: 'CPU',
  idle_cpu_pct: 'idle CPU',
};

/** A figure with its unit: "2 us", "3 M msg/s", "1 %". */
export function formatFigure(key: FigureKey, x: number): string {
  if (key === 'msgs_per_s') return `${+(x / 1e6).toPrecision(3)} M msg/s`;
  if (key === 'ops_per_s') return `${+(x / 1e6).toPrecision(3)} M ops/s`;
  if (key === 'gbps') return `${+x.toPrecision(3)} GB/s`;
  if (key === 'cpu_pct' || key === 'idle_cpu_pct') return `${+x.toPrecision(3)} %`;
  return `${+x.toPrecision(3)} us`;
}

/** Ratios of every figure both have, and the targets judged. */
function finish(id: string, spec: ScenarioSpec): Scenario {
  const baselines = spec.baselines ?? {};
  const ratios = Object.fromEntries(
    Object.entries(baselines).map(([k, b]) => [k, Object.fromEntries(RATIO_KEYS.filter((f) => spec.softdpu[f] !== undefined && b[f] !== undefined && b[f] !== 0).map((f) => [f, spec.softdpu[f]! / b[f]!]))]),
  );
  const targets = (spec.targets ?? []).map((t): TargetResult => {
    const value = t.of === undefined ? spec.softdpu[t.metric]! : ratios[t.of]?.[t.metric] ?? NaN;
    const met = t.op === '<=' ? value <= t.limit : t.op === '<' ? value < t.limit : value >= t.limit;
    const bound = t.of === undefined ? formatFigure(t.metric, t.limit) : `${t.limit.toFixed(Number.isInteger(Math.round(t.limit * 1000) / 100) ? 1 : 2)}x`;
    return { ...t, value, met, bound, text: `${SHORT[t.metric]} ${t.op} ${bound}${t.of === undefined ? '' : ` ${baselines[t.of]?.label ?? t.of}`}` };
  });
  return {
    id: `${bench}/${id}`,
    bench,
    title: spec.title,
    metric: spec.metric,
    better: spec.metric === 'p50_us' || spec.metric === 'cpu_pct' ? 'lower' : 'higher',
    count: spec.count ?? null,
    unit: spec.unit ?? null,
    size_bytes: spec.size_bytes ?? null,
    sweep: spec.sweep ?? null,
    softdpu: { label: spec.softdpu_label ?? 'softdpu', ...spec.softdpu },
    baselines,
    ratios,
    targets,
  };
}

/**
 * Scenario `id` of the current benchmark: unless --filter leaves it out, says it starts, measures it,
 * and records it (for the table, the JSON and the plot).
 */
export async function scenario(id: string, measure: () => Promise<ScenarioSpec>): Promise<Scenario | undefined> {
  if (!selected(id)) return undefined;
  hooks.progress(bench, id);
  const s = finish(id, await measure());
  recorded.push(s);
  return s;
}

/** A cell of `metric`: "p50 / p99 us", or the rate. */
export function figureCell(metric: Metric, f: Figure): string {
  if (metric === 'p50_us') return `${(f.p50_us ?? NaN).toFixed(2)} / ${(f.p99_us ?? NaN).toFixed(2)} us`;
  if (metric === 'cpu_pct') return `${(f.cpu_pct ?? NaN).toFixed(3)} %`;
  if (metric === 'gbps') return gbps(f.gbps ?? NaN);
  const x = (f[metric] ?? NaN) / 1e6;
  return `${x.toFixed(x < 0.1 ? 3 : 2)} M ${metric === 'ops_per_s' ? 'ops' : 'msg'}/s`;
}

/** A CPU cell: "pinger / echoer us" for a ping-pong of two processes, else the total; idle CPU after. */
function cpuCellOf(f: Figure): string {
  const split = f.cpu_pinger_us_per_msg !== undefined && f.cpu_echoer_us_per_msg !== undefined;
  const us = split ? `${f.cpu_pinger_us_per_msg!.toFixed(1)} / ${f.cpu_echoer_us_per_msg!.toFixed(1)} us` : `${(f.cpu_us_per_msg ?? NaN).toFixed(1)} us`;
  return f.idle_cpu_pct === undefined ? us : `${us}; idle ${f.idle_cpu_pct.toFixed(2)} %`;
}

/** The table's target cell: "p50 <= 1.0x: MISSED" (the row already names the baseline). */
const verdicts = (ts: TargetResult[]) => ts.map((t) => `${SHORT[t.metric]} ${t.op} ${t.bound}: ${t.met ? 'met' : 'MISSED'}${t.note ? ` (${t.note})` : ''}`).join(', ');

/**
 * A scenario's table rows: softdpu next to each baseline (ratio = softdpu / baseline; latency: p50
 * ratio / p99 ratio), then for latencies the CPU per message of each; targets on the rows they compare.
 */
export function scenarioRows(s: Scenario): Row[] {
  const what = s.count === null ? s.title : `${s.title} (${s.count} ${s.unit ?? 'msgs'})`;
  const soft = figureCell(s.metric, s.softdpu);
  const absolute = s.targets.filter((t) => t.of === undefined);
  const withTarget = (row: Row, ts: TargetResult[]): Row => (ts.length ? { ...row, target: verdicts(ts) } : row);
  const keys = Object.keys(s.baselines);
  if (!keys.length) return [withTarget({ what, softdpu: soft, reference: '-', ratio: '-' }, absolute)];
  return keys.flatMap((k, i): Row[] => {
    const b = s.baselines[k]!;
    const r = s.ratios[k]!;
    const ratioCell = s.metric === 'p50_us' ? `${ratio(r.p50_us ?? NaN)} / ${ratio(r.p99_us ?? NaN)}` : ratio(r[s.metric] ?? NaN);
    const rows = [withTarget({ what: i === 0 ? what : `  vs ${b.label}`, softdpu: soft, reference: `${figureCell(s.metric, b)} (${b.label})`, ratio: ratioCell }, [...(i === 0 ? absolute : []), ...s.targets.filter((t) => t.of === k)])];
    if (s.metric === 'p50_us' && s.softdpu.cpu_us_per_msg !== undefined && b.cpu_us_per_msg !== undefined) {
      const split = s.softdpu.cpu_pinger_us_per_msg !== undefined && b.cpu_pinger_us_per_msg !== undefined;
      rows.push({ what: `    CPU per round trip${split ? ': pinger / echoer' : ''}`, softdpu: cpuCellOf(s.softdpu), reference: `${cpuCellOf(b)} (${b.label})`, ratio: ratio(r.cpu_us_per_msg ?? NaN) });
    }
    return rows;
  });
}

/** Prints the current benchmark's table: every scenario it recorded (nothing if --filter left none). */
export function printScenarios(title: string): void {
  if (recorded.length) printTable(title, recorded.flatMap(scenarioRows));
}

/** A ping-pong's figures (Rtt) with the CPU of both sides summed into cpu_us_per_msg. */
export function rttFigure(r: Rtt): Figure {
  const f: Figure = { p50_us: r.p50_us, p99_us: r.p99_us };
  if (r.cpu_pinger_us_per_msg !== undefined && r.cpu_echoer_us_per_msg !== undefined) {
    Object.assign(f, { cpu_us_per_msg: r.cpu_pinger_us_per_msg + r.cpu_echoer_us_per_msg, cpu_pinger_us_per_msg: r.cpu_pinger_us_per_msg, cpu_echoer_us_per_msg: r.cpu_echoer_us_per_msg });
  }
  return f;
}

/** A baseline from a ping-pong's figures. */
export const rttBaseline = (label: string, r: Rtt): Baseline => ({ label, ...rttFigure(r) });

/** Message sizes as the tables say them: "64 B", "4 KiB", "1 MiB". */
export const sizeLabel = (size: number): string => (size >= 1 << 20 && size % (1 << 20) === 0 ? `${size >> 20} MiB` : size >= 1024 && size % 1024 === 0 ? `${size >> 10} KiB` : `${size} B`);
