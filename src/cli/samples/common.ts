/**
 * What every `softdpu sample ...` shares, as in NVIDIA's samples: DOCA's common flags (-h, -v,
 * -l/--log-level, --sdk-log-level, -j/--json), plus --timeout (a bound on the whole run, default 30 s),
 * --fabric and --topology. A JSON flags file may hold `doca_general_flags` and `doca_program_flags`
 * objects (DOCA's layout) or the long flag names at the top level; flags on the command line win.
 */
import { readFileSync } from 'node:fs';
import { DocaError } from '../../core/error.js';
import {
  type LogSource,
  logBackendCreateStandard,
  logLevelSetGlobalLowerLimit,
  logLevelSetGlobalSdkLimit,
  logRegisterSource,
  parseLogLevel,
} from '../../core/log.js';
import { useFabric } from '../../fabric/fabric.js';
import { Faults } from '../../fabric/faults/api.js';
import { parseFlags, UsageError } from '../usage.js';
import { versionLine } from '../version.js';

export interface FlagSpec {
  short?: string;
  /** A multi-letter single-dash name DOCA's argp takes (`-pf_dev`), besides `--<long>`. */
  alias?: string;
  /** Other long names accepted for this flag (`--async_num_tasks`, as DOCA's guide spells what its code calls `--async-num-tasks`). */
  also?: readonly string[];
  type: 'string' | 'boolean';
  description: string;
  default?: string | boolean;
  /** What a string flag's value must be, checked before the sample runs (on the command line, a usage error). */
  value?: FlagValue;
}

/** A test of a flag's value, and what it says a good value is ("a positive integer"). */
export interface FlagValue {
  test(value: string): boolean;
  is: string;
}

export const POSITIVE_INTEGER: FlagValue = { test: (v) => /^\d+$/.test(v) && Number(v) >= 1, is: 'a positive integer' };

export interface SampleRun {
  /** The program's flags, after the JSON file and the defaults. */
  values: Record<string, string | boolean | undefined>;
  /** The sample's application log source (DOCA_LOG_REGISTER). */
  log: LogSource;
  /** Aborts when --timeout passes. */
  signal: AbortSignal;
  timeoutMs: number;
}

export interface SampleSpec {
  name: string;
  description: string;
  flags: Record<string, FlagSpec>;
  run(run: SampleRun): Promise<void>;
}

const LOG_LEVEL: FlagValue = {
  test(v) {
    try {
      parseLogLevel(v);
      return true;
    } catch {
      return false;
    }
  },
  is: 'a log level (10, 20, ..., 70, or DISABLE to TRACE)',
};

/** The flags every sample takes, besides its own (listed once, at the end, by `softdpu sample --list`). */
export const COMMON_FLAGS: Readonly<Record<string, FlagSpec>> = {
  help: { short: 'h', type: 'boolean', description: 'print this help' },
  version: { short: 'v', type: 'boolean', description: 'print the program version' },
  'log-level': { short: 'l', type: 'string', description: 'application log level: 10=DISABLE 20=CRITICAL 30=ERROR 40=WARNING 50=INFO 60=DEBUG 70=TRACE', default: '50', value: LOG_LEVEL },
  'sdk-log-level': { type: 'string', description: 'log level of the library itself (same numbers)', default: '40', value: LOG_LEVEL },
  json: { short: 'j', type: 'string', description: 'read the flags from a JSON file' },
  timeout: { type: 'string', description: 'give up after this many seconds', default: '30', value: { test: (v) => Number(v) > 0 && Number.isFinite(Number(v)), is: 'a positive number of seconds' } },
  fabric: { type: 'string', description: 'fabric directory' },
  topology: { type: 'string', description: 'topology file' },
};

/** One line per flag: `  -p, --pci-addr VALUE          what it is (default: 03:00.0)`. */
export function flagRows(flags: Readonly<Record<string, FlagSpec>>, indent = '  '): string[] {
  return Object.entries(flags).map(([long, f]) => {
    const name = `${f.short ? `-${f.short}, ` : f.alias ? `-${f.alias}, ` : '    '}--${long}${f.type === 'string' ? ' VALUE' : ''}`;
    return `${indent}${name.padEnd(28)} ${f.description}${f.default !== undefined && f.type === 'string' ? ` (default: ${f.default})` : ''}`;
  });
}

export function usage(spec: SampleSpec): string {
  return `usage: softdpu sample ${spec.name} [flags]\n\n${spec.description}\n\n${flagRows({ ...spec.flags, ...COMMON_FLAGS }).join('\n')}\n`;
}

/** Flag values from a JSON file: DOCA's `doca_*_flags` sections, or a flat object of long names. */
/** `-pf_dev` and `--async_num_tasks[=N]` as the flag's own long name; anything else unchanged. */
function canonicalFlag(known: Record<string, FlagSpec>, arg: string): string {
  const eq = arg.indexOf('=');
  const name = eq < 0 ? arg : arg.slice(0, eq);
  for (const [long, f] of Object.entries(known)) {
    if ((f.alias && name === `-${f.alias}`) || f.also?.some((a) => name === `--${a}`)) return `--${long}${eq < 0 ? '' : arg.slice(eq)}`;
  }
  return arg;
}

function jsonFlags(path: string, known: Record<string, FlagSpec>, call: string): Record<string, string | boolean> {
  let doc: unknown;
  try {
    doc = JSON.parse(withoutComments(readFileSync(path, 'utf8')));
  } catch (err) {
    throw new DocaError('INVALID_VALUE', call, `cannot read the JSON flags file ${path}: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null) throw new DocaError('INVALID_VALUE', call, `${path} does not hold a JSON object`);
  const sections = Object.entries(doc as Record<string, unknown>).flatMap(([k, v]) => (k.startsWith('doca_') && typeof v === 'object' && v ? Object.entries(v) : [[k, v]]));
  const out: Record<string, string | boolean> = {};
  const aliases = new Map(Object.entries(known).flatMap(([long, f]) => [...(f.alias ? [f.alias] : []), ...(f.also ?? [])].map((a) => [a, long] as const)));
  for (const [key, value] of sections) {
    const long = aliases.get(key as string) ?? (key as string);
    const spec = known[long];
    if (!spec) throw new DocaError('INVALID_VALUE', call, `${path}: unknown flag ${JSON.stringify(key)}`);
    out[long] = spec.type === 'boolean' ? jsonBoolean(value, path, long, call) : jsonString(value, path, long, call);
    const bad = badValue(spec, out[long]);
    if (bad) throw new DocaError('INVALID_VALUE', call, `${path}: ${long} is ${JSON.stringify(value)}, not ${bad}`);
  }
  return out;
}

function jsonBoolean(value: unknown, path: string, key: string, call: string): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new DocaError('INVALID_VALUE', call, `${path}: ${key} is ${JSON.stringify(value)}, not true or false`);
}

function jsonString(value: unknown, path: string, key: string, call: string): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  throw new DocaError('INVALID_VALUE', call, `${path}: ${key} is ${JSON.stringify(value)}, not a string or a number`);
}

/** What is wrong with a flag's value (what a good one is), or undefined. */
function badValue(spec: FlagSpec, value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' && spec.value && !spec.value.test(value) ? spec.value.is : undefined;
}

/**
 * Parses the flags, sets logging and the fabric up, runs the sample; returns the exit code. A wrong
 * command line is a UsageError (exit 2, before anything starts); a flags file that cannot be read or
 * says something wrong is a DocaError; a failed run is logged, exit code 1.
 *
 * What DOCA's samples do with argp: `doca_argp_init`, `doca_argp_start` (parse; `-h` prints
 * `doca_argp_usage`), `doca_argp_destroy`; `-l` and `--sdk-log-level` set the levels
 * `doca_argp_get_log_level` and `doca_argp_get_sdk_log_level` read.
 */
export async function runSample(spec: SampleSpec, argv: string[]): Promise<number> {
  const all = { ...spec.flags, ...COMMON_FLAGS };
  const command = `sample ${spec.name}`;
  const options = Object.fromEntries(Object.entries(all).map(([k, f]) => [k, { type: f.type, ...(f.short ? { short: f.short } : {}) }]));
  const parsed = parseFlags(command, argv.map((a) => canonicalFlag(all, a)), options, false);
  if (parsed.help) {
    process.stdout.write(usage(spec));
    return 0;
  }
  const cli = parsed.values;
  if (cli.version) {
    process.stdout.write(`${versionLine()}\n`);
    return 0;
  }
  for (const [long, f] of Object.entries(all)) {
    const bad = badValue(f, cli[long]);
    if (bad) throw new UsageError(command, `--${long} ${JSON.stringify(cli[long])} is not ${bad}`);
  }
  const fromJson = typeof cli.json === 'string' ? jsonFlags(cli.json, all, `softdpu ${command}`) : {};
  const values: Record<string, string | boolean | undefined> = {};
  for (const [k, f] of Object.entries(all)) values[k] = cli[k] ?? fromJson[k] ?? f.default;
  logBackendCreateStandard();
  logLevelSetGlobalLowerLimit(parseLogLevel(values['log-level'] as string));
  logLevelSetGlobalSdkLimit(parseLogLevel(values['sdk-log-level'] as string));
  const log = logRegisterSource(spec.name.toUpperCase());
  const seconds = Number(values.timeout);
  const fabric = useFabric({ ...(typeof values.fabric === 'string' ? { dir: values.fabric } : {}), ...(typeof values.topology === 'string' ? { topology: values.topology } : {}) });
  const timeoutMs = seconds * 1000;
  const signal = AbortSignal.timeout(timeoutMs);
  log.info('Starting the sample');
  warnOfFaultPlan(log, fabric.dir);
  // The sample checks `signal` wherever it waits; this backstop ends a run that somehow did not.
  let backstop: NodeJS.Timeout | undefined;
  const overdue = new Promise<never>((_, reject) => {
    backstop = setTimeout(() => reject(new DocaError('TIME_OUT', spec.name, `did not finish within --timeout ${seconds} s (+${BACKSTOP_GRACE_MS / 1000} s to tear down)`)), timeoutMs + BACKSTOP_GRACE_MS);
  });
  try {
    await Promise.race([spec.run({ values, log, signal, timeoutMs }), overdue]);
  } catch (err) {
    log.err(`${spec.name} failed: ${(err as Error).message}`);
    return 1;
  } finally {
    clearTimeout(backstop);
  }
  log.info('Sample finished successfully');
  return 0;
}

/** One WARNING line when the fabric's fault plan holds faults: a run that fails may be meant to. */
function warnOfFaultPlan(log: LogSource, dir: string): void {
  const { faults } = Faults.list({ fabric: dir });
  if (faults.length === 0) return;
  log.warn(`the fault plan of ${dir} is in force: ${faults.map((f) => `${f.id} (${f.kind})`).join(', ')}; softdpu fault clear --fabric ${dir} removes it`);
}

/** After --timeout, how long a sample may still take to tear down before it is abandoned. */
const BACKSTOP_GRACE_MS = 10_000;

/** Throws TIME_OUT naming what the sample was waiting for, if the run's timeout passed. */
export function checkTimeout(run: SampleRun, waitingFor: string): void {
  if (run.signal.aborted) throw new DocaError('TIME_OUT', run.log.name, `timed out after ${run.timeoutMs / 1000} s waiting for ${waitingFor}`);
}

/**
 * Runs a sample's `body`, then its teardown `steps`, each in order even after one threw. When the body
 * failed, teardown errors are dropped so that the body's error is the one reported (a context still
 * RUNNING after a timeout must not hide the timeout); otherwise the first teardown error is thrown.
 */
export async function withTeardown(body: () => Promise<void>, steps: readonly (() => unknown)[]): Promise<void> {
  let failed = false;
  try {
    await body();
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    let first: unknown;
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        first ??= err;
      }
    }
    if (!failed && first !== undefined) throw first;
  }
}

/**
 * DOCA's flags files (its samples' `*_params.json`) carry line and block comments, which JSON does not:
 * they are blanked out (outside strings) before parsing, keeping the lines so errors name the right one.
 */
export function withoutComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      out += text.slice(start, i + 1);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const comment = text.slice(i, end < 0 ? text.length : end + 2);
      out += comment.replace(/[^\n]/g, ' ');
      i += comment.length - 1;
    } else out += c;
  }
  return out;
}
