// `npm pack` and `npm publish` run this first (prepack): it makes everything the tarball carries from
// the sources as they are, whatever the checkout held before, so that a clean clone packs a complete
// package: the prebuilt binaries (scripts/prebuild.mjs), and dist/ compiled afresh (removed first, so
// the output of a deleted source cannot end up in the tarball). package.json's `files` picks what ships.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (...args) => execFileSync(process.execPath, args, { cwd: root, stdio: ['ignore', 2, 2] });

run(join(root, 'scripts', 'prebuild.mjs'));
rmSync(join(root, 'dist'), { recursive: true, force: true });
// The devDependency's compiler (a checkout after `npm ci`), as `npm run build:ts` would run it: TypeScript 7,
// installed as `@typescript/native` (`typescript` is the TypeScript 6 API that TypeDoc needs; typedoc.config.mjs).
const tsc = join(dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')), 'bin', 'tsc');
run(tsc, '-p', join(root, 'tsconfig.json'));
