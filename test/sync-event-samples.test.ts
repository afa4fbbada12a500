/** The sync event samples' protocol in all four modes, with the host or the DPU exporting. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertExit, sample } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const DPU = ['-d', '03:00.0', '-r', 'b1:00.0'];
const HOST = ['-d', 'b1:00.0'];

for (const exporter of ['DPU', 'host']) {
  for (const flags of [[], ['--atomic'], ['--async', '--async-num-tasks', '2'], ['--async', '--async_num_tasks=2'], ['--async', '--atomic']]) {
    test(`sync_event_local_pci on the ${exporter} and sync_event_remote_pci on the other side ${flags.join(' ') || '(sync, set)'}`, { timeout: 60_000 }, async (t) => {
      const dir = tempFabricDir(t);
      const [local, remote] = exporter === 'DPU' ? [DPU, HOST] : [HOST, DPU];
      const run = (name: string, args: string[]) => sample(t, dir, [name, ...args, ...flags, '--timeout', '15']);
      const exporting = run('sync_event_local_pci', local);
      const importing = run('sync_event_remote_pci', remote);
      await Promise.all([exporting.exited, importing.exited]);
      await assertExit(exporting, 0, [importing]);
      await assertExit(importing, 0, [exporting]);
      assert.match(exporting.stderr.join(''), /The remote side signaled; the event value is 2/);
      assert.match(importing.stderr.join(''), /The exporter signaled 1/);
      assert.match(importing.stderr.join(''), flags.includes('--atomic') ? /Signaled the exporter \(added 1\)/ : /Signaled the exporter \(set 2\)/);
    });
  }
}

test('an importer with nobody exporting times out clearly', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const importing = sample(t, dir, ['sync_event_remote_pci', ...HOST, '--timeout', '1']);
  await assertExit(importing, 1);
  assert.match(importing.stderr.join(''), /timed out after 1 s waiting for the comch server sync_event_cc on the DPU/);
});
