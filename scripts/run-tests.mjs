// Runs every dist/test/*.test.js with Node's test runner, several files at once (each test file uses
// its own fabric directory), with a per-test watchdog on top of each test's own timeout, and a watchdog
// on the whole run.
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
// A whole-suite watchdog too: a test file whose process never exits would otherwise hang CI.
const { status, signal, error } = spawnSync(process.execPath, args, { stdio: 'inherit', timeout: 15 * 60 * 1000, killSignal: 'SIGKILL' });
if (error) console.error(`test run aborted: ${error.message}`);
process.exit(status ?? 1);
