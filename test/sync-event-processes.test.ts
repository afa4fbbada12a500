/** Sync events across processes: exact atomic adds, host<->DPU import, waits woken by another process, owner death. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { hex } from './fixtures/se-lib.js';
import { type Child, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

function exporter(t: TestContext, dev: string) {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const d = openDeviceByPci(dev);
  const event = SyncEvent.create();
  event.addPublisherLocationRemotePci();
  event.addSubscriberLocationCpu(d);
  event.start();
  t.after(() => {
    try {
      event.stop();
      event.destroy();
    } catch {
      // already torn down by the test
    }
  });
  return { dir, event, blob: hex(event.exportToRemotePci(d)) };
}

const child = (t: TestContext, dir: string, name: string, args: string[]): Child => spawnChild(t, name, args, { env: { SOFTDPU_FABRIC: dir } });

test('4 processes doing 10,000 update_add(1) each end at exactly 40,000; the fetched values are 0..39,999', { timeout: 60_000 }, async (t) => {
  const { dir, event, blob } = exporter(t, '03:00.0');
  const adders = [0, 1, 2, 3].map((i) => child(t, dir, 'se-adder', [blob, i % 2 ? 'b1:00.0' : '03:00.0', '10000']));
  await Promise.all(adders.map((a) => a.waitFor(/^ready$/)));
  adders.forEach((a) => a.send('go'));
  const fetched = (await Promise.all(adders.map((a) => a.waitFor(/^fetched (.*)$/, 30_000)))).flatMap((m) => m[1]!.split(',').map((x) => parseInt(x, 36)));
  assert.equal(event.get(), 40_000n);
  assert.equal(fetched.length, 40_000);
  assert.deepEqual([...fetched].sort((a, b) => a - b), Array.from({ length: 40_000 }, (_, i) => i), 'every value before an add was seen exactly once');
});

for (const [exportOn, importOn] of [['03:00.0', 'b1:00.0'], ['b1:00.2', '03:00.0']]) {
  for (const mode of ['busy', 'yield', 'async']) {
    test(`a ${mode} wait in a process on ${importOn} is satisfied by an update on ${exportOn}`, { timeout: 60_000 }, async (t) => {
      const { dir, event, blob } = exporter(t, exportOn);
      event.updateSet(0x1234_0000_0000_0007n);
      const waiter = child(t, dir, 'se-waiter', [blob, importOn, mode, 'eq', String(0x0009n), '0xffff', '10000']);
      await waiter.waitFor(/^armed$/);
      // Stays for the busy and yield waits, which block their thread (async: a wait that held at once
      // has its result before `armed`): a wrong match would answer within this, and a slow machine can
      // only hide it, never fail the check wrongly.
      await new Promise((r) => setTimeout(r, 50));
      assert.ok(!waiter.lines.some((l) => l.startsWith('result')), 'still waiting: the masked value is 7, not 9');
      event.updateAdd(2n);
      assert.equal((await waiter.waitFor(/^result (.*)$/))[1], 'ok');
    });
  }
}

test('a waiter whose publisher never signals gets its timeout (sync) or an error when its context stops (async)', { timeout: 60_000 }, async (t) => {
  const { dir, blob } = exporter(t, '03:00.0');
  for (const mode of ['busy', 'yield']) {
    const waiter = child(t, dir, 'se-waiter', [blob, 'b1:00.0', mode, 'gt', '5', '-1', '200']);
    assert.equal((await waiter.waitFor(/^result (.*)$/))[1], 'DOCA_ERROR_TIME_OUT');
  }
  const asyncWaiter = child(t, dir, 'se-waiter', [blob, 'b1:00.0', 'async', 'eq', '5', '-1', '0']);
  await asyncWaiter.waitFor(/^armed$/);
  asyncWaiter.send('stop');
  assert.equal((await asyncWaiter.waitFor(/^result (.*)$/))[1], 'DOCA_ERROR_SHUTDOWN');
  assert.equal((await asyncWaiter.waitFor(/^ctx (.*)$/))[1], 'IDLE');
});

test('a handle whose owner died gives NOT_CONNECTED on use, and a destroyed event stale blobs NOT_FOUND', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const owner = child(t, dir, 'se-exporter', ['03:00.0']);
  const blob = new Uint8Array(Buffer.from((await owner.waitFor(/^blob (.*)$/))[1]!, 'hex'));
  const host = openDeviceByPci('b1:00.0');
  const handle = SyncEvent.createFromExport(host, blob);
  handle.start();
  owner.send('set 41');
  await owner.waitFor(/^ok set$/);
  assert.equal(handle.updateAdd(1n), 41n);
  owner.send('get');
  assert.equal((await owner.waitFor(/^value (.*)$/))[1], '42');
  owner.kill('SIGKILL');
  await owner.exited;
  // Stays: a liveness answer is trusted for 20 ms (fabric/liveness.ts ANSWER_TTL_MS) and is asked again
  // on use after that; this only lets it age, so a slower machine makes it older, never younger.
  await new Promise((r) => setTimeout(r, 100));
  for (const use of [() => handle.get(), () => handle.updateSet(1n), () => handle.waitEq(1n, -1n, { timeoutMs: 10 })]) {
    assert.throws(use, (err: unknown) => DocaError.is(err, 'NOT_CONNECTED') && /destroyed the event or exited/.test((err as Error).message));
  }
  assert.throws(() => SyncEvent.createFromExport(host, blob), (err: unknown) => DocaError.is(err, 'NOT_FOUND'));
  handle.destroy();
});

test('a wait pending when the exporter set its last value and left completes with that value, not NOT_CONNECTED', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const host = openDeviceByPci('b1:00.0');
  for (const leave of ['destroy', 'kill']) {
    const owner = child(t, dir, 'se-exporter', ['03:00.0']);
    const blob = new Uint8Array(Buffer.from((await owner.waitFor(/^blob (.*)$/))[1]!, 'hex'));
    const handle = SyncEvent.createFromExport(host, blob);
    const pe = ProgressEngine.create();
    const ctx = handle.asCtx();
    pe.connectCtx(ctx);
    const results: string[] = [];
    const report = (task: { getStatus(): string; free(): void }) => (results.push(task.getStatus()), task.free());
    ctx.taskWaitEqSetConf(report, report, 2);
    ctx.start();
    ctx.taskWaitEqAllocInit(5n, -1n).submit(); // holds once the owner sets 5
    ctx.taskWaitEqAllocInit(6n, -1n).submit(); // never holds
    owner.send('set 5');
    await owner.waitFor(/^ok set$/);
    if (leave === 'destroy') {
      owner.send('destroy');
      await owner.waitFor(/^ok destroy$/);
    } else {
      owner.kill('SIGKILL');
      await owner.exited;
    }
    // Only now does this side look: the update came before the exporter left.
    await pe.run({ until: () => results.length === 2, signal: AbortSignal.timeout(5000) });
    assert.deepEqual(results, ['DOCA_SUCCESS', 'DOCA_ERROR_NOT_CONNECTED'], `exporter ${leave}: the satisfied wait succeeds, the other fails`);
    await ctx.waitForState('IDLE', { timeoutMs: 5000 });
    handle.destroy(); // its context with it, then the engine
    pe.destroy();
    if (leave === 'destroy') owner.kill('SIGKILL');
  }
});
