/**
 * `softdpu sample NAME -j FILE`: flags from a JSON file, as NVIDIA's samples read them. The keys are the
 * long flag names, at the top level or in DOCA's `doca_*_flags` sections (a multi-letter single-dash
 * name such as `pf_dev` too); the command line wins over the file; bad files are refused by name.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertExit, sample } from './helpers/child.js';
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
    ['object.json', { doca_program_flags: { 'dev-pci-addr': { bus: 1 } } }, /dev-pci-addr is \{"bus":1\}, not a string or a number/],
    ['broken.json', '{"pci-addr": ', /cannot read the JSON flags file .*broken\.json/],
  ];
  for (const [name, doc, message] of cases) {
    const child = sample(t, dir, ['sync_event_local_pci', '-j', write(name, doc), '--timeout', '2']);
    await assertExit(child, 1);
    assert.match(child.stderr.join(''), message, name);
  }
});
