// Makes the prebuilt N-API binaries the npm tarball carries (`npm pack` and `npm publish` run it as
// prepack): prebuilds/linux-x64/softdpu.node and prebuilds/linux-arm64/softdpu.node. N-API is
// ABI-stable, so one binary per platform serves every Node from 20 on; src/native/locate.ts picks the
// one for the running platform.
//
// It calls the C compiler directly with src/native/binding.gyp's flags: node-gyp cannot cross-compile without
// downloading, and adds nothing needed here. The N-API and libuv symbols stay undefined in the shared
// object; the node binary that loads it provides them.
//
// The package promises both platforms (README, docs/install.md), so both must build: the other
// architecture needs Debian's cross compiler (gcc-aarch64-linux-gnu on x64, gcc-x86-64-linux-gnu on
// arm64). Without it this fails before building anything, and says so, unless SOFTDPU_PREBUILDS names
// the platforms to make (`SOFTDPU_PREBUILDS=x64 npm pack`: a tarball for linux-x64 only, whose arm64
// users build from source). A compiler of another name is given as SOFTDPU_CC_X64 / SOFTDPU_CC_ARM64.
// The last line says which prebuilds the tarball holds.
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
  const given = process.env[`SOFTDPU_CC_${target.arch.toUpperCase()}`];
  if (given) return given;
  if (target.arch === process.arch) return process.env.CC || 'cc';
  return `${target.triple}-gcc`;
}

/** The platforms to build: SOFTDPU_PREBUILDS (`x64`, `arm64`, or both, comma-separated), else all. */
function wanted() {
  const list = process.env.SOFTDPU_PREBUILDS;
  if (!list) return TARGETS;
  const archs = list.split(',').map((a) => a.trim().replace(/^linux-/, ''));
  const unknown = archs.filter((a) => !TARGETS.some((t) => t.arch === a));
  if (unknown.length) {
    log(`SOFTDPU_PREBUILDS=${list}: unknown platform ${unknown.join(', ')} (x64, arm64)`);
    process.exit(1);
  }
  return TARGETS.filter((t) => archs.includes(t.arch));
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

/** Builds one target, whose compiler is there. */
function build(target, gyp, headers) {
  const compiler = compilerFor(target);
  const isNative = target.arch === process.arch;
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
}

rmSync(prebuilds, { recursive: true, force: true });
if (!process.argv.includes('--clean')) {
  if (process.platform !== 'linux') throw new Error(`prebuilds are made on Linux, not ${process.platform}`);
  const targets = wanted();
  // Every compiler first: a missing one fails the pack before anything is built.
  const missing = targets.filter((t) => !available(compilerFor(t)));
  for (const t of missing) log(`no compiler for linux-${t.arch}: ${compilerFor(t)} not found (Debian's ${t.apt}${t.arch === process.arch ? ', or a C compiler' : ''})`);
  if (missing.length) {
    const rest = targets.filter((t) => !missing.includes(t)).map((t) => t.arch);
    log(`the package carries ${TARGETS.map((t) => `linux-${t.arch}`).join(' and ')}: install the compiler, or pack without ${missing.map((t) => `linux-${t.arch}`).join(', ')} (whose users then build from source) with SOFTDPU_PREBUILDS=${rest.join(',') || process.arch}`);
    process.exit(1);
  }
  const gyp = gypTarget();
  const headers = nodeDir();
  for (const target of targets) build(target, gyp, headers);
  const skipped = TARGETS.filter((t) => !targets.includes(t)).map((t) => `linux-${t.arch}`);
  log(`the tarball holds prebuilds for ${targets.map((t) => `linux-${t.arch}`).join(', ')}${skipped.length ? `; not for ${skipped.join(', ')} (SOFTDPU_PREBUILDS=${process.env.SOFTDPU_PREBUILDS}): those users build from source` : ''}`);
}
