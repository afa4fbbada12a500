// Runs every dist/test/*.test.js with Node's test runner, several files at once (each test file uses
// its own fabric directory), with a per-test watchdog on top of each test's own timeout, and a watchdog
// on the whole run.
// Extra arguments are passed to `node --test` (e.g. --test-name-pattern=futex).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WATCHDOG_MINUTES = 15;

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'test');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .map((f) => join(dir, f));
const args = ['--test', '--test-concurrency=3', '--test-timeout=180000', ...process.argv.slice(2), ...files];
// The runner leads its own process group: the test files' processes and the fixtures they start join it,
// so the watchdog (and a forwarded Ctrl-C) reaches all of them, not only `node --test`.
const child = spawn(process.execPath, args, { stdio: 'inherit', detached: true });
const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
};
// A whole-suite watchdog too: a test file whose process never exits would otherwise hang CI.
let watchdogFired = false;
const watchdog = setTimeout(() => {
  watchdogFired = true;
  console.error(`test run killed by the ${WATCHDOG_MINUTES}-minute watchdog (the runner's process group got SIGKILL)`);
  killGroup('SIGKILL');
}, WATCHDOG_MINUTES * 60 * 1000);
// Detached, the group no longer gets the terminal's signals: pass them on.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => killGroup(signal));
child.once('error', (err) => {
  clearTimeout(watchdog);
  console.error(`test run could not start: ${err.message}`);
  process.exit(1);
});
child.once('exit', (code, signal) => {
  clearTimeout(watchdog);
  // Whatever the runner left behind in its group (it exited, so nothing of it waits for them) goes too.
  killGroup('SIGKILL');
  if (watchdogFired) process.exit(1);
  if (signal) console.error(`test run ended by ${signal}`);
  process.exit(code ?? 1);
});
