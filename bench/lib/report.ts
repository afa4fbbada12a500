/** The report: scenarios (softdpu next to its baselines, with ratios and targets), their tables, --json and --plot. */
import { scenarioFilter } from './config.js';
import { type Rtt, warmupCount } from './measure.js';

export interface Row {
  what: string;
  softdpu: string;
  reference: string;
  ratio: string;
  /** The target and whether this run met it ("<= 1.0x: met"), when the row has one. */
  target?: string;
}

/**
 * Prints rows as an aligned table. Latency cells read "p50 / p99" (or "p50 / p99 / p99.9"), and their
 * ratios "p50 ratio / p99 ratio [/ p99.9 ratio]"; "CPU" rows give each process's CPU time (user + system)
 * per message; "warm-up" rows the first trip and the mean of the trips the percentiles dropped.
 * `contender` heads softdpu's column (the C library's benchmark says "softdpu (C)").
 */
export function printTable(title: string, rows: Row[], contender = 'softdpu (Node)'): void {
  const header: Required<Row> = { what: 'measurement', softdpu: contender, reference: 'reference', ratio: 'ratio', target: 'target: this run' };
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
 * One contender's figures, whichever it measured: round-trip percentiles (steady state: after the
 * warm-up) and the warm-up (first trip, mean of the trips dropped); CPU time (user + system) per
 * message of every process or thread involved (for a ping-pong also each side's); rates; idle CPU;
 * bytes allocated and GC pauses per message in the process doing the work (bench/lib/alloc.ts).
 */
export interface Figure {
  p50_us?: number;
  p99_us?: number;
  p99_9_us?: number;
  first_us?: number;
  warmup_mean_us?: number;
  cpu_us_per_msg?: number;
  cpu_pinger_us_per_msg?: number;
  cpu_echoer_us_per_msg?: number;
  /** A stream's rate after the warm-up (the first tenth of its messages, as the round trips drop). */
  msgs_per_s?: number;
  /** The same stream's rate over every message, the warm-up included (its own row). */
  whole_msgs_per_s?: number;
  gbps?: number;
  ops_per_s?: number;
  cpu_pct?: number;
  idle_cpu_pct?: number;
  /** On the V8 heap, per message (steady state; bench/lib/alloc.ts says how exactly). */
  heap_bytes_per_msg?: number;
  /** ArrayBuffer backing stores and other memory outside the heap V8 was told of, per message. */
  external_bytes_per_msg?: number;
  /** Garbage collections (any kind) per message, and their pause per message. */
  gcs_per_msg?: number;
  gc_pause_us_per_msg?: number;
}
export type FigureKey = keyof Figure;

/** What softdpu is compared with, named for the tables and the plots. */
export interface Baseline extends Figure {
  label: string;
}

/** The figure a scenario is about: latency, CPU and allocation are better lower, rates higher. */
export type Metric = 'p50_us' | 'msgs_per_s' | 'gbps' | 'ops_per_s' | 'cpu_pct' | 'heap_bytes_per_msg';

/** A target of the project: softdpu's figure, or its ratio to a baseline (`of`), against a limit. */
export interface TargetSpec {
  metric: FigureKey;
  op: '<=' | '>=' | '<';
  limit: number;
  /** The baseline (key) the limit is a ratio to; absent: a limit on softdpu's own figure. */
  of?: string;
  /** Instead of a baseline: the limit is a ratio to this other figure of softdpu's own (p99 <= 10x p50). */
  per?: FigureKey;
  /** Said after the verdict, e.g. "stretch". */
  note?: string;
}

/**
 * The sleeping round trip's targets (issue 20): p50, p99, p99.9 and CPU per trip each at most 1.0x the
 * baseline `of` (the socket in the same style).
 */
export function atMostBaseline(of: string): TargetSpec[] {
  return (['p50_us', 'p99_us', 'p99_9_us', 'cpu_us_per_msg'] as const).map((metric) => ({ metric, op: '<=', limit: 1.0, of }));
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
/** Whether the current benchmark printed its table (one that failed before it did has not). */
let printed = false;

/** The runner: `name` starts; scenarios recorded from here on are its. */
export function beginBench(name: string): void {
  bench = name;
  recorded = [];
  printed = false;
}

/** The scenarios the current benchmark recorded. */
export const benchScenarios = (): Scenario[] => recorded;

/** Whether --filter selects scenario `id` of the current benchmark (it matches "bench/id", or the bench). */
export const selected = (id: string): boolean => {
  const filter = scenarioFilter();
  return !filter || filter.test(bench) || filter.test(`${bench}/${id}`);
};

const RATIO_KEYS: FigureKey[] = ['p50_us', 'p99_us', 'p99_9_us', 'first_us', 'warmup_mean_us', 'cpu_us_per_msg', 'msgs_per_s', 'whole_msgs_per_s', 'gbps', 'ops_per_s', 'cpu_pct', 'idle_cpu_pct', 'heap_bytes_per_msg', 'gcs_per_msg', 'gc_pause_us_per_msg'];
const SHORT: Record<FigureKey, string> = {
  p50_us: 'p50',
  p99_us: 'p99',
  p99_9_us: 'p99.9',
  first_us: 'first trip',
  warmup_mean_us: 'warm-up mean',
  cpu_us_per_msg: 'CPU per msg',
  cpu_pinger_us_per_msg: 'pinger CPU',
  cpu_echoer_us_per_msg: 'echoer CPU',
  msgs_per_s: 'rate',
  whole_msgs_per_s: 'rate over all',
  gbps: 'bandwidth',
  ops_per_s: 'rate',
  cpu_pct: 'CPU',
  idle_cpu_pct: 'idle CPU',
  heap_bytes_per_msg: 'heap bytes per msg',
  external_bytes_per_msg: 'external bytes per msg',
  gcs_per_msg: 'GCs per msg',
  gc_pause_us_per_msg: 'GC pause per msg',
};

/** A figure with its unit: "2 us", "3 M msg/s", "1 %". */
export function formatFigure(key: FigureKey, x: number): string {
  if (key === 'msgs_per_s' || key === 'whole_msgs_per_s') return `${+(x / 1e6).toPrecision(3)} M msg/s`;
  if (key === 'ops_per_s') return `${+(x / 1e6).toPrecision(3)} M ops/s`;
  if (key === 'gbps') return `${+x.toPrecision(3)} GB/s`;
  if (key === 'cpu_pct' || key === 'idle_cpu_pct') return `${+x.toPrecision(3)} %`;
  if (key === 'heap_bytes_per_msg' || key === 'external_bytes_per_msg') return `${+x.toPrecision(3)} B`;
  if (key === 'gcs_per_msg') return `${+x.toPrecision(3)}`;
  return `${+x.toPrecision(3)} us`;
}

/** Ratios of every figure both have, and the targets judged. */
function finish(id: string, spec: ScenarioSpec): Scenario {
  const baselines = spec.baselines ?? {};
  const ratios = Object.fromEntries(
    Object.entries(baselines).map(([k, b]) => [k, Object.fromEntries(RATIO_KEYS.filter((f) => spec.softdpu[f] !== undefined && b[f] !== undefined && b[f] !== 0).map((f) => [f, spec.softdpu[f]! / b[f]!]))]),
  );
  const targets = (spec.targets ?? []).map((t): TargetResult => {
    const value = t.per !== undefined ? spec.softdpu[t.metric]! / spec.softdpu[t.per]! : t.of === undefined ? spec.softdpu[t.metric]! : ratios[t.of]?.[t.metric] ?? NaN;
    const met = t.op === '<=' ? value <= t.limit : t.op === '<' ? value < t.limit : value >= t.limit;
    const times = `${t.limit.toFixed(Number.isInteger(Math.round(t.limit * 1000) / 100) ? 1 : 2)}x`;
    const bound = t.per !== undefined ? `${times} ${SHORT[t.per]}` : t.of === undefined ? formatFigure(t.metric, t.limit) : times;
    return { ...t, value, met, bound, text: `${SHORT[t.metric]} ${t.op} ${bound}${t.of === undefined ? '' : ` ${baselines[t.of]?.label ?? t.of}`}` };
  });
  return {
    id: `${bench}/${id}`,
    bench,
    title: spec.title,
    metric: spec.metric,
    better: spec.metric === 'p50_us' || spec.metric === 'cpu_pct' || spec.metric === 'heap_bytes_per_msg' ? 'lower' : 'higher',
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

/**
 * A cell of `metric`: "p50 / p99 us" (with " / p99.9" where measured), the rate, or allocation: "heap
 * B/msg (ext); GCs and pause per message".
 */
export function figureCell(metric: Metric, f: Figure): string {
  if (metric === 'p50_us') return `${(f.p50_us ?? NaN).toFixed(2)} / ${(f.p99_us ?? NaN).toFixed(2)}${f.p99_9_us === undefined ? '' : ` / ${f.p99_9_us.toFixed(2)}`} us`;
  if (metric === 'heap_bytes_per_msg') return allocCell(f);
  if (metric === 'cpu_pct') return `${(f.cpu_pct ?? NaN).toFixed(3)} %`;
  if (metric === 'gbps') return `${gbps(f.gbps ?? NaN)}${f.p50_us === undefined ? '' : `, p50 ${+f.p50_us.toPrecision(3)} us`}`;
  const x = (f[metric] ?? NaN) / 1e6;
  return `${x.toFixed(x < 0.1 ? 3 : 2)} M ${metric === 'ops_per_s' ? 'ops' : 'msg'}/s`;
}

/**
 * "120.5 B/msg (ext 4.0); 1 GC per 14.2k msgs, 0.031 us pause/msg" (no GC: "no GC"; external memory,
 * approximate, said when at least 1 B either way).
 */
function allocCell(f: Figure): string {
  const ext = Math.abs(f.external_bytes_per_msg ?? 0) >= 1 ? ` (ext ${f.external_bytes_per_msg!.toFixed(1)})` : '';
  const gcs = f.gcs_per_msg ?? NaN;
  const gc = gcs === 0 ? 'no GC' : `1 GC per ${+(1 / gcs / 1000).toPrecision(3)}k msgs, ${(f.gc_pause_us_per_msg ?? NaN).toFixed(3)} us pause/msg`;
  return `${(f.heap_bytes_per_msg ?? NaN).toFixed(1)} B/msg${ext}; ${gc}`;
}

/** A latency ratio cell: "p50 ratio / p99 ratio", and " / p99.9 ratio" where both measured it. */
function latencyRatio(r: Partial<Record<FigureKey, number>>): string {
  return `${ratio(r.p50_us ?? NaN)} / ${ratio(r.p99_us ?? NaN)}${r.p99_9_us === undefined ? '' : ` / ${ratio(r.p99_9_us)}`}`;
}

/** A warm-up cell: "first trip / mean of the trips dropped us". */
const warmupCell = (f: Figure): string => `${(f.first_us ?? NaN).toFixed(1)} / ${(f.warmup_mean_us ?? NaN).toFixed(1)} us`;

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
 * ratio / p99 ratio [/ p99.9 ratio]), then for latencies the CPU per message of each and the warm-up
 * (first trip / mean of the trips dropped) where both measured it, for streams (whose rates are after
 * the warm-up) the rate over every message next to the first baseline's; targets on the rows they compare.
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
    const ratioCell = s.metric === 'p50_us' ? latencyRatio(r) : ratio(r[s.metric] ?? NaN);
    const rows = [withTarget({ what: i === 0 ? what : `  vs ${b.label}`, softdpu: soft, reference: `${figureCell(s.metric, b)} (${b.label})`, ratio: ratioCell }, [...(i === 0 ? absolute : []), ...s.targets.filter((t) => t.of === k)])];
    if (s.metric === 'p50_us' && s.softdpu.cpu_us_per_msg !== undefined && b.cpu_us_per_msg !== undefined) {
      const split = s.softdpu.cpu_pinger_us_per_msg !== undefined && b.cpu_pinger_us_per_msg !== undefined;
      rows.push({ what: `    CPU per round trip${split ? ': pinger / echoer' : ''}`, softdpu: cpuCellOf(s.softdpu), reference: `${cpuCellOf(b)} (${b.label})`, ratio: ratio(r.cpu_us_per_msg ?? NaN) });
    }
    if (i === 0 && s.softdpu.whole_msgs_per_s !== undefined && b.whole_msgs_per_s !== undefined) {
      const cell = (f: Figure) => formatFigure('whole_msgs_per_s', f.whole_msgs_per_s!);
      const all = s.count === null ? 'all msgs' : `all ${s.count} msgs`;
      rows.push({ what: `    warm-up included: rate over ${all}`, softdpu: cell(s.softdpu), reference: `${cell(b)} (${b.label})`, ratio: ratio(r.whole_msgs_per_s ?? NaN) });
    }
    if (s.metric === 'p50_us' && s.softdpu.first_us !== undefined && b.first_us !== undefined) {
      const n = s.count === null ? '' : ` of ${warmupCount(s.count)}`;
      rows.push({ what: `    warm-up: first trip / mean${n} dropped`, softdpu: warmupCell(s.softdpu), reference: `${warmupCell(b)} (${b.label})`, ratio: `${ratio(r.first_us ?? NaN)} / ${ratio(r.warmup_mean_us ?? NaN)}` });
    }
    return rows;
  });
}

/** Prints the current benchmark's table: every scenario it recorded (nothing if --filter left none). */
export function printScenarios(title: string, contender?: string): void {
  printed = true;
  if (recorded.length) printTable(title, recorded.flatMap(scenarioRows), contender);
}

/** The runner, after a benchmark failed: prints what it measured before, unless it printed its table. */
export function printUnprinted(title: string): void {
  if (!printed) printScenarios(title);
}

/** A ping-pong's figures (Rtt) with the CPU of both sides summed into cpu_us_per_msg. */
export function rttFigure(r: Rtt): Figure {
  const f: Figure = { p50_us: r.p50_us, p99_us: r.p99_us };
  for (const k of ['p99_9_us', 'first_us', 'warmup_mean_us'] as const) if (r[k] !== undefined) f[k] = r[k];
  if (r.cpu_pinger_us_per_msg !== undefined && r.cpu_echoer_us_per_msg !== undefined) {
    Object.assign(f, { cpu_us_per_msg: r.cpu_pinger_us_per_msg + r.cpu_echoer_us_per_msg, cpu_pinger_us_per_msg: r.cpu_pinger_us_per_msg, cpu_echoer_us_per_msg: r.cpu_echoer_us_per_msg });
  }
  return f;
}

/** A baseline from a ping-pong's figures. */
export const rttBaseline = (label: string, r: Rtt): Baseline => ({ label, ...rttFigure(r) });

/** Message sizes as the tables say them: "64 B", "4 KiB", "1 MiB". */
export const sizeLabel = (size: number): string => (size >= 1 << 20 && size % (1 << 20) === 0 ? `${size >> 20} MiB` : size >= 1024 && size % 1024 === 0 ? `${size >> 10} KiB` : `${size} B`);
