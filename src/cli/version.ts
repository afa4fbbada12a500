/** What `softdpu --version` and every sample's `-v` print: the package's version and the DOCA API it models. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../native/locate.js';

/** The DOCA release whose API softdpu models (docs/doca-mapping.md). */
export const DOCA_API_VERSION = '3.0';

/** package.json's fields, read at run time (a checkout and an installed package alike); {} if unreadable. */
function manifest(): { version?: string; repository?: { url?: string } } {
  try {
    return JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as ReturnType<typeof manifest>;
  } catch {
    return {};
  }
}

/** The version in package.json; 'unknown' if unreadable. */
export function packageVersion(): string {
  return manifest().version ?? 'unknown';
}

/** Where the source repository is, for `git clone` (package.json's `repository`); undefined if it says nothing. */
export function repositoryUrl(): string | undefined {
  return manifest().repository?.url?.replace(/^git\+/, '');
}

/**
 * `softdpu 0.1.0 (DOCA 3.0 API)`: what `doca_version` and `doca_version_runtime` tell in DOCA (the
 * version built against and the one running; here they are one).
 */
export function versionLine(): string {
  return `softdpu ${packageVersion()} (DOCA ${DOCA_API_VERSION} API)`;
}
