/**
 * `softdpu fault list` counts every injection of the fabric's faults, also those of processes that have
 * exited (cleanly, or killed by a `crash` fault) and been swept: a thread publishes its counts as it ends
 * (and before a crash), and a sweep folds a dead thread's counts into the plan's tally before removing
 * them. Clearing a fault forgets its count, so a later fault with the same id starts at 0.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { it, type TestContext } from 'node:test';
import type { FaultListing } from '../src/fabric/faults/api.js';
import { assertExit, runCli, sample } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

async function cli(t: TestContext, args: string[]): Promise<string> {
  const { exit, stdout, stderr } = await runCli(t, args);
  assert.equal(exit.code, 0, `softdpu ${args.join(' ')}: ${stderr}`);
  return stdout;
}

async function injections(t: TestContext, dir: string): Promise<Record<string, number>> {
  const listing = JSON.parse(await cli(t, ['fault', 'list', '--json', '--fabric', dir])) as FaultListing;
  return Object.fromEntries(listing.faults.map((f) => [f.id, f.injections]));
}

/** The fast-path sample pair on `dir`, to the end; both must succeed. */
async function fastPathPair(t: TestContext, dir: string): Promise<void> {
  const server = sample(t, dir, ['comch_data_path_high_speed_server', '-p', '03:00.0', '-r', 'b1:00.0']);
  const client = sample(t, dir, ['comch_data_path_high_speed_client', '-p', 'b1:00.0']);
  await assertExit(client, 0, [server]);
  await assertExit(server, 0, [client]);
}

const countsFiles = (dir: string) => readdirSync(dir).filter((n) => /^faults\.\d+-/.test(n));

it('injections of processes that exited, and were swept, stay counted until the fault is cleared', { timeout: 120_000 }, async (t) => {
  const dir = tempFabricDir(t);
  // Three AGAINs for each process's producer: the samples retry each, as NVIDIA's do, and succeed.
  await cli(t, ['fault', 'add', '--fabric', dir, '{"kind":"again","count":3,"match":{"ctx":"doca_comch_producer","task":"send"}}']);
  await fastPathPair(t, dir);
  assert.deepEqual(await injections(t, dir), { f1: 6 }, 'both processes ended: their 3 + 3 injections are counted');
  await cli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.deepEqual(countsFiles(dir), [], 'the sweep removed the dead threads\' counts files');
  assert.deepEqual(await injections(t, dir), { f1: 6 }, 'after the sweep, the tally holds them');
  await fastPathPair(t, dir);
  await cli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.deepEqual(await injections(t, dir), { f1: 12 }, 'a second pair adds to the tally');

  await cli(t, ['fault', 'clear', '--fabric', dir]);
  await cli(t, ['fault', 'add', '--fabric', dir, '{"kind":"again","count":1,"match":{"ctx":"nothing-here"}}']);
  assert.deepEqual(await injections(t, dir), { f1: 0 }, 'the new f1 does not inherit the old one\'s count');
});

it('a process killed by a crash fault has its injection counted', { timeout: 120_000 }, async (t) => {
  const dir = tempFabricDir(t);
  await cli(t, ['fault', 'add', '--fabric', dir, '{"kind":"crash","match":{"ctx":"doca_comch_producer","task":"send","side":"host"}}']);
  const server = sample(t, dir, ['comch_data_path_high_speed_server', '-p', '03:00.0', '-r', 'b1:00.0', '--timeout', '60']);
  const client = sample(t, dir, ['comch_data_path_high_speed_client', '-p', 'b1:00.0']);
  assert.deepEqual(await client.exited, { code: null, signal: 'SIGKILL' }, `the client crashed: ${client.stderr.join('')}`);
  server.kill();
  await server.exited;
  assert.deepEqual(await injections(t, dir), { f1: 1 }, 'the crash is counted (the dead process\'s file, or the tally after a sweep)');
  await cli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.deepEqual(await injections(t, dir), { f1: 1 }, 'and stays counted after the sweep');
});
