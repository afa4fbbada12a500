// `npm pack` and `npm publish` run this first (prepack): it makes everything the tarball carries from
// the sources as they are, whatever the checkout held before, so that a clean clone packs a complete
// package: the prebuilt binaries (scripts/prebuild.mjs, which fails unless every platform the package
// promises was built, or SOFTDPU_PREBUILDS says which to make), and dist/ compiled afresh (removed first,
// so the output of a deleted source cannot end up in the tarball) with its command executable
// (scripts/build-ts.mjs). package.json's `files` picks what ships.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (...args) => execFileSync(process.execPath, args, { cwd: root, stdio: ['ignore', 2, 2] });

run(join(root, 'scripts', 'prebuild.mjs'));
rmSync(join(root, 'dist'), { recursive: true, force: true });
run(join(root, 'scripts', 'build-ts.mjs'));
