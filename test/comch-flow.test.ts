/** Flow control, message size and queue depth across processes, and FIFO order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Child } from './helpers/child.js';
import { linesOf, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

/**
 * Asks `fixture` for its tasks in flight until it reports `count`: proof that every send was submitted
 * and that that many are held back (rather than a fixed sleep that hopes they had time to complete).
 */
async function held(fixture: Child, prefix: string, count: number): Promise<void> {
  let asked = 0;
  let last: string | undefined;
  await until(async () => {
    fixture.send(prefix ? `inflight ${prefix.trim().slice(1)}` : 'inflight');
    last = (await waitCount(fixture, new RegExp(`^${prefix}inflight \\d+$`), ++asked))[asked - 1];
    return last === `${prefix}inflight ${count}`;
  }, () => `${prefix}inflight to reach ${count} (it says ${last})`);
}

test('a full peer queue holds sends back in order: nothing is dropped or reordered', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { recvQueueSize: 4, paused: true });
  await server.waitFor(/^started/);
  server.send('resume');
  const client = startClient(t, dir, { numTasks: 32 });
  await client.waitFor(/^c0 state STARTING->RUNNING$/);
  await server.waitFor(/^connect/);
  server.send('pause');
  await server.waitFor(/^paused$/);
  client.send('burst 0 20 f');
  await waitCount(client, /^c0 sent /, 4);
  await held(client, 'c0 ', 16); // every send was submitted; the 16 beyond the peer's queue are held back
  assert.equal(linesOf(client, /^c0 sent /).length, 4, 'a send completes only once it is in the peer queue');
  server.send('resume');
  const got = await waitCount(server, /^recv /, 20);
  assert.deepEqual(got.map((l) => l.split(' ')[3]), Array.from({ length: 20 }, (_, i) => `f${i}`));
  const sent = await waitCount(client, /^c0 sent /, 20);
  assert.deepEqual(sent.map((l) => l.split(' ')[2]), Array.from({ length: 20 }, (_, i) => `f${i}`));
  assert.equal(linesOf(client, /send-error/).length, 0);
});

test('when the sides disagree, the connection carries the smaller max_msg_size and each receiver its own queue depth', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { maxMsgSize: 100, recvQueueSize: 3 });
  await server.waitFor(/^started/);
  const client = startClient(t, dir, { maxMsgSize: 200, recvQueueSize: 5 });
  await client.waitFor(/^c0 state STARTING->RUNNING$/);
  const id = (await server.waitFor(/^connect (\d+)/))[1]!;
  client.send(`send 0 ${'a'.repeat(150)}`);
  assert.match((await client.waitFor(/^c0 error (.*)$/))[1]!, /^DOCA_ERROR_INVALID_VALUE .*150-byte message exceeds the connection's max_msg_size 100 \(the smaller of this side's 200/);
  client.send(`send 0 ${'b'.repeat(100)}`);
  await server.waitFor(/^recv \d+ 100 b+$/);
  server.send(`send ${id} ${'c'.repeat(101)}`);
  assert.match((await server.waitFor(/^error (.*)$/))[1]!, /^DOCA_ERROR_INVALID_VALUE .*101-byte message exceeds the connection's max_msg_size 100 \(DOCA/);
  client.send('send 0 ');
  await server.waitFor(/^recv \d+ 0 $/);
  // Queue depths: the server's queue takes 3, the client's 5.
  client.send('pause');
  await waitCount(client, /^paused$/, 1);
  server.send(`burst ${id} 8 s`);
  await waitCount(server, /^sent s/, 5);
  await held(server, '', 3);
  assert.equal(linesOf(server, /^sent s/).length, 5);
  server.send('pause');
  await waitCount(server, /^paused$/, 1);
  client.send('resume');
  client.send('burst 0 8 k');
  await waitCount(client, /^c0 sent k/, 3);
  await held(client, 'c0 ', 5);
  assert.equal(linesOf(client, /^c0 sent k/).length, 3);
  server.send('resume');
  await waitCount(client, /^c0 sent k/, 8);
  await waitCount(server, /^sent s/, 8);
  await waitCount(client, /^c0 recv 2 s\d$/, 8);
});
