#!/usr/bin/env node
/** The `softdpu` command. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DocaError } from '../core/error.js';
import { type Fabric, useFabric } from '../fabric/fabric.js';
import { AddonLoadError } from '../native/locate.js';
import { demo } from './demo.js';
import { devicesCommand } from './devices.js';
import { doctor, formatDoctor } from './doctor.js';

const USAGE = `usage: softdpu <command> [options]

A software BlueField: DOCA Comch and DOCA Sync Event over an emulated PCIe fabric.

commands:
  devices [--json]     list the fabric's devices, their representors and capabilities
                       (like doca_caps --list-devs)
  fabric clean         remove what dead processes left in the fabric directory
  fabric path          print the fabric directory
  doctor [--json]      whether softdpu works here: the native addon loaded (or how to build it),
                       the kernel features it uses, the fabric directory; exit 1 if something fails
  sample NAME [flags]  run one of NVIDIA's samples (softdpu sample --list; NAME -h for its flags)
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
    case 'sample':
      return sample(rest);
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
