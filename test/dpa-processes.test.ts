/**
 * The DPA across processes: a kernel gated on a sync event another process sets, whose instances and
 * completion update events a CPU waiter in that process sleeps on; and the per-DPU DPA limit counted
 * over every process of the fabric.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDeviceByPci } from '../src/core/dev.js';
import { DpaApp } from '../src/dpa/app.js';
import { Dpa } from '../src/dpa/dpa.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { hex } from './fixtures/se-lib.js';
import { spawnChild } from './helpers/child.js';
import { appPath, dpaFabric, onCleanup, startDpa } from './helpers/dpa.js';
import { code } from './helpers/errors.js';

test('a kernel waits for an event set by another process, and that process\'s sleeping waiter sees what the DPA updates', { timeout: 60_000 }, async (t) => {
  const { dir, topology } = dpaFabric(t, { numEus: 2 });
  const dev = openDeviceByPci('03:00.0');
  const dpa = startDpa(t, dev);
  const make = (publisher: 'dpa' | 'remote_pci') => {
    const e = SyncEvent.create();
    if (publisher === 'dpa') {
      e.addPublisherLocationDpa(dpa);
      e.addSubscriberLocationRemotePci();
    } else {
      e.addPublisherLocationRemotePci();
      e.addSubscriberLocationDpa(dpa);
    }
    e.start();
    onCleanup(t, () => (e.stop(), e.destroy()));
    return e;
  };
  const wait = make('remote_pci');
  const comp = make('dpa');
  const sum = make('dpa');
  const peer = spawnChild(t, 'dpa-event-peer', [hex(wait.exportToRemotePci(dev)), hex(comp.exportToRemotePci(dev)), hex(sum.exportToRemotePci(dev)), 'b1:00.0'], {
    env: { SOFTDPU_FABRIC: dir, SOFTDPU_TOPOLOGY: topology },
  });
  await peer.waitFor(/^ready$/);
  dpa.kernelLaunchUpdateSet(wait, 3, comp, 7n, 4, 'rank_sum', sum.getDpaHandle(dpa));
  // Stays: a kernel that ran too early would have added within this; a slow machine can only hide
  // that, never make the checks fail wrongly.
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(sum.get(), 0n, 'the kernel waits');
  assert.ok(!peer.lines.some((l) => l.startsWith('done')), 'and so does the peer');
  peer.send('go');
  assert.equal((await peer.waitFor(/^(done|failed) (.*)$/))[0], 'done 10', 'the peer woke for 7 and read 1 + 2 + 3 + 4');
  assert.equal(comp.get(), 7n);
});

test('the DPA limit of a DPU counts the DPAs of every process', { timeout: 60_000 }, async (t) => {
  const { dir, topology } = dpaFabric(t, { numEus: 1, maxDpas: 3 });
  const holder = spawnChild(t, 'dpa-holder', ['b1:00.0', '2', appPath('basic')], { env: { SOFTDPU_FABRIC: dir, SOFTDPU_TOPOLOGY: topology } });
  await holder.waitFor(/^started 2$/);
  const dev = openDeviceByPci('03:00.0');
  startDpa(t, dev);
  const fourth = Dpa.create(dev);
  fourth.setApp(DpaApp.create(appPath('basic')));
  assert.throws(() => fourth.start(), code('DRIVER', /already runs 3 DPAs/));
  holder.kill();
  await holder.exited;
  fourth.start(); // the dead process's places are free again
  onCleanup(t, async () => (fourth.destroy(), await fourth.exited()));
  assert.equal(fourth.rpc('add', 3n, 4n), 7n);
});
