/**
 * Builds softdpu's C library (capi/) with the C compiler alone, for `softdpu sdk`: one real shared
 * library, libdoca_common.so.2, holding every function the headers declare (the real ones from capi/'s
 * sources, generated stubs for the rest, src/cli/sdk-headers.ts), and three thin libraries with DOCA's
 * other names and sonames (libdoca_comch.so.2, libdoca_argp.so.2, libdoca_dma.so.2) that hold nothing
 * but a DT_NEEDED on it, so that a program linked with `-ldoca_comch` records and finds what it asked
 * for. No meson, make or network: the same build in a source checkout and in an installed package.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import { packageRoot } from '../native/locate.js';
import { type CFunction, declaredFunctions, definedFunctions, stubsSource } from './sdk-headers.js';

/** The C library's sources in this checkout or package. */
export const capiDir = join(packageRoot, 'capi');

/** The folders of capi/ that hold the library's C files (include/ holds the public headers). */
const SOURCE_DIRS = ['core', 'log', 'argp', 'fabric', 'mmap', 'comch', 'syncevent'];

/** The library every name resolves to, and the names that stand for it. */
export const COMMON_LIBRARY = 'libdoca_common.so.2';
export const THIN_LIBRARIES = ['libdoca_comch.so.2', 'libdoca_argp.so.2', 'libdoca_dma.so.2'];

/** A failed build step: what ran and what it said. */
export class BuildError extends Error {
  constructor(
    message: string,
    readonly output = '',
  ) {
    super(message);
  }
}

export interface BuildOptions {
  /** The C compiler (default: $CC, else cc). */
  cc: string;
  /** More flags for the library's compilation (`-fsanitize=address -g`, `-Werror`). */
  cflags: string[];
  /** softdpu's version, built into the library (`-v` of a program prints it). */
  version: string;
  /** An empty directory to build in. */
  dir: string;
}

export interface Built {
  /** The directory holding the four libraries and their unversioned symlinks. */
  lib: string;
  /** The compiler's target, `x86_64-linux-gnu` (the tree's lib/<triplet>). */
  triplet: string;
  functions: CFunction[];
  /** The functions capi/ implements; every other declared function is a stub. */
  real: string[];
}

function run(cc: string, args: string[], what: string): string {
  const r = spawnSync(cc, args, { encoding: 'utf8' });
  if (r.error) throw new BuildError(`cannot run the C compiler ${JSON.stringify(cc)} (${(r.error as NodeJS.ErrnoException).code ?? r.error.message}); give another with --cc or $CC`);
  if (r.status !== 0) throw new BuildError(`${what} failed (${cc} exited with ${r.status ?? r.signal})`, `${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** `run`, without waiting: several compilations at once. */
function runAsync(cc: string, args: string[], what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cc, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.on('error', (err: NodeJS.ErrnoException) => reject(new BuildError(`cannot run the C compiler ${JSON.stringify(cc)} (${err.code ?? err.message}); give another with --cc or $CC`)));
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new BuildError(`${what} failed (${cc} exited with ${code ?? signal})`, output))));
  });
}

/** Compiles every source into an object of `dir`, as many at once as there are processors. */
async function compileAll(cc: string, flags: string[], sources: string[], dir: string): Promise<string[]> {
  const objects = sources.map((source, i) => join(dir, `${i}-${basename(source)}.o`));
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < sources.length; i = next++) await runAsync(cc, [...flags, '-c', sources[i]!, '-o', objects[i]!], `compiling ${sources[i]}`);
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), sources.length) }, worker));
  return objects;
}

/** Every public header (capi/include/*.h) and what it declares, in file order. */
export function headerFunctions(): CFunction[] {
  const include = join(capiDir, 'include');
  return readdirSync(include)
    .filter((f) => f.endsWith('.h'))
    .sort()
    .flatMap((f) => declaredFunctions(readFileSync(join(include, f), 'utf8'), f));
}

function sourceFiles(): string[] {
  return SOURCE_DIRS.flatMap((d) =>
    readdirSync(join(capiDir, d))
      .filter((f) => f.endsWith('.c'))
      .sort()
      .map((f) => join(capiDir, d, f)),
  );
}

/** The doca_build_config.h of one side (the library itself is built with the host's: it is the same for both). */
export function buildConfig(side: 'host' | 'dpu', triplet: string, version: string): string {
  const arm = triplet.startsWith('aarch64');
  return `/* doca_build_config.h of softdpu's ${side === 'dpu' ? "DPU (Arm) side" : 'host side'}, written by softdpu sdk. */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

/* softdpu, and its version: the same library serves both sides, the device a program opens decides. */
#define SOFTDPU 1
#define SOFTDPU_SDK_VERSION "${version}"

${side === 'dpu' ? '#define DOCA_ARCH_DPU\n#undef DOCA_ARCH_HOST' : '#define DOCA_ARCH_HOST\n#undef DOCA_ARCH_DPU'}

/* The processor the program really runs on (the emulated DPU runs on this machine's). */
${arm ? '#define DOCA_ARCH_ARM\n#undef DOCA_ARCH_X86' : '#define DOCA_ARCH_X86\n#undef DOCA_ARCH_ARM'}

#endif /* DOCA_BUILD_CONFIG_H_ */
`;
}

/** Compiles the libraries into `options.dir`/lib (the sources in parallel). Rejects with BuildError. */
export async function buildLibrary(options: BuildOptions): Promise<Built> {
  const { cc, dir } = options;
  const triplet = run(cc, ['-dumpmachine'], `${cc} -dumpmachine`).trim();
  const functions = headerFunctions();
  const declared = new Set(functions.map((f) => f.name));
  const sources = sourceFiles();
  const real = sources.flatMap((s) => definedFunctions(readFileSync(s, 'utf8')));
  const undeclared = real.filter((name) => !declared.has(name));
  if (undeclared.length) throw new BuildError(`capi/ defines ${undeclared.join(', ')}, which no header in capi/include declares`);

  const include = join(dir, 'include');
  const lib = join(dir, 'lib');
  mkdirSync(include, { recursive: true });
  mkdirSync(lib, { recursive: true });
  writeFileSync(join(include, 'doca_build_config.h'), buildConfig('host', triplet, options.version));
  const stubs = join(dir, 'stubs.c');
  writeFileSync(stubs, stubsSource(functions, new Set(real)));

  const compile = [
    '-std=gnu11', '-O2', '-g', '-fPIC', '-pthread', '-fvisibility=hidden', '-Wall', '-Wextra',
    '-DDOCA_ALLOW_EXPERIMENTAL_API', '-DDOCA_ALLOW_DEPRECATED_API', `-DSOFTDPU_VERSION="${options.version.replace(/[^\w.+-]/g, '')}"`,
    `-I${include}`, `-I${join(capiDir, 'include')}`, `-I${capiDir}`,
    ...options.cflags,
  ];
  const objects = await compileAll(cc, compile, [...sources, stubs], mkdtempSync(join(dir, 'obj-')));
  run(cc, [
    '-shared', '-pthread', ...options.cflags, ...objects, '-lm',
    `-Wl,-soname,${COMMON_LIBRARY}`, `-Wl,--version-script=${join(capiDir, 'libdoca.map')}`, '-Wl,-z,defs',
    '-o', join(lib, COMMON_LIBRARY),
  ], 'linking the C library');
  symlinkSync(COMMON_LIBRARY, join(lib, 'libdoca_common.so'));
  for (const name of THIN_LIBRARIES) {
    // An empty library whose only content is its soname and a DT_NEEDED on the real one, found beside it.
    run(cc, [
      '-shared', '-fPIC', '-x', 'c', '/dev/null', '-x', 'none', `-Wl,-soname,${name}`,
      `-L${lib}`, '-Wl,--no-as-needed', '-ldoca_common', '-Wl,-rpath,$ORIGIN', '-o', join(lib, name),
    ], `linking ${name}`);
    symlinkSync(name, join(lib, name.replace(/\.2$/, '')));
  }
  return { lib, triplet, functions, real };
}
