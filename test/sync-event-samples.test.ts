/** The sync event samples' protocol in all four modes, with the host or the DPU exporting. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliPath, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const DPU = ['-d', '03:00.0', '-r', 'b1:00.0'];
const HOST = ['-d', 'b1:00.0'];

for (const exporter of ['DPU', 'host']) {
  for (const flags of [[], ['--atomic'], ['--async', '--async_num_tasks', '2'], ['--async', '--atomic']]) {
    test(`sync_event_local_pci on the ${exporter} and sync_event_remote_pci on the other side ${flags.join(' ') || '(sync, set)'}`, { timeout: 30_000 }, async (t) => {
      const dir = tempFabricDir(t);
      const [local, remote] = exporter === 'DPU' ? [DPU, HOST] : [HOST, DPU];
      const run = (name: string, args: string[]) => spawnChild(t, 'sample', ['sample', name, ...args, ...flags, '--timeout', '15', '--fabric', dir], { script: cliPath });
      const exporting = run('sync_event_local_pci', local);
      const importing = run('sync_event_remote_pci', remote);
      const [e, i] = await Promise.all([exporting.exited, importing.exited]);
      const logs = `${exporting.stderr.join('')}\n${importing.stderr.join('')}`;
      assert.deepEqual([e.code, i.code], [0, 0], logs);
      assert.match(exporting.stderr.join(''), /The remote side signaled; the event value is 2/);
      assert.match(importing.stderr.join(''), /The exporter signaled 1/);
      assert.match(importing.stderr.join(''), flags.includes('--atomic') ? /Signaled the exporter \(added 1\)/ : /Signaled the exporter \(set 2\)/);
    });
  }
}

test('an importer with nobody exporting times out clearly', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const importing = spawnChild(t, 'sample', ['sample', 'sync_event_remote_pci', ...HOST, '--timeout', '1', '--fabric', dir], { script: cliPath });
  assert.equal((await importing.exited).code, 1);
  assert.match(importing.stderr.join(''), /timed out after 1 s waiting for the comch server sync_event_cc on the DPU/);
});
