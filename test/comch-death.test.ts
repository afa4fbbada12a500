/** Peer death (kill -9): the other side sees it, fails what was in flight, keeps serving, and recovers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linesOf, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

test('after kill -9 of a client, the server reports the disconnect, fails its sends, serves the rest', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { echo: true, numTasks: 64 });
  await server.waitFor(/^started/);
  const doomed = startClient(t, dir, { recvQueueSize: 4 });
  await doomed.waitFor(/^c0 state STARTING->RUNNING$/);
  const doomedId = (await server.waitFor(/^connect (\d+)/))[1]!;
  const survivor = startClient(t, dir, { sendOnRunning: 'before' });
  await survivor.waitFor(/^c0 recv \d+ echo:before$/);
  doomed.send('pause');
  await doomed.waitFor(/^paused$/);
  server.send(`burst ${doomedId} 10 m`);
  await waitCount(server, /^sent m\d+$/, 4); // the doomed client's queue holds 4; 6 sends are held back
  doomed.kill('SIGKILL');
  // Bounded (not timed: the machine is shared): the server notices by the socket or its liveness cadence.
  await server.waitFor(new RegExp(`^disconnect ${doomedId} true$`));
  const failed = await waitCount(server, /^send-error DOCA_ERROR_CONNECTION_RESET m\d+$/, 6);
  assert.deepEqual(failed.map((l) => l.split(' ')[2]), ['m4', 'm5', 'm6', 'm7', 'm8', 'm9']);
  assert.deepEqual(linesOf(server, /^sent m/), ['sent m0', 'sent m1', 'sent m2', 'sent m3']);
  assert.equal(linesOf(server, new RegExp(`^disconnect ${doomedId}`)).length, 1, 'exactly one disconnect event');
  survivor.send('send 0 after');
  await survivor.waitFor(/^c0 recv \d+ echo:after$/);
});

test('after kill -9 of the server, clients go STOPPING then IDLE, fail their held sends, and a restarted server takes a new client', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { name: 'phoenix', recvQueueSize: 4 });
  await server.waitFor(/^started/);
  const client = startClient(t, dir, { name: 'phoenix', clients: 2 });
  await waitCount(client, /^c\d state STARTING->RUNNING$/, 2);
  server.send('pause');
  await server.waitFor(/^paused$/);
  client.send('burst * 10 x');
  await waitCount(client, /^c\d sent x\d+$/, 8);
  server.kill('SIGKILL');
  for (const c of ['c0', 'c1']) {
    await client.waitFor(new RegExp(`^${c} state STOPPING->IDLE$`));
    const failed = await waitCount(client, new RegExp(`^${c} send-error DOCA_ERROR_CONNECTION_RESET x\\d+$`), 6);
    assert.deepEqual(failed.map((l) => l.split(' ')[3]), ['x4', 'x5', 'x6', 'x7', 'x8', 'x9']);
    const states = linesOf(client, new RegExp(`^${c} state `)).map((l) => l.split(' ')[2]);
    assert.deepEqual(states, ['IDLE->STARTING', 'STARTING->RUNNING', 'RUNNING->STOPPING', 'STOPPING->IDLE']);
  }
  const reborn = startServer(t, dir, { name: 'phoenix', echo: true });
  assert.equal((await reborn.waitFor(/^started (.*)$/))[1], 'DOCA_SUCCESS', 'a dead server does not block its name');
  const next = startClient(t, dir, { name: 'phoenix', sendOnRunning: 'again' });
  await next.waitFor(/^c0 recv \d+ echo:again$/);
});

test('a live server with the same name makes a second one fail to start', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const first = startServer(t, dir, { name: 'solo' });
  await first.waitFor(/^started DOCA_SUCCESS$/);
  const second = startServer(t, dir, { name: 'solo' });
  assert.match((await second.waitFor(/^start-error (.*)$/))[1]!, /^DOCA_ERROR_ALREADY_EXIST .*"solo" already runs/);
  const otherRep = startServer(t, dir, { name: 'solo', rep: 'b1:00.3' });
  await otherRep.waitFor(/^started DOCA_SUCCESS$/);
});
