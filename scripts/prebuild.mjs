// Makes the prebuilt N-API binaries the npm tarball carries (`npm pack` and `npm publish` run it as
// prepack): prebuilds/linux-x64/softdpu.node and prebuilds/linux-arm64/softdpu.node. N-API is
// ABI-stable, so one binary per platform serves every Node from 20 on; src/native/locate.ts picks the
// one for the running platform.
//
// It calls the C compiler directly with src/native/binding.gyp's flags: node-gyp cannot cross-compile without
// downloading, and adds nothing needed here. The N-API and libuv symbols stay undefined in the shared
// object; the node binary that loads it provides them.
//
// The machine's own architecture must build. The other one needs Debian's cross compiler
// (gcc-aarch64-linux-gnu on x64, gcc-x86-64-linux-gnu on arm64); without it that target is skipped with
// a notice and its users build from source (docs/install.md).
//
// `node scripts/prebuild.mjs --clean` (postpack) removes prebuilds/ again, so that a checkout never
// loads a prebuild older than the local build it is working on.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeDir } from './build-native.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(root, 'src', 'native');
const prebuilds = join(root, 'prebuilds');

/** ELF e_machine values, to check that a binary is for the architecture its directory names. */
const TARGETS = [
  { arch: 'x64', triple: 'x86_64-linux-gnu', apt: 'gcc-x86-64-linux-gnu', machine: 62 },
  { arch: 'arm64', triple: 'aarch64-linux-gnu', apt: 'gcc-aarch64-linux-gnu', machine: 183 },
];

function log(line) {
  // stderr: `npm pack --json` keeps stdout for its JSON.
  process.stderr.write(`prebuild: ${line}\n`);
}

/** src/native/binding.gyp's sources, flags and defines, so that both builds compile the same way. */
function gypTarget() {
  const gyp = JSON.parse(readFileSync(join(nativeDir, 'binding.gyp'), 'utf8'));
  const target = gyp.targets.find((t) => t.target_name === 'softdpu');
  if (!target) throw new Error('binding.gyp has no target "softdpu"');
  return target;
}

function compilerFor(target) {
  if (target.arch === process.arch) return process.env.CC || 'cc';
  return `${target.triple}-gcc`;
}

function available(compiler) {
  return !spawnSync(compiler, ['--version'], { stdio: 'ignore' }).error;
}

/** Throws unless `file` is a 64-bit little-endian ELF shared object for `machine`. */
function checkElf(file, machine) {
  const head = readFileSync(file).subarray(0, 20);
  const ok = head.toString('latin1', 0, 4) === '\x7fELF' && head[4] === 2 && head[5] === 1 && head.readUInt16LE(16) === 3 && head.readUInt16LE(18) === machine;
  if (!ok) throw new Error(`${file} is not a 64-bit ELF shared object for machine ${machine}`);
}

/** Builds one target; false when it was skipped. */
function build(target, gyp, headers) {
  const compiler = compilerFor(target);
  const isNative = target.arch === process.arch;
  if (!available(compiler)) {
    if (isNative) throw new Error(`no C compiler (${compiler}) for this machine's own architecture`);
    log(`skipped linux-${target.arch}: ${compiler} not found (install Debian's ${target.apt}); linux-${target.arch} users will build from source`);
    return false;
  }
  const out = join(prebuilds, `linux-${target.arch}`, 'softdpu.node');
  mkdirSync(dirname(out), { recursive: true });
  const args = [
    ...gyp.cflags,
    '-fPIC',
    '-shared',
    ...gyp.defines.map((d) => `-D${d}`),
    '-DNODE_GYP_MODULE_NAME=softdpu',
    `-I${join(headers, 'include', 'node')}`,
    ...gyp.sources.map((s) => join(nativeDir, s)),
    '-o',
    out,
  ];
  execFileSync(compiler, args, { stdio: 'inherit' });
  checkElf(out, target.machine);
  // RTLD_NOW resolves every symbol at once: one the node binary lacks fails here, not at a user's first call.
  if (isNative) process.dlopen({ exports: {} }, out, constants.dlopen.RTLD_NOW);
  log(`built ${relative(root, out)} (${Math.round(statSync(out).size / 1024)} KiB, ${compiler})`);
  return true;
}

rmSync(prebuilds, { recursive: true, force: true });
if (!process.argv.includes('--clean')) {
  if (process.platform !== 'linux') throw new Error(`prebuilds are made on Linux, not ${process.platform}`);
  const gyp = gypTarget();
  const headers = nodeDir();
  const built = TARGETS.filter((target) => build(target, gyp, headers));
  if (built.length === 0) throw new Error(`no prebuild was made (this machine is ${process.arch}, and no cross compiler was found)`);
}
