// Builds the C addon with node-gyp against the headers of the Node that runs this script, so nothing
// is downloaded (node-gyp run without --nodedir tries to fetch headers, and the network may be closed).
// Skips the build when the binary is newer than its sources.
//
// binding.gyp lives in src/native, and node-gyp runs there (output: src/native/build/Release), because
// npm turns a binding.gyp at a package's root into an implied `node-gyp rebuild` install script, which
// a user's lockfile-driven `npm ci` then runs (gypfile: false is not in the lockfile): the prebuilds
// would be rebuilt, or fail to build, on every install.
//
// It ships in the npm package too: where no prebuilt binary fits, a user builds from source with
// `cd node_modules/softdpu && node scripts/build-native.mjs` (docs/install.md).
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const native = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'native');
const output = join(native, 'build', 'Release', 'softdpu.node');
const sources = ['binding.gyp', 'softdpu.c'].map((f) => join(native, f));

function upToDate() {
  if (!existsSync(output)) return false;
  const built = statSync(output).mtimeMs;
  return sources.every((f) => statSync(f).mtimeMs <= built);
}

/** The directory holding include/node/node_api.h for the running Node (scripts/prebuild.mjs uses it too). */
export function nodeDir() {
  const candidates = [process.env.npm_config_nodedir, dirname(dirname(process.execPath))];
  for (const dir of candidates) {
    if (dir && existsSync(join(dir, 'include', 'node', 'node_api.h'))) return dir;
  }
  throw new Error(
    `Node headers not found (looked for include/node/node_api.h under ${candidates.filter(Boolean).join(', ')}); ` +
      'install the headers of this Node or set npm_config_nodedir',
  );
}

function nodeGyp() {
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  const bundled = join(dirname(dirname(process.execPath)), 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(bundled)) return [process.execPath, bundled];
  return ['node-gyp'];
}

function main() {
  if (upToDate() && !process.argv.includes('--force')) return;
  const [cmd, ...pre] = nodeGyp();
  execFileSync(cmd, [...pre, 'rebuild', `--nodedir=${nodeDir()}`, '--loglevel=warn'], { cwd: native, stdio: 'inherit' });
}

// Run as a script, not when imported for nodeDir(). (import.meta.url is the real path; argv[1] may
// go through a symlink, as in pnpm's node_modules.)
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) main();
