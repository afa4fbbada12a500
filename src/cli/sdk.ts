/**
 * `softdpu sdk --prefix DIR`: what meson and pkg-config expect of a DOCA install, for C programs built
 * against softdpu's C library, one tree per side of the emulated BlueField:
 *
 * ```
 * DIR/host/VERSION                      DOCA's version (3.0.0058), as NVIDIA's samples read it
 * DIR/host/include/doca_*.h             capi/include, plus the host's doca_build_config.h
 * DIR/host/lib/<triplet>/libdoca_{common,comch,argp,dma}.so.2 (+ .so)
 * DIR/host/lib/<triplet>/pkgconfig/doca-{common,comch,argp,dma}.pc
 * DIR/dpu/...                           the same, but doca_build_config.h defines DOCA_ARCH_DPU
 * ```
 *
 * The libraries are compiled here, from capi/ (src/cli/sdk-build.ts), with the C compiler only, so the
 * command works in a source checkout and in an installed package alike. The .pc files' Libs carry an
 * rpath to the tree, so a program runs without LD_LIBRARY_PATH however it was built (meson adds one of
 * its own too). Files are written over; nothing else in DIR is touched.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BuildError, buildConfig, buildLibrary, capiDir, COMMON_LIBRARY, THIN_LIBRARIES } from './sdk-build.js';
import { UsageError } from './usage.js';
import { packageVersion } from './version.js';

export interface SdkOptions {
  prefix?: string | undefined;
  /** The C compiler (default: $CC, else cc). */
  cc?: string | undefined;
  /** More compiler flags for the library, one string (`-fsanitize=address -g`). */
  cflags?: string | undefined;
}

const SIDES = [
  { side: 'host', label: 'host side' },
  { side: 'dpu', label: 'DPU side' },
] as const;

/** The pkg-config modules NVIDIA's samples ask for, each naming its library. */
const MODULES = [
  { module: 'doca-common', library: 'doca_common', what: "DOCA Core, logging and errors", requires: '' },
  { module: 'doca-comch', library: 'doca_comch', what: 'DOCA Comch', requires: 'doca-common' },
  { module: 'doca-argp', library: 'doca_argp', what: "DOCA's argument parser", requires: 'doca-common' },
  { module: 'doca-dma', library: 'doca_dma', what: 'DOCA DMA (not modelled: every call answers NOT_SUPPORTED)', requires: 'doca-common' },
];

/** DOCA_VERSION_STRING of capi/include/doca_version.h, the one place it is written. */
export function docaVersion(): string {
  const m = /#define DOCA_VERSION_STRING "([^"]+)"/.exec(readFileSync(join(capiDir, 'include', 'doca_version.h'), 'utf8'));
  if (!m) throw new Error('capi/include/doca_version.h defines no DOCA_VERSION_STRING');
  return m[1]!;
}

function pcFile(root: string, triplet: string, side: string, m: (typeof MODULES)[number], version: string): string {
  const rpath = m.requires === '' ? ' -Wl,-rpath,${libdir}' : '';
  return [
    `prefix=${root}`,
    `libdir=\${prefix}/lib/${triplet}`,
    'includedir=${prefix}/include',
    '',
    `Name: ${m.module}`,
    `Description: ${m.what}, by softdpu (${side} of the emulated BlueField)`,
    `Version: ${version}`,
    ...(m.requires ? [`Requires: ${m.requires}`] : []),
    `Libs: -L\${libdir}${rpath} -l${m.library}`,
    'Cflags: -I${includedir}',
    '',
  ].join('\n');
}

/** A symlink at `path`, replacing whatever is there (a dangling link included). */
function link(target: string, path: string): void {
  rmSync(path, { force: true });
  symlinkSync(target, path);
}

/** Writes one side's tree under `root`. */
function writeTree(root: string, side: 'host' | 'dpu', built: { lib: string; triplet: string }, version: string, docaVer: string): string {
  const include = join(root, 'include');
  const lib = join(root, 'lib', built.triplet);
  const pkgconfig = join(lib, 'pkgconfig');
  mkdirSync(include, { recursive: true });
  mkdirSync(pkgconfig, { recursive: true });
  writeFileSync(join(root, 'VERSION'), `${docaVer}\n`);
  for (const header of readdirSync(join(capiDir, 'include')).filter((f) => f.endsWith('.h'))) {
    copyFileSync(join(capiDir, 'include', header), join(include, header));
  }
  writeFileSync(join(include, 'doca_build_config.h'), buildConfig(side, built.triplet, version));
  for (const name of [COMMON_LIBRARY, ...THIN_LIBRARIES]) {
    rmSync(join(lib, name), { force: true }); // unlinked, not overwritten: a running program may map the old one
    copyFileSync(join(built.lib, name), join(lib, name));
    link(name, join(lib, name.replace(/\.2$/, '')));
  }
  for (const m of MODULES) writeFileSync(join(pkgconfig, `${m.module}.pc`), pcFile(root, built.triplet, side, m, docaVer));
  return pkgconfig;
}

/** The command; resolves with its exit code. */
export async function sdk(options: SdkOptions): Promise<number> {
  if (options.prefix === undefined || options.prefix === '') throw new UsageError('sdk', 'missing --prefix DIR (where to write the install trees)');
  const prefix = resolve(options.prefix);
  if (!existsSync(join(capiDir, 'include', 'doca_version.h'))) {
    process.stderr.write(`softdpu sdk: the C library's sources are not in ${capiDir}; this copy of softdpu was installed without capi/\n`);
    return 1;
  }
  const version = packageVersion();
  const docaVer = docaVersion();
  const dir = mkdtempSync(join(tmpdir(), 'softdpu-sdk-'));
  try {
    const built = await buildLibrary({ cc: options.cc ?? process.env.CC ?? 'cc', cflags: options.cflags?.split(/\s+/).filter(Boolean) ?? [], version, dir });
    const paths = SIDES.map(({ side }) => writeTree(join(prefix, side), side, built, version, docaVer));
    const stubs = built.functions.length - built.real.length;
    process.stdout.write(
      `softdpu sdk: DOCA ${docaVer} for ${built.triplet} in ${prefix} (${built.real.length} of ${built.functions.length} functions implemented, ${stubs} answer DOCA_ERROR_NOT_SUPPORTED)\n` +
        SIDES.map(({ label }, i) => `  ${`${label}:`.padEnd(11)}PKG_CONFIG_PATH=${paths[i]}${i === 1 ? '  (defines DOCA_ARCH_DPU)' : ''}\n`).join('') +
        `  then, in a DOCA project: meson setup build && ninja -C build (docs/c.md)\n`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    if (err.output) process.stderr.write(err.output.split('\n').slice(-30).join('\n') + (err.output.endsWith('\n') ? '' : '\n'));
    process.stderr.write(`softdpu sdk: ${err.message}\n`);
    return 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
