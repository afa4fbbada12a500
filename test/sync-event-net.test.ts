/** Remote-net handles from a third process over TCP, admitted only with the blob's secret; sleeping waiters burn no CPU. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { hex } from './fixtures/se-lib.js';
import { spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

function netEvent(t: TestContext): { event: SyncEvent; host: ReturnType<typeof openDeviceByPci> } {
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const event = SyncEvent.create();
  event.addPublisherLocationRemoteNet();
  event.addSubscriberLocationCpu(host);
  return { event, host };
}

test('a third process that knows nothing of the fabric sets, adds and gets over TCP; the exporter wakes from its sleep', { timeout: 60_000 }, async (t) => {
  const { event } = netEvent(t);
  const ctx = event.asCtx();
  const pe = ProgressEngine.create();
  pe.connectCtx(ctx);
  ctx.taskWaitEqSetConf((task) => task.free(), (task) => task.free(), 1);
  ctx.start();
  await assert.rejects(event.exportToRemoteNet({ host: 'localhost' }), (err: unknown) => DocaError.is(err, 'INVALID_VALUE') && /not an IP address/.test((err as Error).message));
  const blob = await event.exportToRemoteNet({ host: '127.0.0.1' });
  ctx.taskWaitEqAllocInit(15n, -1n).submit();
  const running = pe.run({ until: () => ctx.getNumInflightTasks() === 0 });
  const remote = spawnChild(t, 'se-remote-net', [hex(blob), 'set:10', 'add:5', 'get'], { env: { SOFTDPU_FABRIC: '/nonexistent-fabric' } });
  await running; // the exporter woke up once the remote add made it 15
  assert.throws(() => event.get(), (err: unknown) => DocaError.is(err, 'BAD_STATE') && /runs as a context/.test((err as Error).message), 'DOCA keeps the modes apart');
  await remote.exited;
  assert.deepEqual(remote.lines, ['set done', 'add 10', 'get 15']);
  await ctx.stopAndWait();
  event.destroy();
  const late = spawnChild(t, 'se-remote-net', [hex(blob), 'get']);
  await late.exited;
  assert.match(late.lines[0]!, /^get error DOCA_ERROR_NOT_CONNECTED$/, 'a destroyed event closes its listener');
});

test('a blob with another secret is refused with AUTHENTICATION; a corrupted one never connects', { timeout: 60_000 }, async (t) => {
  const { event } = netEvent(t);
  event.start();
  const blob = await event.exportToRemoteNet();
  const forged = new Uint8Array(blob);
  forged[24 + 66]! ^= 0xff; // first byte of the secret
  new DataView(forged.buffer).setUint32(12, crc32(forged.subarray(16)), true);
  const intruder = spawnChild(t, 'se-remote-net', [hex(forged), 'set:99', 'get']);
  await intruder.exited;
  assert.deepEqual(intruder.lines, ['set error DOCA_ERROR_AUTHENTICATION', 'get error DOCA_ERROR_AUTHENTICATION']);
  assert.equal(event.get(), 0n, 'nothing reached the counter');
  const bent = new Uint8Array(blob);
  bent[30]! ^= 1;
  const broken = spawnChild(t, 'se-remote-net', [hex(bent), 'get']);
  await broken.exited;
  assert.match(broken.stderr.join(''), /corrupted \(checksum mismatch\)/);
  event.stop();
  event.destroy();
});

/** CPU time (user + system) of a process, in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

test('an async waiter asleep in notification mode uses almost no CPU for a second, then wakes on an update', { timeout: 60_000 }, async (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const arm = openDeviceByPci('03:00.0');
  const event = SyncEvent.create();
  event.addPublisherLocationRemotePci();
  event.addSubscriberLocationCpu(arm);
  event.start();
  const blob = hex(event.exportToRemotePci(arm));
  const dir = (await import('../src/fabric/fabric.js')).currentFabric().dir;
  const waiter = spawnChild(t, 'se-waiter', [blob, 'b1:00.0', 'async', 'eq', '1', '-1', '0'], { env: { SOFTDPU_FABRIC: dir } });
  await waiter.waitFor(/^armed$/);
  // What a fresh process still does once its engine slept (compiling, collecting) is over when it used
  // no CPU for 200 ms: a waiter that spins never gets there, however long it is given.
  let last = cpuTicks(waiter.pid);
  await until(async () => {
    await sleep(200);
    const now = cpuTicks(waiter.pid);
    const quiet = now === last;
    last = now;
    return quiet;
  }, 'the waiter to use no CPU for 200 ms');
  const before = cpuTicks(waiter.pid);
  // Stays: what is measured is the CPU of this second, whatever the load.
  await sleep(1000);
  const used = cpuTicks(waiter.pid) - before;
  assert.ok(used <= 3, `the sleeping waiter used ${used} clock ticks (1/100 s each) in a second`);
  event.updateSet(1n);
  assert.equal((await waiter.waitFor(/^result (.*)$/))[1], 'ok');
  event.stop();
  event.destroy();
});
