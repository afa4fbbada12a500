/**
 * softdpu's C library in the benchmarks: an install tree written by `softdpu sdk` into a temp prefix, and
 * the C programs of bench/c compiled against it with the C compiler and pkg-config, as a DOCA project
 * builds (the tests do the same through test/helpers/capi.ts, which takes its flags from here). The
 * programs find the library through the runpath the tree's .pc files give them: no LD_LIBRARY_PATH.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from './config.js';

/** The flags every C program against the tree is compiled with (the tests' too). */
export const C_FLAGS = ['-std=gnu11', '-Wall', '-Wextra', '-Werror', '-DDOCA_ALLOW_EXPERIMENTAL_API'];

/** The pkg-config modules of the DOCA libraries the benchmark programs link. */
const MODULES = ['doca-common', 'doca-comch'];

export interface CTree {
  /** The host side's pkgconfig directory. */
  pkgconfig: string;
  /** Where the programs are written. */
  bin: string;
}

/** The environment of a build: this one's, less LD_LIBRARY_PATH, with the tree's host side for pkg-config. */
function buildEnv(tree: CTree): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'LD_LIBRARY_PATH'));
  return { ...env, PKG_CONFIG_PATH: tree.pkgconfig };
}

/** `softdpu sdk --prefix DIR/sdk` (this checkout's CLI); the tree's host side, programs going to DIR/bin. */
export function writeSdk(dir: string): CTree {
  const prefix = join(dir, 'sdk');
  const out = execFileSync(process.execPath, [join(root, 'dist', 'src', 'cli', 'main.js'), 'sdk', '--prefix', prefix], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const triplet = /^softdpu sdk: DOCA \S+ for (\S+) in /.exec(out)?.[1];
  if (!triplet) throw new Error(`softdpu sdk did not name its triplet: ${out}`);
  return { pkgconfig: join(prefix, 'host', 'lib', triplet, 'pkgconfig'), bin: dir };
}

/** Compiles bench/c/<name>.c (-O2) against the tree; returns the program's path. */
export function ccProgram(tree: CTree, name: string): string {
  const env = buildEnv(tree);
  const flags = execFileSync('pkg-config', ['--cflags', '--libs', ...MODULES], { encoding: 'utf8', env }).trim().split(/\s+/);
  const out = join(tree.bin, name);
  execFileSync(process.env.CC ?? 'cc', [...C_FLAGS, '-O2', '-o', out, join(root, 'bench', 'c', `${name}.c`), ...flags], { stdio: 'inherit', env });
  return out;
}
