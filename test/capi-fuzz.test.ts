/**
 * The C library's parsers of what other processes write, under libFuzzer with AddressSanitizer and
 * UndefinedBehaviorSanitizer (test/fuzz/, docs/c.md "Fuzzing"): sync event PCI export blobs on a live
 * fabric, the comch handshake's frames (alone, and as a live C server and a live C client read them), a connection
 * segment's header and rings, and topology files.
 * Each target is built by test/fuzz/run.sh from the library's own sources, seeded by itself with what
 * the library encodes and exports, and fuzzed for FUZZ_SECONDS; any crash, sanitizer report or leak fails
 * the test with the reproducer's bytes and the command that replays it.
 *
 * Without clang's libFuzzer the test is skipped, saying what to install, except under CI=true (.ci/run),
 * where a fuzz test that skips would prove nothing: there it fails, naming the fix.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCommand } from './helpers/child.js';
import { cleanEnv, repoRoot } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

const TARGETS = ['blob', 'handshake', 'server', 'client', 'conn', 'topology'];
/** Per target: six of them well inside the suite's time on 2 loaded CPUs. run.sh takes longer by hand. */
const FUZZ_SECONDS = 15;
const INSTALL = 'apt-get install clang libclang-rt-dev';

/** Whether clang links a libFuzzer program with both sanitizers (Debian keeps their runtimes apart from clang). */
function libFuzzerMissing(): string | undefined {
  const dir = mkdtempSync('/tmp/sdpu-fz-probe-');
  const source = join(dir, 'probe.c');
  writeFileSync(source, '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n');
  const r = spawnSync('clang', ['-fsanitize=fuzzer,address,undefined', source, '-o', join(dir, 'probe')], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  if (r.error) return `no clang (${(r.error as NodeJS.ErrnoException).code})`;
  if (r.status !== 0) return `clang cannot link -fsanitize=fuzzer,address,undefined (${r.stderr.trim().split('\n')[0]})`;
  return undefined;
}

const missing = libFuzzerMissing();
const skip = missing === undefined || process.env.CI === 'true' ? false : `${missing}: ${INSTALL}`;

/** What libFuzzer's last status line and final stats say. */
function figures(output: string): string {
  const done = output.match(/#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+)/);
  return done ? `${done[1]} executions, cov ${done[2]}, ft ${done[3]}` : 'no DONE line';
}

test('the C parsers run under libFuzzer (ASan, UBSan) without a crash', { skip, timeout: 600_000 }, async (t) => {
  assert.equal(missing, undefined, `${missing}: the C library's fuzz test needs clang with libFuzzer and the sanitizer runtimes (${INSTALL}; .ci/run does it when apt-get is there)`);
  const out = tempFabricDir(t, 'sdpu-fz-');
  const script = join(repoRoot, 'test', 'fuzz', 'run.sh');
  for (const target of TARGETS) {
    const fabric = tempFabricDir(t, 'sdpu-fzf-');
    // The first target builds the library's objects (about 20 s on 2 CPUs); later ones link only.
    const r = await runCommand(t, 'bash', [script, target, String(FUZZ_SECONDS), out], repoRoot, cleanEnv({ SOFTDPU_FABRIC: fabric }), 300_000);
    const output = `${r.stdout}${r.stderr}`;
    const dir = join(out, target);
    const crashes = readdirSync(dir).filter((f) => /^(crash|leak|timeout|oom)-/.test(f));
    const reproducers = crashes.map((f) => `${join(dir, f)} (${readFileSync(join(dir, f)).toString('base64')})`);
    assert.ok(
      r.code === 0 && crashes.length === 0 && !/ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:/.test(output),
      `the ${target} fuzzer failed (exit ${r.code ?? r.signal})\n${output.slice(-8000)}\nreproducers (base64): ${reproducers.join(', ') || 'none'}\n` +
        `replay one: base64 -d > crash <<< '...'; test/fuzz/run.sh ${target} 1; SOFTDPU_FABRIC=$(mktemp -d) SOFTDPU_FUZZ_LOG=1 build/fuzz/${target}-fuzzer crash`,
    );
    t.diagnostic(`${target}: ${figures(output)}`);
  }
});
