/** The DPA samples as a user runs them: `softdpu sample dpa_wait_kernel_launch` and `comch_msgq_dpa_pingpong`. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertExit, runCli, sample } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

test('dpa_wait_kernel_launch: the kernel runs once the other thread sets the wait event, then completes the other', { timeout: 60_000 }, async (t) => {
  const run = sample(t, tempFabricDir(t), ['dpa_wait_kernel_launch', '--timeout', '15']);
  await assertExit(run, 0);
  const log = run.stderr.join('');
  assert.match(log, /Kernel hello_world launched: it waits for the wait event to reach 4[\s\S]*Hello from kernel[\s\S]*The completion event reached 10/);
});

test('comch_msgq_dpa_pingpong on a host PF, asleep and polling; -pf_dev takes an IB device name or a PCI address', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  for (const args of [['-pf_dev', 'b1:00.0', '-n', '200'], ['-pf_dev', 'mlx5_0', '-n', '200', '--poll']]) {
    const run = sample(t, dir, ['comch_msgq_dpa_pingpong', ...args, '--timeout', '15']);
    await assertExit(run, 0);
    assert.match(run.stderr.join(''), /All 200 answers came back in order with every byte; the DPA counted 200/);
  }
  const vf = sample(t, dir, ['comch_msgq_dpa_pingpong', '-pf_dev', 'b1:00.2', '--timeout', '5']);
  await assertExit(vf, 1);
  assert.match(vf.stderr.join(''), /b1:00\.2 has no DPA/);
});

test('the DPA samples are listed with their flags; devices shows each DPA', { timeout: 60_000 }, async (t) => {
  const list = await runCli(t, ['sample', '--list']);
  assert.match(list.stdout, /dpa_wait_kernel_launch/);
  assert.match(list.stdout, /comch_msgq_dpa_pingpong/);
  const help = await runCli(t, ['sample', 'comch_msgq_dpa_pingpong', '-h']);
  assert.match(help.stdout, /-pf_dev, --pf-device VALUE/);
  assert.match(help.stdout, /-n, --count VALUE/);
  const devices = await runCli(t, ['devices', '--fabric', tempFabricDir(t)]);
  assert.match(devices.stdout, /dpa: yes, 4 execution units, max_threads_per_kernel 256/);
  assert.match(devices.stdout, /0000:b1:00\.2[\s\S]*?dpa: no/);
});
