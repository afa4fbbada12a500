// Builds the C addon with node-gyp against the headers of the Node that runs this script, so nothing
// is downloaded (node-gyp run without --nodedir tries to fetch headers, and the network may be closed).
// Skips the build when the binary is newer than its sources.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const output = join(root, 'build', 'Release', 'softdpu.node');
const sources = ['binding.gyp', 'src/native/softdpu.c'].map((f) => join(root, f));

function upToDate() {
  if (!existsSync(output)) return false;
  const built = statSync(output).mtimeMs;
  return sources.every((f) => statSync(f).mtimeMs <= built);
}

function nodeDir() {
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

if (upToDate() && !process.argv.includes('--force')) process.exit(0);
const [cmd, ...pre] = nodeGyp();
execFileSync(cmd, [...pre, 'rebuild', `--nodedir=${nodeDir()}`, '--loglevel=warn'], { cwd: root, stdio: 'inherit' });
