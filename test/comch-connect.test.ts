/** Comch control path: connecting across processes, late servers, the security rule, counters. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Child } from './helpers/child.js';
import { startClient, startServer } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

/** The client's SDK log at DEBUG: each look for its server is a line, the proof that it kept trying. */
const DEBUG = { SOFTDPU_SDK_LOG_LEVEL: 'DEBUG' };

/** Waits until `client` has looked for its server and found none `times` times. */
async function retried(client: Child, times: number): Promise<void> {
  const count = () => client.stderr.join('').split('\n').filter((l) => /no such server .* yet; retrying/.test(l)).length;
  await until(() => count() >= times, () => `the client to look for its server ${times} times (${count()} so far); stderr: ${client.stderr.join('').slice(-1000)}`);
}

test('a client and a server in two processes connect and exchange messages both ways', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { echo: true });
  assert.equal((await server.waitFor(/^started (.*)$/))[1], 'DOCA_SUCCESS');
  const client = startClient(t, dir, { sendOnRunning: 'hello' });
  assert.equal((await client.waitFor(/^c0 started (.*)$/))[1], 'DOCA_ERROR_IN_PROGRESS');
  await client.waitFor(/^c0 state STARTING->RUNNING$/);
  const connect = await server.waitFor(/^connect (\d+) (\w+) server=(\w+) client=(\w+)$/);
  assert.deepEqual(connect.slice(2), ['true', 'true', 'true']);
  assert.match((await server.waitFor(/^recv \d+ .*$/))[0], /^recv \d+ 5 hello$/);
  await client.waitFor(/^c0 recv 10 echo:hello$/);
  assert.ok(client.lines.indexOf('c0 state IDLE->STARTING') < client.lines.indexOf('c0 state STARTING->RUNNING'));
  client.send('counters 0');
  assert.equal((await client.waitFor(/^c0 counters (.*)$/))[1], '1 5 1 10');
  server.send(`counters ${connect[1]}`);
  assert.equal((await server.waitFor(/^counters (.*)$/))[1], '1 10 1 5');
});

test('a client started before its server connects once the server is up', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const client = startClient(t, dir, { sendOnRunning: 'early bird' }, DEBUG);
  await client.waitFor(/^c0 started DOCA_ERROR_IN_PROGRESS$/);
  await retried(client, 3);
  assert.ok(!client.lines.includes('c0 state STARTING->RUNNING'));
  const server = startServer(t, dir);
  await client.waitFor(/^c0 state STARTING->RUNNING$/);
  await server.waitFor(/^recv \d+ 10 early bird$/);
});

test('a client whose server never appears stays STARTING and can be stopped back to IDLE', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const client = startClient(t, dir, {}, DEBUG);
  await client.waitFor(/^c0 started/);
  await retried(client, 2);
  client.send('stop 0');
  assert.equal((await client.waitFor(/^c0 stop-result (.*)$/))[1], 'DOCA_SUCCESS');
  await client.waitFor(/^c0 state STARTING->IDLE$/);
  client.send('send 0 too late');
  assert.match((await client.waitFor(/^c0 error (.*)$/))[1]!, /^DOCA_ERROR_BAD_STATE .*not RUNNING/);
});

test('a client on b1:00.2 never reaches a server bound to b1:00.0, and that server sees nothing', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const pf = startServer(t, dir, { name: 'shared-name', rep: 'b1:00.0' });
  await pf.waitFor(/^started/);
  const vfClient = startClient(t, dir, { dev: 'b1:00.2', name: 'shared-name' }, DEBUG);
  await vfClient.waitFor(/^c0 started/);
  await retried(vfClient, 3); // it looked for its server three times while the PF's was up
  assert.ok(!vfClient.lines.some((l) => l.includes('RUNNING')), 'the VF client must not connect');
  assert.ok(!pf.lines.some((l) => l.startsWith('connect')), 'the PF server must see no connection');
  const vf = startServer(t, dir, { name: 'shared-name', rep: 'b1:00.2' });
  await vf.waitFor(/^started DOCA_SUCCESS$/);
  await vfClient.waitFor(/^c0 state STARTING->RUNNING$/);
  await vf.waitFor(/^connect /);
  assert.ok(!pf.lines.some((l) => l.startsWith('connect')));
  const pfClient = startClient(t, dir, { dev: 'b1:00.0', name: 'shared-name' });
  await pfClient.waitFor(/^c0 state STARTING->RUNNING$/);
  await pf.waitFor(/^connect /);
});

test('the server name must match exactly', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { name: 'exact' });
  await server.waitFor(/^started/);
  const client = startClient(t, dir, { name: 'exac' }, DEBUG);
  await client.waitFor(/^c0 started/);
  await retried(client, 3);
  assert.ok(!client.lines.some((l) => l.includes('RUNNING')));
  assert.ok(!server.lines.some((l) => l.startsWith('connect')));
});
