#!/usr/bin/env node
/**
 * The `softdpu` command. Its convention (src/cli/usage.ts): a usage error is one line on stderr and exit
 * code 2; a runtime failure one line and exit code 1; help and the version, asked for, go to stdout.
 */
import { existsSync, realpathSync } from 'node:fs';
import { DocaError } from '../core/error.js';
import { resolveFabricDir } from '../fabric/dir.js';
import { type Fabric, useFabric } from '../fabric/fabric.js';
import { loadTopology } from '../fabric/topology.js';
import { AddonLoadError } from '../native/locate.js';
import { demo } from './demo.js';
import { devicesCommand } from './devices.js';
import { faultCommand } from './fault.js';
import { doctor, formatDoctor } from './doctor.js';
import { noArguments, type OptionSpec, parseFlags, type ParsedFlags, subcommand, UsageError } from './usage.js';
import { versionLine } from './version.js';

/** Each command's part of the usage, in the order the usage lists them. */
const HELP: [command: string, text: string][] = [
  ['devices', `  devices [--json]     list the fabric's devices, their representors and capabilities
                       (like doca_caps --list-devs)`],
  ['fabric', `  fabric clean         remove what dead processes left in the fabric directory
  fabric path          print the fabric directory`],
  ['fault', `  fault add [--seed N] JSON...
                       add faults to the fabric's fault plan (a fault, an array, or a file holding
                       them; docs/faults.md); every process of the fabric follows it within ~200 ms
  fault list [--json]  the fabric's fault plan, with the injections every live process counted
  fault clear [ID...]  remove faults from the plan (all, or those named)`],
  ['top', `  top [--once] [--json] [--interval MS]
                       the fabric's processes and objects, one line each, with rates and the latest
                       events, refreshed every second (q quits); --once prints one frame, --json the
                       observer's snapshot (docs/observe.md)`],
  ['view', `  view [--port N] [--interval MS]
                       the same as a live web page on 127.0.0.1 (default port 7707, else any free one):
                       a drawing of the fabric, charts of rates, every object, events, fault controls`],
  ['doctor', `  doctor [--json]      whether softdpu works here: the native addon loaded (or how to build it),
                       the kernel features it uses, the fabric directory; exit 1 if something fails`],
  ['sample', `  sample --list        NVIDIA's samples, each with its flags
  sample NAME [flags]  run one of them (NAME -h for its help); it warns when a fault plan is in force`],
  ['bench', `  bench [NAME...] [--quick] [--filter REGEX] [--json FILE] [--plot FILE.svg|FILE.html]
                       the benchmarks (all, or those named: fabric, comch, fastpath, sync-event,
                       idle, scale, threads, faults, dpa, observe, c: the C library, alloc: bytes
                       allocated per message, copy: copies into shared memory), a table each; --quick a smoke
                       run, --filter the scenarios whose "bench/scenario" matches, --json every figure (- for
                       stdout), --plot latency and bandwidth against message size with the targets.
                       In a source checkout only (npm run bench)`],
  ['sdk', `  sdk --prefix DIR [--cc CC] [--cflags FLAGS]
                       write DOCA install trees for C programs, DIR/host and DIR/dpu (headers,
                       libdoca_*.so built from softdpu's C library with the C compiler, pkg-config
                       files), and print the PKG_CONFIG_PATH that selects each side (docs/c.md)`],
  ['run', `  run --dpu CMD --host CMD [--ready REGEX] [--until-host] [--timeout SECONDS]
      [--grace SECONDS] [--keep-fabric]
                       a host<->DPU test, as a CI job runs it: each CMD (a /bin/sh -c string; --dpu and
                       --host repeat) on a fresh private fabric ($SOFTDPU_FABRIC; $SOFTDPU_SIDE is dpu or
                       host), the DPU side first, the host side at once or once a line of every DPU
                       command matches --ready; each line prefixed [dpu] or [host] ([dpu.1]... for
                       several); --until-host stops the DPU side once the host side succeeded. Exit: 0,
                       or the first failure's status (128+N for signal N) with the others stopped
                       (SIGTERM, SIGKILL after --grace, default 5 s); 124 at --timeout (default 300 s,
                       0 for none). The fabric is removed afterwards unless --keep-fabric (--fabric does not
                       apply; docs/c.md)`],
  ['demo', `  demo                 what \`npm start\` runs: the samples' DPU and host sides as separate processes,
                       on a private fabric (--fabric is ignored)`],
];

const OPTIONS = `options (every command):
  --fabric DIR         fabric directory (default: $SOFTDPU_FABRIC, else $XDG_RUNTIME_DIR/softdpu
                       or /tmp/softdpu-<uid>)
  --topology FILE      topology JSON (default: $SOFTDPU_TOPOLOGY, else one BlueField with Arm
                       device 03:00.0 and host functions b1:00.0, b1:00.2, b1:00.3)
  -h, --help           this text; after a command, that command's part

exit status: 0 done, 1 failed (one line on stderr says why), 2 usage error (one line names it)
`;

const USAGE = `usage: softdpu <command> [options]
       softdpu -v | --version   softdpu's version and the DOCA API version it models

A software BlueField: DOCA Comch and DOCA Sync Event over an emulated PCIe fabric.

commands:
${HELP.map(([, text]) => text).join('\n')}

${OPTIONS}`;

function help(command: string): number {
  const part = HELP.find(([name]) => name === command)?.[1];
  process.stdout.write(part === undefined ? USAGE : `usage: softdpu ${command} [options]\n\n${part}\n\n${OPTIONS}`);
  return 0;
}

const COMMON = {
  fabric: { type: 'string' },
  topology: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Record<string, OptionSpec>;

type Values = ParsedFlags['values'];

/** The command's options and positionals (none unless `positionals`); undefined when help was asked for (and printed). */
function parse(command: string, args: string[], options: Record<string, OptionSpec>, positionals = false): ParsedFlags | undefined {
  const parsed = parseFlags(command, args, { ...COMMON, ...options }, positionals);
  if (!parsed.help) return parsed;
  help(command);
  return undefined;
}

const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);

function fabricOf(values: Values, sweep = true): Fabric {
  const dir = str(values.fabric);
  const topology = str(values.topology);
  return useFabric({ sweep, ...(dir === undefined ? {} : { dir }), ...(topology === undefined ? {} : { topology }) });
}

/**
 * The fabric directory an observer (top, view) looks at: resolved, but not joined, so that watching
 * sweeps nothing (dead processes stay visible until a sweep) and follows no fault plan.
 */
function observedDir(values: Values): string {
  const dir = resolveFabricDir(str(values.fabric));
  return existsSync(dir) ? realpathSync(dir) : dir;
}

function intervalOf(command: string, value: string | boolean | undefined): number {
  if (value === undefined) return 1000;
  const ms = Number(value);
  if (!(Number.isInteger(ms) && ms >= 50)) throw new UsageError(command, `--interval ${JSON.stringify(value)} is not a number of milliseconds (50 or more)`);
  return ms;
}

async function sample(rest: string[]): Promise<number> {
  const [name, ...flags] = rest;
  if (name === undefined) throw new UsageError('sample', 'missing the sample\'s name', 'softdpu sample --list');
  if (name === '-h' || name === '--help') return help('sample');
  if (name !== '--list' && name.startsWith('-')) throw new UsageError('sample', `expected a sample's name, not the option ${name} (softdpu sample NAME [flags])`);
  if (name === '--list' && flags.length > 0) throw new UsageError('sample', `unexpected argument ${JSON.stringify(flags[0])} after --list`);
  // Imported here, not above: the samples load the native addon, and `doctor` must start without it.
  const [{ runSample }, { SAMPLES, sampleList }] = await Promise.all([import('./samples/common.js'), import('./samples/index.js')]);
  if (name === '--list') {
    process.stdout.write(sampleList());
    return 0;
  }
  const spec = SAMPLES[name];
  if (!spec) throw new UsageError('sample', `unknown sample ${JSON.stringify(name)}`, 'softdpu sample --list');
  // A sample is a whole program: once it is done (or failed half-way), whatever it left open ends too.
  let code: number;
  try {
    code = await runSample(spec, flags);
  } catch (err) {
    code = report(err, 'sample');
  }
  process.exit(code);
}

const COMMANDS: Record<string, (args: string[]) => number | Promise<number>> = {
  devices(args) {
    const p = parse('devices', args, { json: { type: 'boolean' } });
    if (!p) return 0;
    process.stdout.write(devicesCommand(fabricOf(p.values), !!p.values.json) + '\n');
    return 0;
  },
  demo(args) {
    const p = parse('demo', args, {});
    return p ? demo(str(p.values.topology)) : 0;
  },
  fault(args) {
    const p = parse('fault', args, { json: { type: 'boolean' }, seed: { type: 'string' } }, true);
    if (!p) return 0;
    const seed = str(p.values.seed);
    process.stdout.write(faultCommand(() => fabricOf(p.values), p.positionals, { json: !!p.values.json, ...(seed === undefined ? {} : { seed }) }) + '\n');
    return 0;
  },
  fabric(args) {
    const p = parse('fabric', args, {}, true);
    if (!p) return 0;
    const [sub, extra] = subcommand('fabric', p.positionals, ['clean', 'path']);
    noArguments(`fabric ${sub}`, extra);
    const fabric = fabricOf(p.values, false);
    if (sub === 'path') {
      process.stdout.write(`${fabric.dir}\n`);
      return 0;
    }
    const swept = fabric.sweep();
    for (const name of swept.removed) process.stdout.write(`removed ${name}\n`);
    process.stdout.write(`${fabric.dir}: removed ${swept.removed.length}, ${swept.live} in use by live processes\n`);
    return 0;
  },
  async doctor(args) {
    const p = parse('doctor', args, { json: { type: 'boolean' } });
    if (!p) return 0;
    const r = await doctor(str(p.values.fabric));
    process.stdout.write((p.values.json ? JSON.stringify(r, null, 2) : formatDoctor(r)) + '\n');
    return r.ok ? 0 : 1;
  },
  async top(args) {
    const p = parse('top', args, { once: { type: 'boolean' }, json: { type: 'boolean' }, interval: { type: 'string' } });
    if (!p) return 0;
    const intervalMs = intervalOf('top', p.values.interval);
    // Imported here: the observer maps segments through the native addon (see sample()).
    const { top } = await import('./top.js');
    return top({ dir: observedDir(p.values), once: !!p.values.once, json: !!p.values.json, intervalMs });
  },
  async view(args) {
    const p = parse('view', args, { port: { type: 'string' }, interval: { type: 'string' } });
    if (!p) return 0;
    const port = p.values.port === undefined ? undefined : Number(p.values.port);
    if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) throw new UsageError('view', `--port ${JSON.stringify(p.values.port)} is not a port number (0 for any free one)`);
    const intervalMs = intervalOf('view', p.values.interval);
    const topology = loadTopology(str(p.values.topology));
    const { view } = await import('./view/server.js');
    return view({ dir: observedDir(p.values), topology, intervalMs, ...(port === undefined ? {} : { port }) });
  },
  sample,
  async run(args) {
    const p = parse('run', args, {
      dpu: { type: 'string', multiple: true },
      host: { type: 'string', multiple: true },
      ready: { type: 'string' },
      'until-host': { type: 'boolean' },
      timeout: { type: 'string' },
      grace: { type: 'string' },
      'keep-fabric': { type: 'boolean' },
    });
    if (!p) return 0;
    const { run } = await import('./run.js');
    const v = p.values;
    return run({
      dpu: p.lists.dpu ?? [],
      host: p.lists.host ?? [],
      fabric: str(v.fabric),
      topology: str(v.topology),
      ready: str(v.ready),
      timeout: str(v.timeout),
      grace: str(v.grace),
      untilHost: !!v['until-host'],
      keepFabric: !!v['keep-fabric'],
    });
  },
  async sdk(args) {
    const p = parse('sdk', args, { prefix: { type: 'string' }, cc: { type: 'string' }, cflags: { type: 'string' } });
    if (!p) return 0;
    const { sdk } = await import('./sdk.js');
    return sdk({ prefix: str(p.values.prefix), cc: str(p.values.cc), cflags: str(p.values.cflags) });
  },
  async bench(args) {
    const p = parse('bench', args, { quick: { type: 'boolean' }, filter: { type: 'string' }, json: { type: 'string' }, plot: { type: 'string' } }, true);
    if (!p) return 0;
    // Imported here: the benchmarks load the native addon (see sample()).
    const { bench } = await import('./bench.js');
    return bench({ names: p.positionals, quick: !!p.values.quick, filter: str(p.values.filter), json: str(p.values.json), plot: str(p.values.plot) });
  },
};

function run([command, ...rest]: string[]): number | Promise<number> {
  if (command === undefined) {
    // Not asked for, so not on stdout; as git and npm do, the usage rather than one line: it is how
    // a newcomer asks what the command does.
    process.stderr.write(USAGE);
    return 2;
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    const [topic, ...extra] = rest;
    if (extra.length > 0 || (topic !== undefined && !Object.hasOwn(COMMANDS, topic))) throw new UsageError('', `no help on ${JSON.stringify(rest.join(' '))}`);
    return help(topic ?? '');
  }
  if (command === '-v' || command === '--version') {
    if (rest.length > 0) throw new UsageError('', `unexpected argument ${JSON.stringify(rest[0])} after ${command}`);
    process.stdout.write(`${versionLine()}\n`);
    return 0;
  }
  if (command.startsWith('--') && Object.hasOwn(COMMON, command.slice(2))) throw new UsageError('', `${command} goes after the command (softdpu <command> ${command} ...)`);
  if (command.startsWith('-')) throw new UsageError('', `unknown option ${command}`);
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError('', `unknown command ${JSON.stringify(command)}`);
  return COMMANDS[command]!(rest);
}

/** A Node system error (a file that cannot be read or written): a runtime failure, said in one line. */
function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

/** Writes the one line `err` deserves and returns the exit code; rethrows what is a bug, not a failure. */
function report(err: unknown, command: string): number {
  const say = (line: string) => process.stderr.write(`${line.replace(/\s*\n\s*/g, ' ')}\n`);
  if (err instanceof UsageError) {
    say(err.line());
    return 2;
  }
  if (err instanceof AddonLoadError) {
    say(err.message); // it starts with "softdpu native addon"
    return 1;
  }
  if (err instanceof DocaError || isSystemError(err)) {
    // A failure the CLI itself raised names its command already ("softdpu fault add: ..."): no second prefix.
    say(err.message.startsWith('softdpu') ? err.message : `softdpu${command ? ` ${command}` : ''}: ${err.message}`);
    return 1;
  }
  throw err;
}

const argv = process.argv.slice(2);
try {
  process.exitCode = await run(argv);
} catch (err) {
  process.exitCode = report(err, argv[0] !== undefined && Object.hasOwn(COMMANDS, argv[0]) ? argv[0] : '');
}
