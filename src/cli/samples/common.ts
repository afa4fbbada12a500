/**
 * What every `softdpu sample ...` shares, as in NVIDIA's samples: DOCA's common flags (-h, -v,
 * -l/--log-level, --sdk-log-level, -j/--json), plus --timeout (a bound on the whole run, default 30 s),
 * --fabric and --topology. A JSON flags file may hold `doca_general_flags` and `doca_program_flags`
 * objects (DOCA's layout) or the long flag names at the top level; flags on the command line win.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
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

export interface FlagSpec {
  short?: string;
  /** A multi-letter single-dash name DOCA's argp takes (`-pf_dev`), besides `--<long>`. */
  alias?: string;
  type: 'string' | 'boolean';
  description: string;
  default?: string | boolean;
}

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

const COMMON: Record<string, FlagSpec> = {
  help: { short: 'h', type: 'boolean', description: 'print this help' },
  version: { short: 'v', type: 'boolean', description: 'print the program version' },
  'log-level': { short: 'l', type: 'string', description: 'application log level: 10=DISABLE 20=CRITICAL 30=ERROR 40=WARNING 50=INFO 60=DEBUG 70=TRACE', default: '50' },
  'sdk-log-level': { type: 'string', description: 'log level of the library itself (same numbers)', default: '40' },
  json: { short: 'j', type: 'string', description: 'read the flags from a JSON file' },
  timeout: { type: 'string', description: 'give up after this many seconds', default: '30' },
  fabric: { type: 'string', description: 'fabric directory' },
  topology: { type: 'string', description: 'topology file' },
};

export const VERSION = '0.1.0 (DOCA 3.0 API)';

export function usage(spec: SampleSpec): string {
  const all = { ...spec.flags, ...COMMON };
  const rows = Object.entries(all).map(([long, f]) => {
    const name = `${f.short ? `-${f.short}, ` : f.alias ? `-${f.alias}, ` : '    '}--${long}${f.type === 'string' ? ' VALUE' : ''}`;
    return `  ${name.padEnd(28)} ${f.description}${f.default !== undefined && f.type === 'string' ? ` (default: ${f.default})` : ''}`;
  });
  return `usage: softdpu sample ${spec.name} [flags]\n\n${spec.description}\n\n${rows.join('\n')}\n`;
}

/** Flag values from a JSON file: DOCA's `doca_*_flags` sections, or a flat object of long names. */
function jsonFlags(path: string, known: Record<string, FlagSpec>): Record<string, string | boolean> {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new DocaError('INVALID_VALUE', 'sample flags', `cannot read the JSON flags file ${path}: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null) throw new DocaError('INVALID_VALUE', 'sample flags', `${path} does not hold a JSON object`);
  const sections = Object.entries(doc as Record<string, unknown>).flatMap(([k, v]) => (k.startsWith('doca_') && typeof v === 'object' && v ? Object.entries(v) : [[k, v]]));
  const out: Record<string, string | boolean> = {};
  const aliases = new Map(Object.entries(known).flatMap(([long, f]) => (f.alias ? [[f.alias, long]] : [])));
  for (const [key, value] of sections) {
    const long = aliases.get(key as string) ?? (key as string);
    const spec = known[long];
    if (!spec) throw new DocaError('INVALID_VALUE', 'sample flags', `${path}: unknown flag ${JSON.stringify(key)}`);
    out[long] = spec.type === 'boolean' ? jsonBoolean(value, path, long) : jsonString(value, path, long);
  }
  return out;
}

function jsonBoolean(value: unknown, path: string, key: string): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new DocaError('INVALID_VALUE', 'sample flags', `${path}: ${key} is ${JSON.stringify(value)}, not true or false`);
}

function jsonString(value: unknown, path: string, key: string): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  throw new DocaError('INVALID_VALUE', 'sample flags', `${path}: ${key} is ${JSON.stringify(value)}, not a string or a number`);
}

/** Parses the flags, sets logging and the fabric up, runs the sample; returns the exit code. */
export async function runSample(spec: SampleSpec, argv: string[]): Promise<number> {
  const all = { ...spec.flags, ...COMMON };
  let parsed;
  try {
    const aliases = new Map(Object.entries(all).flatMap(([long, f]) => (f.alias ? [[`-${f.alias}`, `--${long}`]] : [])));
    parsed = parseArgs({ args: argv.map((a) => aliases.get(a) ?? a), options: Object.fromEntries(Object.entries(all).map(([k, f]) => [k, { type: f.type, ...(f.short ? { short: f.short } : {}) }])), strict: true, allowPositionals: false });
  } catch (err) {
    process.stderr.write(`softdpu sample ${spec.name}: ${(err as Error).message}\n\n${usage(spec)}`);
    return 2;
  }
  const cli = parsed.values as Record<string, string | boolean | undefined>;
  if (cli.help) {
    process.stdout.write(usage(spec));
    return 0;
  }
  if (cli.version) {
    process.stdout.write(`softdpu ${VERSION}\n`);
    return 0;
  }
  const fromJson = typeof cli.json === 'string' ? jsonFlags(cli.json, all) : {};
  const values: Record<string, string | boolean | undefined> = {};
  for (const [k, f] of Object.entries(all)) values[k] = cli[k] ?? fromJson[k] ?? f.default;
  logBackendCreateStandard();
  logLevelSetGlobalLowerLimit(parseLogLevel(values['log-level'] as string));
  logLevelSetGlobalSdkLimit(parseLogLevel(values['sdk-log-level'] as string));
  const log = logRegisterSource(spec.name.toUpperCase());
  const seconds = Number(values.timeout);
  if (!(seconds > 0)) throw new DocaError('INVALID_VALUE', 'sample flags', `--timeout ${String(values.timeout)} is not a positive number of seconds`);
  useFabric({ ...(typeof values.fabric === 'string' ? { dir: values.fabric } : {}), ...(typeof values.topology === 'string' ? { topology: values.topology } : {}) });
  const timeoutMs = seconds * 1000;
  const signal = AbortSignal.timeout(timeoutMs);
  log.info('Starting the sample');
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
