// Runs every dist/test/*.test.js with Node's test runner: the files a few at once (each test file uses
// its own fabric directory), then the benchmark test alone (it busy-polls both cores, and its peers'
// figures are only worth checking on a machine the other tests leave alone). A per-test watchdog (10 min)
// behind each test's own timeout, for a test that has none, and a watchdog on the whole run.
// Extra arguments are passed to `node --test` (e.g. --test-name-pattern=futex).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WATCHDOG_MINUTES = 15;
/**
 * Test files at once. Many of them run several processes (a server, clients, their workers) that are
 * busy while they exchange: on a 2-CPU machine more than two files at once only queue up for the CPUs,
 * and a test's waits (bounded, but bounded all the same) then measure the queue.
 */
const CONCURRENCY = 2;
/** Run alone, after the others. */
const ALONE = ['bench-cli.test.js'];

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'test');
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.test.js'))
  .sort();
const phases = [all.filter((f) => !ALONE.includes(f)), all.filter((f) => ALONE.includes(f))]
  .filter((files) => files.length > 0)
  .map((files) => ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=600000', ...process.argv.slice(2), ...files.map((f) => join(dir, f))]);

let current;
// The current phase leads its own process group: the test files' processes and the fixtures they
// start join it, so the watchdog (and a forwarded Ctrl-C) reaches all of them, not only `node --test`.
const killGroup = (signal) => {
  try {
    if (current) process.kill(-current.pid, signal);
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
// Detached, the group no longer gets the terminal's signals: pass them on (and run no further phase).
let interrupted;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted = signal;
    killGroup(signal);
  });
}

/** Runs one `node --test`; resolves with its exit code (1 when it did not run or ended by a signal). */
function run(args) {
  return new Promise((resolve) => {
    current = spawn(process.execPath, args, { stdio: 'inherit', detached: true });
    current.once('error', (err) => {
      console.error(`test run could not start: ${err.message}`);
      resolve(1);
    });
    current.once('exit', (code, signal) => {
      // Whatever it left behind in its group (it exited, so nothing of it waits for them) goes too.
      killGroup('SIGKILL');
      if (signal) console.error(`test run ended by ${signal}`);
      resolve(code ?? 1);
    });
  });
}

let failed = false;
for (const [i, args] of phases.entries()) {
  if (watchdogFired || interrupted) break;
  // Every phase runs even when one before failed: one run shows every failure.
  const code = await run(args);
  if (code !== 0) {
    failed = true;
    console.error(`test run: phase ${i + 1} of ${phases.length} failed (exit ${code}); its report is above`);
  }
}
clearTimeout(watchdog);
process.exit(failed || watchdogFired || interrupted ? 1 : 0);
