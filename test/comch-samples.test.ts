/** The comch control path samples as CLI commands, with NVIDIA's flow and DOCA's common flags. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertExit, sample } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

test('server and client samples exchange their texts and both stop cleanly', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = sample(t, dir, ['comch_ctrl_path_server', '-p', '03:00.0', '-r', 'b1:00.0', '-t', 'from the DPU']);
  const client = sample(t, dir, ['comch_ctrl_path_client', '-p', 'b1:00.0', '-t', 'from the host']);
  await assertExit(client, 0, [server]);
  await assertExit(server, 0, [client]);
  const serverLog = server.stderr.join('');
  const clientLog = client.stderr.join('');
  assert.match(serverLog, /\[APP\]\[INF\]\[COMCH_CTRL_PATH_SERVER\] Message received: 'from the host'/);
  assert.match(clientLog, /\[APP\]\[INF\]\[COMCH_CTRL_PATH_CLIENT\] Message received: 'from the DPU'/);
  assert.match(clientLog, /Client context entered stopping state/);
  assert.match(serverLog, /Server context has been stopped/);
  assert.match(serverLog, /Sample finished successfully/);
  assert.deepEqual([...server.lines, ...client.lines], [], 'samples log to stderr, nothing to stdout');
});

test('a client with no server gives up after --timeout with a clear message and a non-zero exit', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const client = sample(t, dir, ['comch_ctrl_path_client', '--timeout', '1']);
  await assertExit(client, 1);
  assert.match(client.stderr.join(''), /timed out after 1 s waiting for the server comch_ctrl_path_sample_server \(is it running\?\).*DOCA_ERROR_TIME_OUT/);
});

test('flags from a JSON file (DOCA layout), -h, -v, -l and bad flags', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const flags = join(dir, 'flags.json');
  writeFileSync(flags, JSON.stringify({ doca_general_flags: { 'log-level': 30 }, doca_program_flags: { 'pci-addr': 'b1:00.0', text: 'from json' } }));
  const quiet = sample(t, dir, ['comch_ctrl_path_client', '-j', flags, '--timeout', '0.5']);
  await assertExit(quiet, 1);
  const err = quiet.stderr.join('');
  assert.ok(!err.includes('[INF]'), 'log level 30 from the JSON file silences INFO');
  assert.match(err, /\[ERR\].*timed out/);
  const help = sample(t, dir, ['comch_ctrl_path_server', '-h']);
  await assertExit(help, 0);
  assert.match(help.lines.join('\n'), /-p, --pci-addr VALUE +DOCA Comch device PCI address \(default: 03:00\.0\)/);
  assert.match(help.lines.join('\n'), /--sdk-log-level/);
  const version = sample(t, dir, ['comch_ctrl_path_server', '-v']);
  await assertExit(version, 0);
  assert.match(version.lines.join(''), /^softdpu \d+\.\d+\.\d+/);
  const bad = sample(t, dir, ['comch_ctrl_path_server', '--no-such-flag']);
  await assertExit(bad, 2);
  const wrongSide = sample(t, dir, ['comch_ctrl_path_server', '-p', 'b1:00.0', '-r', 'b1:00.0', '--timeout', '2']);
  await assertExit(wrongSide, 1);
  assert.match(wrongSide.stderr.join(''), /cannot host a comch server.*DOCA_ERROR_NOT_SUPPORTED/);
});

test('the high-speed data path samples pass their texts both ways through producers and consumers', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = sample(t, dir, ['comch_data_path_high_speed_server', '-p', '03:00.0', '-r', 'b1:00.0', '-t', 'bulk from the DPU']);
  const client = sample(t, dir, ['comch_data_path_high_speed_client', '-p', 'b1:00.0', '-t', 'bulk from the host']);
  await assertExit(client, 0, [server]);
  await assertExit(server, 0, [client]);
  assert.match(server.stderr.join(''), /\[COMCH_DATA_PATH_HIGH_SPEED_SERVER\] Message received: 'bulk from the host'/);
  assert.match(client.stderr.join(''), /\[COMCH_DATA_PATH_HIGH_SPEED_CLIENT\] Message received: 'bulk from the DPU'/);
  assert.match(server.stderr.join(''), /Sample finished successfully/);
});

test('a data path client with no server times out clearly', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const client = sample(t, dir, ['comch_data_path_high_speed_client', '--timeout', '1']);
  await assertExit(client, 1);
  assert.match(client.stderr.join(''), /timed out after 1 s waiting for the server comch_data_path_sample_server/);
});
