import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Native } from './native.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const candidates = [join(root, 'build', 'Release', 'softdpu.node'), join(root, 'build', 'Debug', 'softdpu.node')];

function load(): Native {
  const found = candidates.find((path) => existsSync(path));
  if (!found) {
    throw new Error(`softdpu native addon not found (looked in ${candidates.join(', ')}); run \`npm run build:native\``);
  }
  return createRequire(import.meta.url)(found) as Native;
}

/** The addon, loaded once per thread on first import. */
export const native: Native = load();
