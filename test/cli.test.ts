/** The softdpu command: help, devices, usage errors. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { runCli } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

test('softdpu --help prints the commands and exits 0', { timeout: 10_000 }, async (t) => {
  const { exit, stdout } = await runCli(t, ['--help']);
  assert.equal(exit.code, 0);
  for (const word of ['devices', 'fabric clean', '--fabric', '--topology']) assert.ok(stdout.includes(word), word);
});

test('softdpu devices lists each device with side, names, representors and capabilities', { timeout: 10_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { exit, stdout } = await runCli(t, ['devices', '--fabric', dir]);
  assert.equal(exit.code, 0);
  assert.match(stdout, /0000:03:00\.0 {2}DPU Arm \(bf0\)\n {4}ibdev mlx5_0 {2}iface p0/);
  assert.match(stdout, /0000:b1:00\.2 {2}VF {2}pf0vf0 {2}net/);
  assert.match(stdout, /0000:b1:00\.3 {2}host VF/);
  assert.match(stdout, /comch: server yes, client no, max_name_len 128, max_msg_size 4080/);
  assert.match(stdout, /comch: server no, client yes/);
  const json = JSON.parse((await runCli(t, ['devices', '--json', '--fabric', dir])).stdout);
  assert.deepEqual(
    json.devices.map((d: { pci: string; caps: { comch: { server: boolean } } }) => [d.pci, d.caps.comch.server]),
    [['0000:03:00.0', true], ['0000:b1:00.0', false], ['0000:b1:00.2', false], ['0000:b1:00.3', false]],
  );
  assert.equal(json.devices[1].caps.syncEvent.exportToGpu, false);
});

test('unknown commands and options are usage errors (exit 2)', { timeout: 10_000 }, async (t) => {
  const dir = tempFabricDir(t);
  for (const args of [['frobnicate'], ['devices', '--bogus'], ['fabric', 'wipe', '--fabric', dir]]) {
    const { exit, stderr } = await runCli(t, args);
    assert.equal(exit.code, 2, args.join(' '));
    assert.match(stderr, /^softdpu: /);
  }
});

test('softdpu demo (npm start) runs every sample pair across processes on a private fabric it removes', { timeout: 120_000 }, async (t) => {
  const tmp = tempFabricDir(t);
  const { exit, stdout, stderr } = await runCli(t, ['demo'], { TMPDIR: tmp });
  assert.equal(exit.code, 0, stderr + stdout);
  assert.match(stdout, /All 6 scenarios passed/);
  for (const line of [/dpu {2}\| Message received: 'Message from the client'/, /host \| Message received: 'Message from the server'/, /host \| The exporter signaled 1/, /dpu {2}\| The exporter signaled 1/, /dpu {2}\| Hello from kernel/, /host \| All 100 answers came back in order/]) {
    assert.match(stdout, line);
  }
  // The closing table (what crossed, from the samples' logs) and where to look further.
  assert.match(stdout, /What the demo measured on the way/);
  assert.match(stdout, /^ {2}1\. +comch_ctrl_path_server \/ _client +\d+ ms +2 {2}2 messages$/m);
  assert.match(stdout, /^ {2}\d\. +sync_event_local_pci \/ _remote_pci +\d+ ms +2 {2}2 sync event signals$/m);
  assert.match(stdout, /^ {2}softdpu top +# /m);
  assert.match(stdout, /^ {2}softdpu view +# /m);
  const fabric = stdout.match(/\((\/[^)]*softdpu-demo-[^)]*)\)/)?.[1];
  assert.ok(fabric?.startsWith(tmp), `the demo's fabric ${fabric} is under TMPDIR`);
  assert.deepEqual(readdirSync(tmp), [], 'the demo removed its fabric');
});
