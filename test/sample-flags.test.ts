/**
 * `softdpu sample NAME -j FILE`: flags from a JSON file, as NVIDIA's samples read them. The keys are the
 * long flag names, at the top level or in DOCA's `doca_*_flags` sections (a multi-letter single-dash
 * name such as `pf_dev` too); the command line wins over the file; bad files are refused by name (exit
 * 1), a bad command line is a usage error (exit 2). Also `sample --list`, and the fault plan's warning.
 */
import assert from 'node:assert/strict';
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertExit, runCli, sample } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

test('-j FILE: long names at the top level; the command line wins over the file', { timeout: 20_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const flags = join(dir, 'flags.json');
  writeFileSync(flags, JSON.stringify({ 'pci-addr': 'b1:00.7', 'log-level': 30 }));
  const fromFile = sample(t, dir, ['comch_ctrl_path_client', '-j', flags, '--timeout', '2']);
  await assertExit(fromFile, 1);
  const err = fromFile.stderr.join('');
  assert.match(err, /b1:00\.7/, 'the device named in the file was used');
  assert.ok(!err.includes('[INF]'), 'log level 30 from the file silences INFO');

  const overridden = sample(t, dir, ['comch_ctrl_path_client', '--json', flags, '-p', 'b1:00.0', '-l', '50', '--timeout', '0.5']);
  await assertExit(overridden, 1);
  const log = overridden.stderr.join('');
  assert.match(log, /\[INF\].*Starting the sample/, '-l 50 on the command line wins');
  assert.match(log, /timed out after 0\.5 s waiting for the server/, '-p b1:00.0 on the command line wins (a real device, no server)');
  assert.doesNotMatch(log, /b1:00\.7/);
});

test('-j FILE with the comments DOCA\'s own flags files carry', { timeout: 20_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const flags = join(dir, 'commented.json');
  writeFileSync(flags, '{\n  // DOCA general flags\n  "doca_general_flags": { "log-level": 30 },\n  /* the program\'s own */\n  "doca_program_flags": { "pci-addr": "b1:00.7", "text": "a // not a comment" }\n}\n');
  const run = sample(t, dir, ['comch_ctrl_path_client', '-j', flags, '--timeout', '2']);
  await assertExit(run, 1);
  const err = run.stderr.join('');
  assert.match(err, /b1:00\.7/, 'the file was read, comments and all');
  assert.ok(!err.includes('[INF]'), 'its log level applied');
});

test('-j FILE: DOCA sections and single-dash names as keys; unknown keys and wrong types are refused', { timeout: 20_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const write = (name: string, doc: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
    return path;
  };
  const alias = sample(t, dir, ['dpa_wait_kernel_launch', '-j', write('alias.json', { doca_program_flags: { pf_dev: 'b1:00.7' } }), '--timeout', '2']);
  await assertExit(alias, 1);
  assert.match(alias.stderr.join(''), /b1:00\.7/, 'pf_dev (DOCA\'s -pf_dev) names --pf-dev');

  const cases: [string, unknown, RegExp][] = [
    ['unknown.json', { 'no-such-flag': 1 }, /unknown flag "no-such-flag"/],
    ['boolean.json', { async: 'maybe' }, /async is "maybe", not true or false/],
    ['object.json', { doca_program_flags: { 'dev-pci-addr': { bus: 1 } } }, /pci-addr is \{"bus":1\}, not a string or a number/],
    ['broken.json', '{"pci-addr": ', /cannot read the JSON flags file .*broken\.json/],
  ];
  for (const [name, doc, message] of cases) {
    const child = sample(t, dir, ['sync_event_local_pci', '-j', write(name, doc), '--timeout', '2']);
    await assertExit(child, 1);
    assert.match(child.stderr.join(''), message, name);
  }
});

test('a sample\'s bad command line is one line on stderr naming the flag, exit 2; a bad flags file is a failure, exit 1', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const usage: [string[], RegExp][] = [
    [['comch_ctrl_path_server', '--no-such-flag'], /^softdpu sample comch_ctrl_path_server: unknown option --no-such-flag; see 'softdpu sample comch_ctrl_path_server --help'$/],
    [['comch_ctrl_path_client', '-t'], /^softdpu sample comch_ctrl_path_client: -t needs a value \(got "--fabric"\? write --text=--fabric\)/],
    [['comch_ctrl_path_client', 'extra'], /^softdpu sample comch_ctrl_path_client: unexpected argument "extra"/],
    [['comch_ctrl_path_client', '--timeout', '0'], /^softdpu sample comch_ctrl_path_client: --timeout "0" is not a positive number of seconds/],
    [['comch_ctrl_path_client', '-l', 'loud'], /^softdpu sample comch_ctrl_path_client: --log-level "loud" is not a log level/],
    [['comch_msgq_dpa_pingpong', '-n', 'x'], /^softdpu sample comch_msgq_dpa_pingpong: --count "x" is not a positive integer/],
    [['sync_event_local_pci', '--async_num_tasks=-1'], /^softdpu sample sync_event_local_pci: --async-num-tasks "-1" is not a positive integer/],
    [['sync_event_local_pci', '--atomic=yes'], /^softdpu sample sync_event_local_pci: --atomic takes no value/],
  ];
  for (const [args, line] of usage) {
    const child = sample(t, dir, args);
    await assertExit(child, 2);
    assert.deepEqual(child.lines, [], args.join(' '));
    assert.match(child.stderr.join(''), /^[^\n]+\n$/, `${args.join(' ')}: one line`);
    assert.match(child.stderr.join('').trimEnd(), line);
  }
  const flags = join(dir, 'flags.json');
  writeFileSync(flags, JSON.stringify({ count: 0 }));
  const fromFile = sample(t, dir, ['comch_msgq_dpa_pingpong', '-j', flags]);
  await assertExit(fromFile, 1);
  assert.match(fromFile.stderr.join(''), /^softdpu sample comch_msgq_dpa_pingpong: \S+flags\.json: count is 0, not a positive integer \(DOCA_ERROR_INVALID_VALUE: Invalid input\)\n$/);
});

test('softdpu sample --list shows each sample with its flags, and the common flags once', { timeout: 20_000 }, async (t) => {
  const list = await runCli(t, ['sample', '--list']);
  assert.deepEqual([list.exit.code, list.stderr], [0, '']);
  const { stdout } = list;
  assert.match(stdout, /^comch_msgq_dpa_pingpong: [^\n]+\n {4}-pf_dev, --pf-device VALUE +PF device[^\n]*\n {4}-n, --count VALUE +messages to exchange \(default: 100\)\n {8}--poll +/m);
  assert.match(stdout, /^comch_ctrl_path_server: [^\n]+\n {4}-p, --pci-addr VALUE +DOCA Comch device PCI address \(default: 03:00\.0\)/m);
  assert.match(stdout, /flags of every sample:\n {4}-h, --help/);
  assert.equal(stdout.match(/--timeout VALUE/g)?.length, 1, 'the common flags are listed once');
});

test('a sample warns, in one line, when a fault plan is in force on its fabric, naming the faults and how to clear them', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const warning = /\[WARN\]\[COMCH_CTRL_PATH_CLIENT\] the fault plan of (\S+) is in force: f1 \(again\), f2 \(delay-event\); softdpu fault clear --fabric (\S+) removes it\n/g;
  const run = async () => {
    const client = sample(t, dir, ['comch_ctrl_path_client', '--timeout', '0.5']);
    await assertExit(client, 1); // no server: it times out, after the start where the warning belongs
    return client.stderr.join('');
  };
  assert.doesNotMatch(await run(), /\[WARN\].*fault plan/, 'no warning without a plan');
  // Faults that never apply (pid 1 is not a sample), so that the run goes as it would without them.
  const added = await runCli(t, ['fault', 'add', '{"kind":"again","match":{"pid":1}}', '{"kind":"delay-event","match":{"pid":1},"delayMs":1}', '--fabric', dir]);
  assert.equal(added.exit.code, 0, added.stderr);
  const warned = [...(await run()).matchAll(warning)];
  assert.equal(warned.length, 1, 'one warning line');
  assert.equal(warned[0]![1], warned[0]![2]);
  assert.equal(warned[0]![1], realpathSync(dir));
  assert.equal((await runCli(t, ['fault', 'clear', '--fabric', dir])).exit.code, 0);
  assert.doesNotMatch(await run(), /\[WARN\].*fault plan/, 'no warning once the plan is cleared');
});
