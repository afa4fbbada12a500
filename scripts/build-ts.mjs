// Compiles the TypeScript (`npm run build:ts`, and prepack) with the devDependency's compiler, then makes
// the command executable: tsc writes every file 0644, and the bin must run as `npx softdpu` in a
// checkout after any rebuild, and be stored 0755 in the tarball that `npm pack` makes from dist/.
// The compiler is TypeScript 7, installed as `@typescript/native` (`typescript` is the TypeScript 6 API
// that TypeDoc needs; typedoc.config.mjs).
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')), 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
const { bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const file of Object.values(bin)) chmodSync(join(root, file), 0o755);
