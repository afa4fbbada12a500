/** What `softdpu --version` and every sample's `-v` print: the package's version and the DOCA API it models. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../native/locate.js';

/** The DOCA release whose API softdpu models (docs/doca-mapping.md). */
export const DOCA_API_VERSION = '3.0';

/** The version in package.json, read at run time (a checkout and an installed package alike); 'unknown' if unreadable. */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** `softdpu 0.1.0 (DOCA 3.0 API)`. */
export function versionLine(): string {
  return `softdpu ${packageVersion()} (DOCA ${DOCA_API_VERSION} API)`;
}
