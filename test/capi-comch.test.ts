/**
 * softdpu's C control path samples (capi/samples/comch_ctrl_path, built with meson against both trees)
 * on a private fabric, with each other and with their TypeScript counterparts (`softdpu sample`), both
 * ways: both texts arrive, both sides exit 0, nothing is left in the fabric. The library and the samples
 * are built with AddressSanitizer and UBSan (meson's b_sanitize), leaks included: a report fails the
 * program's exit code.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { assertExit, type Child, sample } from './helpers/child.js';
import { buildSamples, startProgram, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

/** Everything `child` wrote (stdout lines and stderr), for the messages of both languages' samples. */
const output = (child: Child) => `${child.lines.join('\n')}\n${child.stderr.join('')}`;

/** The fabric's entries (what a sweep would consider), without the epitaphs TypeScript threads leave on purpose. */
const entries = (dir: string) => readdirSync(dir).filter((name) => !name.endsWith('.exited'));

const SANITIZE = '-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all -g';
const ASAN = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };
const REPORT = /Sanitizer|runtime error/;

/** A C sample under the sanitizers; its stderr is checked for a report at the test's end. */
function startSample(t: TestContext, path: string, args: string[], dir: string): Child {
  const child = startProgram(t, path, args, dir, ASAN);
  t.after(() => assert.doesNotMatch(child.stderr.join(''), REPORT, child.stderr.join('').slice(-4000)));
  return child;
}

test('the C control path samples with each other and with softdpu sample, both ways', { timeout: 170_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: SANITIZE });
  const dpu = await buildSamples(t, tree, 'dpu', 'comch_ctrl_path', ['-Db_sanitize=address,undefined']);
  const host = await buildSamples(t, tree, 'host', 'comch_ctrl_path', ['-Db_sanitize=address,undefined']);

  await t.test('the C samples: both texts arrive, both exit 0, nothing is left in the fabric', async (t) => {
    const dir = tempFabricDir(t);
    const server = startSample(t, dpu.server, ['-t', 'from the C server'], dir);
    await server.waitFor(/Server context is running/);
    const client = startSample(t, host.client, ['-t', 'from the C client'], dir);
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assert.match(output(server), /Message received: 'from the C client'/);
    assert.match(output(client), /Message received: 'from the C server'/);
    assert.deepEqual(entries(dir), []);
  });

  await t.test('C server, TypeScript client (softdpu sample comch_ctrl_path_client)', async (t) => {
    const dir = tempFabricDir(t);
    const server = startSample(t, dpu.server, ['-t', 'from the C server'], dir);
    await server.waitFor(/Server context is running/);
    const client = sample(t, dir, ['comch_ctrl_path_client', '-t', 'from the TypeScript client']);
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assert.match(output(server), /Message received: 'from the TypeScript client'/);
    assert.match(output(client), /Message received: 'from the C server'/);
  });

  await t.test('TypeScript server (softdpu sample comch_ctrl_path_server), C client', async (t) => {
    const dir = tempFabricDir(t);
    // The C client looks for the server every 100 ms until it is there.
    const server = sample(t, dir, ['comch_ctrl_path_server', '-t', 'from the TypeScript server']);
    const client = startSample(t, host.client, ['-t', 'from the C client'], dir);
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assert.match(output(server), /Message received: 'from the C client'/);
    assert.match(output(client), /Message received: 'from the TypeScript server'/);
  });
});
