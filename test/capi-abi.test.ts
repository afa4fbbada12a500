/**
 * The ABI of softdpu's C library, against an install tree `softdpu sdk` wrote: every function the
 * headers declare links and is exported under its name, and nothing else is exported; the enum values,
 * constants and struct layouts are the reference's (test/fixtures/capi/abi.c asserts them at compile
 * time); the error names and descriptions are the TypeScript side's.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { headerFunctions } from '../src/cli/sdk-build.js';
import { abiListSource } from '../src/cli/sdk-headers.js';
import { DOCA_ERRORS } from '../src/core/error.js';
import { runCommand } from './helpers/child.js';
import { assertRan, C_FLAGS, capiFixtures, ccBuild, repoRoot, runProgram, sideEnv, writeSdk } from './helpers/capi.js';

test('every declared function links and is exported, the values are the reference\'s, the names the TypeScript\'s', { timeout: 180_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: '-Werror' });
  const functions = headerFunctions();
  const names = functions.map((f) => f.name);
  assert.equal(new Set(names).size, names.length, 'no function is declared twice');

  // An independent count: every declaration carries exactly one of DOCA's attribute macros.
  const include = join(repoRoot, 'capi', 'include');
  const marked = readdirSync(include)
    .filter((f) => f.endsWith('.h') && f !== 'doca_compat.h')
    .reduce((n, f) => n + (readFileSync(join(include, f), 'utf8').match(/^\s*DOCA_(STABLE|EXPERIMENTAL|DEPRECATED)\b/gm)?.length ?? 0), 0);
  assert.equal(functions.length, marked, 'the header reader finds every declaration');

  writeFileSync(join(tree.scratch, 'abi_functions.h'), abiListSource(functions));
  await t.test('abi.c builds with the C compiler and pkg-config alone, and runs without LD_LIBRARY_PATH', async (t) => {
    const abi = await ccBuild(t, tree, 'host', join(capiFixtures, 'abi.c'), 'abi', [`-I${tree.scratch}`]);
    const ran = assertRan(await runProgram(t, abi, [], tree.scratch), 'abi');
    const lines = ran.stdout.trim().split('\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('wrong')), [], 'every address is the exported symbol');
    assert.equal(lines.find((l) => l.startsWith('functions ')), `functions ${functions.length}`);
    assert.equal(lines.find((l) => l.startsWith('version ')), 'version 3.0.0058 3.0.0058');
    const errors = lines.filter((l) => l.startsWith('error ')).map((l) => l.replace(/^error -?\d+ /, ''));
    const unrecognized = 'unrecognized error code|unrecognized error code';
    assert.deepEqual(errors, [unrecognized, ...DOCA_ERRORS.map(([name, descr]) => `${name}|${descr}`), unrecognized]);
  });

  await t.test('the library exports exactly the declared functions, under DOCA\'s sonames', async (t) => {
    const lib = join(tree.prefix, 'host', 'lib', tree.triplet);
    const nm = assertRan(await runCommand(t, 'nm', ['-D', '--defined-only', join(lib, 'libdoca_common.so.2')], lib, sideEnv(tree, 'host'), 30_000), 'nm');
    const exported = nm.stdout.split('\n').flatMap((l) => /^\S+ [TtWwDdBbRrVv] (\S+)$/.exec(l)?.[1] ?? []);
    assert.deepEqual([...exported].sort(), [...names].sort());
  });

  await t.test('the DPU tree\'s headers compile the same test', async (t) => {
    const env = sideEnv(tree, 'dpu');
    const flags = assertRan(await runCommand(t, 'pkg-config', ['--cflags', 'doca-common'], tree.scratch, env, 30_000), 'pkg-config');
    assertRan(await runCommand(t, 'cc', [...C_FLAGS, '-fsyntax-only', `-I${tree.scratch}`, ...flags.stdout.trim().split(/\s+/), join(capiFixtures, 'abi.c')], tree.scratch, env, 60_000), 'cc -fsyntax-only (dpu)');
  });
});
