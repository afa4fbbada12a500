/**
 * Where the C addon comes from, in order: the prebuilt binary for this platform that the npm tarball
 * carries (prebuilds/<platform>-<arch>/softdpu.node, made by `npm pack`), then a local build
 * (src/native/build/Release, then Debug: a checkout's `npm ci`, or `node scripts/build-native.mjs` run
 * by hand in an installed package; node-gyp runs in src/native, see that script for why). A candidate that exists but does not load (another libc, too old a glibc) is
 * passed over for the next, so a build from source fixes what no prebuild fits. No side effects here:
 * `softdpu doctor` uses this module to explain a failure that `load.ts` would throw.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Native } from './native.js';

/** The package's root directory (this file is dist/src/native/locate.js in it). */
export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export type AddonKind = 'prebuild' | 'build';

export interface AddonCandidate {
  readonly path: string;
  readonly kind: AddonKind;
}

/** A candidate that was passed over, and why. */
export interface AddonAttempt extends AddonCandidate {
  readonly problem: string;
}

export interface LoadedAddon extends AddonCandidate {
  readonly native: Native;
  /** Candidates before it that were passed over. */
  readonly passedOver: readonly AddonAttempt[];
}

/** The paths tried, in order. */
export function addonCandidates(root = packageRoot, platform: string = process.platform, arch: string = process.arch): AddonCandidate[] {
  return [
    { path: join(root, 'prebuilds', `${platform}-${arch}`, 'softdpu.node'), kind: 'prebuild' },
    { path: join(root, 'src', 'native', 'build', 'Release', 'softdpu.node'), kind: 'build' },
    { path: join(root, 'src', 'native', 'build', 'Debug', 'softdpu.node'), kind: 'build' },
  ];
}

/** The command that builds the addon from source in `root` (needs a C compiler, make and python3). */
export function buildCommand(root = packageRoot): string {
  const dir = /^[\w/.@+-]+$/.test(root) ? root : `'${root.replaceAll("'", "'\\''")}'`; // quoted for a shell when it must be
  return `cd ${dir} && node scripts/build-native.mjs`;
}

/** No candidate loads. The message is one line: what was tried, why each failed, what to run. */
export class AddonLoadError extends Error {
  constructor(
    readonly attempts: readonly AddonAttempt[],
    readonly root: string,
  ) {
    const tried = attempts.map((a) => `${relative(root, a.path)}: ${a.problem}`).join('; ');
    super(
      `softdpu native addon: nothing loads for ${process.platform}-${process.arch} in ${root} (${tried}); ` +
        `build it from source with \`${buildCommand(root)}\` (needs a C compiler, make and python3); \`npx softdpu doctor\` explains more`,
    );
    this.name = 'AddonLoadError';
  }
}

/** ELF machine numbers of the architectures Node runs on, to name what a binary was built for. */
const ELF_MACHINES: Record<number, string> = {
  3: 'ia32', 8: 'mips', 20: 'ppc', 21: 'ppc64', 22: 's390x', 40: 'arm', 62: 'x64', 183: 'arm64', 243: 'riscv64', 258: 'loong64',
};

/**
 * Why a binary that failed to load cannot load here, when its ELF header tells (glibc reports a binary
 * for another machine as "cannot open shared object file: No such file or directory").
 */
function elfMismatch(path: string): string | undefined {
  try {
    const head = readFileSync(path).subarray(0, 20);
    if (head.length < 20 || head.toString('latin1', 0, 4) !== '\x7fELF') return 'not an ELF shared object';
    const arch = ELF_MACHINES[head.readUInt16LE(18)] ?? `ELF machine ${head.readUInt16LE(18)}`;
    return arch === process.arch ? undefined : `built for ${arch}, this is ${process.arch}`;
  } catch {
    return undefined;
  }
}

/** Loads the first candidate that loads; throws {@link AddonLoadError} when none does. */
export function loadAddon(root = packageRoot, candidates = addonCandidates(root)): LoadedAddon {
  const require = createRequire(import.meta.url);
  const passedOver: AddonAttempt[] = [];
  for (const candidate of candidates) {
    if (!existsSync(candidate.path)) {
      passedOver.push({ ...candidate, problem: 'not found' });
      continue;
    }
    try {
      return { ...candidate, native: require(candidate.path) as Native, passedOver };
    } catch (err) {
      // dlopen's reasons ("wrong ELF class", "version `GLIBC_2.33' not found") repeat the path: drop it.
      const reason = (err as Error).message.split(`${candidate.path}: `).join('').replace(/\s+/g, ' ').trim();
      const problem = elfMismatch(candidate.path) ?? reason;
      passedOver.push({ ...candidate, problem });
    }
  }
  throw new AddonLoadError(passedOver, root);
}
