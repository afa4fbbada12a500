/** Sync event lifecycle edges: configuration ends at the first start; a sleeping importer learns its exporter is gone; blocking waits and remote net. */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { type TestContext, test } from 'node:test';
import { openDeviceByPci } from '../src/core/dev.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { useFabric } from '../src/fabric/fabric.js';
import { netBlob } from '../src/sync-event/remote-net-server.js';
import { SyncEventRemoteNet } from '../src/sync-event/remote-net.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { spawnChild } from './helpers/child.js';
import { code } from './helpers/errors.js';
import { tempFabricDir } from './helpers/fabric.js';


function cpuEvent(t: TestContext, publisher: 'cpu' | 'remote_net' = 'cpu'): SyncEvent {
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const event = SyncEvent.create();
  if (publisher === 'cpu') event.addPublisherLocationCpu(host);
  else event.addPublisherLocationRemoteNet();
  event.addSubscriberLocationCpu(host);
  return event;
}

test('configuration ends at the first start: after a stop it is refused, so exporter and importers share one counter', (t) => {
  const event = cpuEvent(t);
  event.start();
  event.stop();
  assert.throws(() => event.setAddr(allocSharedMemory(8)), code('BAD_STATE', /was started before; configure it before start/));
  event.start();
  event.updateSet(5n);
  assert.equal(event.get(), 5n);
  event.stop();
  event.destroy();
});

for (const how of ['destroys the event', 'is killed'] as const) {
  test(`an async importer asleep on a wait fails with NOT_CONNECTED when its exporter ${how}`, { timeout: 60_000 }, async (t) => {
    const dir = tempFabricDir(t);
    const env = { SOFTDPU_FABRIC: dir };
    const owner = spawnChild(t, 'se-exporter', ['03:00.0'], { env });
    const blob = (await owner.waitFor(/^blob (.*)$/))[1]!;
    const waiter = spawnChild(t, 'se-waiter', [blob, 'b1:00.0', 'async', 'eq', '5', '-1', '0'], { env });
    await waiter.waitFor(/^armed$/);
    if (how === 'is killed') owner.kill('SIGKILL');
    else owner.send('destroy');
    assert.equal((await waiter.waitFor(/^result (.*)$/))[1], 'DOCA_ERROR_NOT_CONNECTED');
    assert.equal((await waiter.waitFor(/^ctx (.*)$/))[1], 'IDLE');
  });
}

test('a blocking wait on an event exported to remote net is refused: its updates need this thread', { timeout: 60_000 }, async (t) => {
  const event = cpuEvent(t, 'remote_net');
  event.start();
  await event.exportToRemoteNet();
  assert.throws(() => event.waitEq(1n, -1n, { timeoutMs: 10 }), code('NOT_SUPPORTED', /blocking wait/));
  event.stop();
  event.destroy();
});

test('a remote-net operation against an exporter that never answers the handshake times out and lets go', { timeout: 60_000 }, async () => {
  // A listener that accepts and says nothing: what an exporter held in a blocking wait looks like.
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen({ host: '127.0.0.1', port: 0 }, resolve));
  try {
    const blob = netBlob('127.0.0.1', (silent.address() as { port: number }).port, new Uint8Array(32));
    const remote = SyncEventRemoteNet.createFromExport(blob, undefined, { timeoutMs: 300 });
    await assert.rejects(remote.get(), code('TIME_OUT', /did not admit us|no answer/));
    remote.destroy();
  } finally {
    silent.close();
  }
});
