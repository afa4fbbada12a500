/** The fast path across processes: 4 producers and 4 consumers on both sides, in worker threads. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { EndpointReport } from './fixtures/fastpath-worker.js';
import { type Child, spawnChild } from './helpers/child.js';
import { linesOf, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

function side(t: TestContext, dir: string, options: Record<string, unknown>): Child {
  return spawnChild(t, 'fastpath-node', [JSON.stringify(options)], { env: { SOFTDPU_FABRIC: dir } });
}

const reports = (child: Child) => linesOf(child, /^report /).map((l) => JSON.parse(l.slice(7)) as EndpointReport);

for (const [workers, mode] of [[true, 'busy'], [false, 'notify']] as const) {
  test(`2 producers and 2 consumers on each side (${workers ? 'worker threads, busy' : 'main thread, notify'}): every byte, every order`, { timeout: 90_000 }, async (t) => {
    const dir = tempFabricDir(t);
    const common = { name: 'fp', consumers: 2, producers: 2, peerConsumers: 2, peerProducers: 2, messages: 300, size: 1000, postBufs: 8, mode, workers };
    const server = side(t, dir, { ...common, side: 'server' });
    const client = side(t, dir, { ...common, side: 'client' });
    await Promise.all([server.waitFor(/^done$/, 60_000), client.waitFor(/^done$/, 60_000)]);
    for (const [label, child, peer] of [['server', server, client], ['client', client, server]] as const) {
      const rs = reports(child);
      const peerProducers = reports(peer).filter((r) => r.role === 'producer').map((r) => r.id);
      assert.equal(rs.length, 4, `${label} reports`);
      for (const r of rs.filter((x) => x.role === 'consumer')) {
        assert.equal(r.count, 600, `${label} consumer ${r.id} received everything`);
        assert.ok(r.ordered, `${label} consumer ${r.id}: each producer's messages in order`);
        assert.ok(r.bytesOk, `${label} consumer ${r.id}: every byte, length, immediate data and producer id`);
        assert.deepEqual(Object.keys(r.from).map(Number).sort(), [...peerProducers].sort());
        assert.ok(Object.values(r.from).every((n) => n === 300));
        assert.equal(r.state, 'IDLE');
      }
      for (const r of rs.filter((x) => x.role === 'producer')) assert.equal(r.count, 600);
    }
    const ids = [...reports(server), ...reports(client)].map((r) => `${r.role}:${r.id}`);
    assert.equal(new Set(ids).size, 8, 'ids are unique per connection');
    // The server's consumers expire when its side is done; the news reaches the client asynchronously.
    await waitCount(client, /^peer-consumer-expired \d+$/, 2);
    assert.equal(linesOf(client, /^peer-consumer-expired /).length, 2, 'the expiry of both server consumers reached the client, once each');
    client.send('exit');
    assert.equal((await client.waitFor(/^stopped (.*)$/))[1], 'IDLE');
    server.send('exit');
    assert.equal((await server.waitFor(/^stopped (.*)$/))[1], 'IDLE');
  });
}

test('consumers announced on one side reach the other while it sleeps in notify mode', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = side(t, dir, { side: 'server', name: 'fp2', consumers: 0, producers: 0, peerConsumers: 2, peerProducers: 0, messages: 0, size: 64, postBufs: 2, mode: 'notify', workers: true });
  const client = side(t, dir, { side: 'client', name: 'fp2', consumers: 2, producers: 0, peerConsumers: 0, peerProducers: 0, messages: 0, size: 64, postBufs: 2, mode: 'notify', workers: true });
  await waitCount(server, /^peer-consumer \d+$/, 2);
  await Promise.all([server.waitFor(/^done$/), client.waitFor(/^done$/)]);
  await waitCount(server, /^peer-consumer-expired \d+$/, 2);
});

test('when the peer is killed, producers and consumers reach IDLE and posted buffers fail through the error callback', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = spawnChild(t, 'comch-server', [JSON.stringify({ name: 'doomed' })], { env: { SOFTDPU_FABRIC: dir } });
  await server.waitFor(/^started/);
  const client = spawnChild(t, 'fastpath-hold', ['doomed'], { env: { SOFTDPU_FABRIC: dir } });
  await client.waitFor(/^ready consumer \d+$/);
  server.kill('SIGKILL');
  await client.waitFor(/^consumer state STOPPING->IDLE$/);
  await client.waitFor(/^producer state STOPPING->IDLE$/);
  assert.deepEqual(linesOf(client, /^post-error /), Array(4).fill('post-error DOCA_ERROR_CONNECTION_RESET'));
  const states = linesOf(client, /^(consumer|producer) state /);
  assert.deepEqual(states.slice(0, 3), ['consumer state IDLE->STARTING', 'producer state IDLE->RUNNING', 'consumer state STARTING->RUNNING']);
  // Each then fails on its own engine (in either order): RUNNING -> STOPPING -> IDLE.
  for (const who of ['consumer', 'producer']) {
    assert.deepEqual(states.slice(3).filter((l) => l.startsWith(who)), [`${who} state RUNNING->STOPPING`, `${who} state STOPPING->IDLE`]);
  }
  assert.equal(states.length, 7);
  client.send('send 1');
  assert.match((await client.waitFor(/^send-(refused|submitted).*$/))[0], /^send-refused DOCA_ERROR_BAD_STATE$/, 'the producer is IDLE now');
});
