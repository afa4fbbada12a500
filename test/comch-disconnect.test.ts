/** server_disconnect: queued behind earlier messages, AGAIN on a full queue, one event, never twice. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linesOf, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

test('disconnect: AGAIN while the queue is full, then delivered after every earlier message; exactly one event; a second call fails', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir);
  await server.waitFor(/^started/);
  const client = startClient(t, dir, { recvQueueSize: 2 });
  await client.waitFor(/^c0 state STARTING->RUNNING$/);
  const id = (await server.waitFor(/^connect (\d+)/))[1]!;
  client.send('pause');
  await client.waitFor(/^paused$/);
  server.send(`send ${id} one`);
  server.send(`send ${id} two`);
  await waitCount(server, /^sent /, 2);
  server.send(`disconnect ${id}`);
  assert.match((await server.waitFor(/^error (.*)$/))[1]!, /^DOCA_ERROR_AGAIN .*receive queue .* is full; progress and call again/);
  client.send('resume');
  await waitCount(client, /^c0 recv /, 2);
  server.send(`disconnect ${id}`);
  await server.waitFor(/^disconnect-result ok$/);
  await client.waitFor(/^c0 state STOPPING->IDLE$/);
  await server.waitFor(new RegExp(`^disconnect ${id} true$`));
  server.send(`disconnect ${id}`);
  assert.match((await waitCount(server, /^error /, 2))[1]!, /^error DOCA_ERROR_NOT_CONNECTED /);
  const order = client.lines.filter((l) => /^c0 (recv|state)/.test(l));
  assert.deepEqual(order, ['c0 state IDLE->STARTING', 'c0 state STARTING->RUNNING', 'c0 recv 3 one', 'c0 recv 3 two', 'c0 state RUNNING->STOPPING', 'c0 state STOPPING->IDLE']);
  assert.equal(linesOf(server, /^disconnect \d/).length, 1);
});

test('a client stop disconnects it: the server gets one disconnect event and keeps running', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir);
  await server.waitFor(/^started/);
  const client = startClient(t, dir, { sendOnRunning: 'bye soon' });
  await server.waitFor(/^recv \d+ 8 bye soon$/);
  const id = (await server.waitFor(/^connect (\d+)/))[1]!;
  client.send('stop 0');
  assert.equal((await client.waitFor(/^c0 stop-result (.*)$/))[1], 'DOCA_ERROR_IN_PROGRESS');
  await client.waitFor(/^c0 state STOPPING->IDLE$/);
  await server.waitFor(new RegExp(`^disconnect ${id} true$`));
  assert.ok(!server.lines.some((l) => l.includes('->')  && !l.includes('IDLE->RUNNING')), 'the server stays RUNNING');
  server.send(`counters ${id}`);
  assert.match((await server.waitFor(/^error (.*)$/))[1]!, /^DOCA_ERROR_CONNECTION_ABORTED/);
});

test('stopping the server disconnects every client; each sees its connection end', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir);
  await server.waitFor(/^started/);
  const client = startClient(t, dir, { clients: 3 });
  await waitCount(client, /^c\d state STARTING->RUNNING$/, 3);
  await waitCount(server, /^connect /, 3);
  server.send('stop');
  assert.equal((await server.waitFor(/^stop-result (.*)$/))[1], 'DOCA_ERROR_IN_PROGRESS');
  await server.waitFor(/^state STOPPING->IDLE$/);
  assert.equal(linesOf(server, /^disconnect \d+ true$/).length, 3, server.lines.join('\n'));
  await waitCount(client, /^c\d state STOPPING->IDLE$/, 3);
});
