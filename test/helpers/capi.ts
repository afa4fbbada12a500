/**
 * softdpu's C library in tests: an install tree written by `softdpu sdk` (into a directory of the
 * test's own, removed afterwards), and C programs built against it with meson, as a DOCA project
 * builds, or with the C compiler and pkg-config. Every command runs in its own process group with a
 * timeout (runCommand), in an environment without LD_LIBRARY_PATH: what runs must find its libraries
 * through the runpath the tree gives it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { C_FLAGS } from '../../bench/lib/capi.js';
import { Child, cliPath, type Ran, runCommand } from './child.js';
import { tempFabricDir } from './fabric.js';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** The C fixtures (test/fixtures/capi in the checkout: tsc copies no C files into dist). */
export const capiFixtures = join(repoRoot, 'test', 'fixtures', 'capi');

export type Side = 'host' | 'dpu';

export interface SdkTree {
  prefix: string;
  triplet: string;
  /** What `softdpu sdk` printed. */
  stdout: string;
  /** The side's lib/<triplet>/pkgconfig. */
  pkgconfig(side: Side): string;
  /** A scratch directory of the same test. */
  scratch: string;
}

/** The environment of every command: this one's, less LD_LIBRARY_PATH and npm's settings. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'LD_LIBRARY_PATH' && !/^(npm_|init_cwd$)/i.test(k)));
  return { ...env, ...extra };
}

export function assertRan(r: Ran, what: string, code = 0): Ran {
  assert.deepEqual([r.code, r.signal], [code, null], `${what} exited with ${r.code ?? r.signal}, expected ${code}\n--- stderr:\n${r.stderr.slice(-6000)}\n--- stdout:\n${r.stdout.slice(-3000)}`);
  return r;
}

/** The tools these tests run, and Debian's package of each. */
const TOOLS: Record<string, string> = { cc: 'gcc', meson: 'meson', ninja: 'ninja-build', 'pkg-config': 'pkg-config', readelf: 'binutils', nm: 'binutils' };

/** Fails, naming the fix, when a tool is missing: a C test that skipped would prove nothing. */
function requireTools(): void {
  const missing = Object.keys(TOOLS).filter((tool) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).error);
  const packages = [...new Set(missing.map((tool) => TOOLS[tool]!))];
  assert.deepEqual(missing, [], `${missing.join(', ')} not installed: the C library's tests build DOCA programs. Install Debian's packages (apt-get install -y ${packages.join(' ')}; .ci/run does it when apt-get is there)`);
}

/** `softdpu sdk --prefix <scratch>/sdk [--cflags=...]`, run from `cli` (this checkout's by default). */
export async function writeSdk(t: TestContext, options: { cflags?: string; cli?: string } = {}): Promise<SdkTree> {
  requireTools();
  const scratch = tempFabricDir(t, 'sdpu-c-');
  const prefix = join(scratch, 'sdk');
  const args = [options.cli ?? cliPath, 'sdk', '--prefix', prefix, ...(options.cflags ? [`--cflags=${options.cflags}`] : [])];
  const r = assertRan(await runCommand(t, process.execPath, args, scratch, cleanEnv(), 120_000), 'softdpu sdk');
  const triplet = /^softdpu sdk: DOCA \S+ for (\S+) in /.exec(r.stdout)?.[1];
  assert.ok(triplet, `softdpu sdk names the triplet: ${r.stdout}`);
  return { prefix, triplet, stdout: r.stdout, scratch, pkgconfig: (side) => join(prefix, side, 'lib', triplet, 'pkgconfig') };
}

/** The environment that selects one side of the tree for pkg-config (and meson through it). */
export function sideEnv(tree: SdkTree, side: Side, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cleanEnv({ PKG_CONFIG_PATH: tree.pkgconfig(side), ...extra });
}

/** `meson setup` and `ninja` of the project in `source` against one side; returns the build directory. */
export async function mesonBuild(t: TestContext, tree: SdkTree, side: Side, source: string, name: string, options: string[] = []): Promise<string> {
  const build = join(tree.scratch, name);
  const env = sideEnv(tree, side);
  assertRan(await runCommand(t, 'meson', ['setup', build, source, ...options], tree.scratch, env, 120_000), `meson setup ${name}`);
  assertRan(await runCommand(t, 'ninja', ['-C', build], tree.scratch, env, 120_000), `ninja -C ${name}`);
  return build;
}

/** The flags every C file of these tests is compiled with: those of the benchmarks' C programs. */
export { C_FLAGS } from '../../bench/lib/capi.js';

/** Compiles `source` with the C compiler and pkg-config's flags for DOCA's modules (one side); returns the program. */
export async function ccBuild(t: TestContext, tree: SdkTree, side: Side, source: string, name: string, flags: string[] = []): Promise<string> {
  const env = sideEnv(tree, side);
  const modules = assertRan(await runCommand(t, 'pkg-config', ['--cflags', '--libs', 'doca-common', 'doca-comch', 'doca-argp', 'doca-dma'], tree.scratch, env, 30_000), 'pkg-config');
  const out = join(tree.scratch, name);
  const args = [...C_FLAGS, ...flags, '-o', out, source, ...modules.stdout.trim().split(/\s+/)];
  assertRan(await runCommand(t, 'cc', args, tree.scratch, env, 60_000), `cc ${name}`);
  return out;
}

/** Runs a built program (no LD_LIBRARY_PATH) and returns how it ran. */
export function runProgram(t: TestContext, path: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Ran> {
  return runCommand(t, path, args, cwd, cleanEnv(env), timeoutMs);
}

/** The scriptable C comch peer (test/fixtures/capi/comch-peer/peer.c), built against one side's tree. */
export function buildPeer(t: TestContext, tree: SdkTree, name = 'comch-peer', flags: string[] = []): Promise<string> {
  return ccBuild(t, tree, 'host', join(capiFixtures, 'comch-peer', 'peer.c'), name, flags);
}

/**
 * softdpu's C samples (capi/samples/<sample>: the control path's by default), built with meson against
 * one side (`options`: meson's, as -Db_sanitize=address).
 */
export async function buildSamples(t: TestContext, tree: SdkTree, side: Side, sample = 'comch_ctrl_path', options: string[] = []): Promise<{ server: string; client: string }> {
  const build = await mesonBuild(t, tree, side, join(repoRoot, 'capi', 'samples', sample), `${sample}-${side}`, options);
  return { server: join(build, `doca_${sample}_server`), client: join(build, `doca_${sample}_client`) };
}

/**
 * Starts a built C program on the fabric in `fabric` (no LD_LIBRARY_PATH), its stdout read line by line
 * and its stdin open for commands (helpers/child.ts); killed when the test ends.
 */
export function startProgram(t: TestContext, path: string, args: string[], fabric: string, env: Record<string, string> = {}): Child {
  const proc = spawn(path, args, { env: cleanEnv({ SOFTDPU_FABRIC: fabric, ...env }), stdio: ['pipe', 'pipe', 'pipe'] });
  const child = new Child(proc);
  t.after(async () => {
    child.kill();
    await child.exited;
  });
  return child;
}

/** Waits until `child`'s stderr (a C program's SDK log) has a line matching `re`. */
export function logged(child: Child, re: RegExp, timeoutMs = 20_000): Promise<void> {
  return child.waitForStderr((text) => re.test(text), String(re), timeoutMs);
}
