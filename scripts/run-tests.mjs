// Runs every dist/test/*.test.js with Node's test runner, several files at once (each test file uses
// its own fabric directory), with a per-test watchdog on top of each test's own timeout.
// Extra arguments are passed to `node --test` (e.g. --test-name-pattern=futex).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'test');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .map((f) => join(dir, f));
const args = ['--test', '--test-concurrency=3', '--test-timeout=180000', ...process.argv.slice(2), ...files];
const { status, signal } = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(status ?? (signal ? 1 : 0));
