/** Lost and delayed events through the public API: a new-consumer event that never comes, a late connection event. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ComchConsumer } from '../src/comch/consumer.js';
import { ProgressEngine } from '../src/core/pe.js';
import { Faults } from '../src/fabric/faults/api.js';
import { comchPair, sharedMap, until } from './helpers/comch-pair.js';

function cleanPlan(t: TestContext): void {
  Faults.clear();
  t.after(() => Faults.clear());
}

test('a lost new-consumer event never reaches the peer; the consumer runs and its expiry is still told', { timeout: 60_000 }, async (t) => {
  cleanPlan(t);
  const p = await comchPair(t, 'lost-event');
  Faults.add({ kind: 'lose-event', match: { ctx: 'doca_comch_client', event: 'consumer_new' } });
  const { map } = sharedMap(p.arm, 4096);
  const consumer = ComchConsumer.create(p.serverConn, map);
  consumer.taskPostRecvSetConf(() => {}, () => {}, 4);
  const cpe = ProgressEngine.create();
  cpe.connectCtx(consumer);
  p.drive(cpe);
  consumer.start();
  await consumer.waitForState('RUNNING', { timeoutMs: 10_000 });
  // The client registered the consumer (so it runs) and the plan lost the event it queued for it.
  assert.equal(Faults.list().faults[0]!.injections, 1);
  await consumer.stopAndWait();
  const id = consumer.getId();
  consumer.destroy();
  await until(() => p.events.includes(`client expired ${id}`), 'the expired-consumer event, which the plan leaves alone');
  // The client's events come in order: a new-consumer event that was not lost would be before this one.
  assert.deepEqual(p.events, [`client expired ${id}`], 'no new-consumer event on the client');
  map.destroy();
});

test('a delayed connection event arrives that much later, and only then', { timeout: 60_000 }, async (t) => {
  cleanPlan(t);
  Faults.add({ kind: 'delay-event', match: { ctx: 'doca_comch_server', event: 'connection_status' }, delayMs: 400 });
  let connectedAt = 0;
  let disconnectedAt = 0;
  // The delay runs from when the server handles the client's READY: after this, whatever the load.
  let startedAt = 0;
  const { server, client } = await comchPair(t, 'late', {
    sendTasks: 4,
    beforeStart: (server) => {
      server.eventConnectionStatusChangedRegister(
        () => (connectedAt = performance.now()),
        () => (disconnectedAt = performance.now()),
      );
      startedAt = performance.now();
    },
  });
  await until(() => connectedAt > 0, 'the delayed connect event');
  // Lower bounds only (a slow machine makes them longer, never shorter); a timer may fire a ms early.
  assert.ok(connectedAt - startedAt >= 390, `the connect event came ${(connectedAt - startedAt).toFixed(0)} ms after the start (delay 400 ms)`);
  // The delay runs from when the server sees the client leave, which is after the stop began.
  const stoppingAt = performance.now();
  await client.stopAndWait();
  await until(() => disconnectedAt > 0, 'the delayed disconnect event');
  assert.ok(disconnectedAt - stoppingAt >= 390, `the disconnect event came ${(disconnectedAt - stoppingAt).toFixed(0)} ms after the stop began (delay 400 ms)`);
  assert.equal(Faults.list().faults[0]!.injections, 2);
  await server.stopAndWait();
  server.destroy();
  client.destroy();
});
