#!/usr/bin/env node
/** The `softdpu` command. */
import { existsSync, realpathSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DocaError } from '../core/error.js';
import { resolveFabricDir } from '../fabric/dir.js';
import { type Fabric, useFabric } from '../fabric/fabric.js';
import { loadTopology } from '../fabric/topology.js';
import { AddonLoadError } from '../native/locate.js';
import { demo } from './demo.js';
import { devicesCommand } from './devices.js';
import { faultCommand } from './fault.js';
import { doctor, formatDoctor } from './doctor.js';

const USAGE = `usage: softdpu <command> [options]

A software BlueField: DOCA Comch and DOCA Sync Event over an emulated PCIe fabric.

commands:
  devices [--json]     list the fabric's devices, their representors and capabilities
                       (like doca_caps --list-devs)
  fabric clean         remove what dead processes left in the fabric directory
  fabric path          print the fabric directory
  fault add [--seed N] JSON...
                       add faults to the fabric's fault plan (a fault, an array, or a file holding
                       them; docs/faults.md); every process of the fabric follows it within ~200 ms
  fault list [--json]  the fabric's fault plan, with the injections every live process counted
  fault clear [ID...]  remove faults from the plan (all, or those named)
  top [--once] [--json] [--interval MS]
                       the fabric's processes and objects, one line each, with rates and the latest
                       events, refreshed every second (q quits); --once prints one frame, --json the
                       observer's snapshot (docs/observe.md)
  view [--port N] [--interval MS]
                       the same as a live web page on 127.0.0.1 (default port 7707, else any free one):
                       a drawing of the fabric, charts of rates, every object, events, fault controls
  doctor [--json]      whether softdpu works here: the native addon loaded (or how to build it),
                       the kernel features it uses, the fabric directory; exit 1 if something fails
  sample NAME [flags]  run one of NVIDIA's samples (softdpu sample --list; NAME -h for its flags)
  bench [NAME...] [--quick] [--filter REGEX] [--json FILE] [--plot FILE.svg|FILE.html]
                       the benchmarks (all, or those named: fabric, comch, fastpath, sync-event,
                       idle, scale, threads, faults, dpa, observe), a table each; --quick a smoke
                       run, --filter the scenarios whose "bench/scenario" matches, --json every figure (- for
                       stdout), --plot latency and bandwidth against message size with the targets.
                       In a source checkout only (npm run bench)
  demo                 what \`npm start\` runs: the samples' DPU and host sides as separate processes,
                       on a private fabric (--fabric is ignored)

options (every command):
  --fabric DIR         fabric directory (default: $SOFTDPU_FABRIC, else $XDG_RUNTIME_DIR/softdpu
                       or /tmp/softdpu-<uid>)
  --topology FILE      topology JSON (default: $SOFTDPU_TOPOLOGY, else one BlueField with Arm
                       device 03:00.0 and host functions b1:00.0, b1:00.2, b1:00.3)
  -h, --help           this text
`;

const COMMON = {
  fabric: { type: 'string' },
  topology: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

class UsageError extends Error {}

function parse<O extends ParseArgsConfig['options']>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function fabricOf(values: { fabric?: string | boolean; topology?: string | boolean }, sweep = true): Fabric {
  return useFabric({
    sweep,
    ...(typeof values.fabric === 'string' ? { dir: values.fabric } : {}),
    ...(typeof values.topology === 'string' ? { topology: values.topology } : {}),
  });
}

/**
 * The fabric directory an observer (top, view) looks at: resolved, but not joined, so that watching
 * sweeps nothing (dead processes stay visible until a sweep) and follows no fault plan.
 */
function observedDir(values: { fabric?: string | boolean }): string {
  const dir = resolveFabricDir(typeof values.fabric === 'string' ? values.fabric : undefined);
  return existsSync(dir) ? realpathSync(dir) : dir;
}

function intervalOf(value: string | boolean | undefined): number {
  if (value === undefined) return 1000;
  const ms = Number(value);
  if (!(Number.isInteger(ms) && ms >= 50)) throw new UsageError(`--interval ${String(value)} is not a number of milliseconds (50 or more)`);
  return ms;
}

async function sample(rest: string[]): Promise<number> {
  // Imported here, not above: the samples load the native addon, and `doctor` must start without it.
  const [{ runSample }, { SAMPLES }] = await Promise.all([import('./samples/common.js'), import('./samples/index.js')]);
  const [name, ...flags] = rest;
  if (name === undefined || name === '--list' || name === '-h' || name === '--help') {
    process.stdout.write(`samples:\n${Object.values(SAMPLES).map((s) => `  ${s.name.padEnd(36)} ${s.description}`).join('\n')}\n`);
    return name === undefined ? 2 : 0;
  }
  const spec = SAMPLES[name];
  if (!spec) throw new UsageError(`unknown sample ${JSON.stringify(name)} (softdpu sample --list)`);
  // A sample is a whole program: once it is done (or failed half-way), whatever it left open ends too.
  process.exit(await runSample(spec, flags));
}

function run(argv: string[]): number | Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  switch (command) {
    case 'devices': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
      if (values.help) return help();
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      process.stdout.write(devicesCommand(fabricOf(values), !!values.json) + '\n');
      return 0;
    }
    case 'demo': {
      const { values, positionals } = parse(rest, {});
      if (values.help) return help();
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      return demo(typeof values.topology === 'string' ? values.topology : undefined);
    }
    case 'fault': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' }, seed: { type: 'string' } });
      if (values.help) return help();
      process.stdout.write(faultCommand(fabricOf(values), positionals, { json: !!values.json, ...(typeof values.seed === 'string' ? { seed: values.seed } : {}) }) + '\n');
      return 0;
    }
    case 'fabric': {
      const { values, positionals } = parse(rest, {});
      if (values.help) return help();
      const fabric = fabricOf(values, false);
      if (positionals[0] === 'clean' && positionals.length === 1) {
        const report = fabric.sweep();
        for (const name of report.removed) process.stdout.write(`removed ${name}\n`);
        process.stdout.write(`${fabric.dir}: removed ${report.removed.length}, ${report.live} in use by live processes\n`);
        return 0;
      }
      if (positionals[0] === 'path' && positionals.length === 1) {
        process.stdout.write(`${fabric.dir}\n`);
        return 0;
      }
      throw new UsageError(`unknown fabric command ${JSON.stringify(positionals.join(' '))} (clean, path)`);
    }
    case 'doctor': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
      if (values.help) return help();
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      return doctor(typeof values.fabric === 'string' ? values.fabric : undefined).then((report) => {
        process.stdout.write((values.json ? JSON.stringify(report, null, 2) : formatDoctor(report)) + '\n');
        return report.ok ? 0 : 1;
      });
    }
    case 'top': {
      const { values, positionals } = parse(rest, { once: { type: 'boolean' }, json: { type: 'boolean' }, interval: { type: 'string' } });
      if (values.help) return help();
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      const intervalMs = intervalOf(values.interval);
      // Imported here: the observer maps segments through the native addon (see sample()).
      return import('./top.js').then(({ top }) => top({ dir: observedDir(values), once: !!values.once, json: !!values.json, intervalMs }));
    }
    case 'view': {
      const { values, positionals } = parse(rest, { port: { type: 'string' }, interval: { type: 'string' } });
      if (values.help) return help();
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) throw new UsageError(`--port ${values.port} is not a port number (0 for any free one)`);
      const intervalMs = intervalOf(values.interval);
      const topology = loadTopology(typeof values.topology === 'string' ? values.topology : undefined);
      return import('./view/server.js').then(({ view }) => view({ dir: observedDir(values), topology, intervalMs, ...(port === undefined ? {} : { port }) }));
    }
    case 'sample':
      return sample(rest);
    case 'bench': {
      const { values, positionals } = parse(rest, { quick: { type: 'boolean' }, filter: { type: 'string' }, json: { type: 'string' }, plot: { type: 'string' } });
      if (values.help) return help();
      const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
      // Imported here: the benchmarks load the native addon (see sample()).
      return import('./bench.js').then(({ bench }) => bench({ names: positionals, quick: !!values.quick, filter: str(values.filter), json: str(values.json), plot: str(values.plot) }));
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

function help(): number {
  process.stdout.write(USAGE);
  return 0;
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`softdpu: ${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (err instanceof DocaError) {
    process.stderr.write(`softdpu: ${err.message}\n`);
    process.exitCode = 1;
  } else if (err instanceof AddonLoadError) {
    process.stderr.write(`${err.message}\n`); // one line that starts with "softdpu native addon"
    process.exitCode = 1;
  } else {
    throw err;
  }
}
