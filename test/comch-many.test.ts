/** Many clients on one server, each with its own ordered stream; the max_clients capability. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { linesOf, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

test('64 clients (8 processes of 8) against one server, each stream in order', { timeout: 90_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { echo: true, numTasks: 256 });
  await server.waitFor(/^started/);
  const procs = Array.from({ length: 8 }, () => startClient(t, dir, { clients: 8, numTasks: 16 }));
  await Promise.all(procs.map((p) => waitCount(p, /^c\d state STARTING->RUNNING$/, 8, 60_000)));
  await waitCount(server, /^connect /, 64, 30_000);
  const perClient = 40;
  procs.forEach((p, pi) => p.send(`burst * ${perClient} p${pi}m`));
  for (const [pi, p] of procs.entries()) {
    await waitCount(p, /^c\d recv /, 8 * perClient, 60_000);
    for (let c = 0; c < 8; c++) {
      const got = linesOf(p, new RegExp(`^c${c} recv `)).map((l) => l.split(' ')[3]);
      assert.deepEqual(got, Array.from({ length: perClient }, (_, i) => `echo:p${pi}m${i}`), `process ${pi} client ${c}`);
    }
  }
  await waitCount(server, /^recv /, 64 * perClient); // its stdout may trail the echoes the clients already have
  assert.equal(linesOf(server, /error/).length, 0);
});

test('the server refuses clients beyond max_clients; the refused client fails to IDLE', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const topology = join(dir, 'topo.json');
  writeFileSync(topology, JSON.stringify({ caps: { comch: { maxClients: 2 } }, dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0' }] }] }));
  const env = { SOFTDPU_TOPOLOGY: topology };
  const server = startServer(t, dir, {}, env);
  await server.waitFor(/^started/);
  const two = startClient(t, dir, { clients: 2 }, env);
  await waitCount(two, /^c\d state STARTING->RUNNING$/, 2);
  const third = startClient(t, dir, {}, env);
  await third.waitFor(/^c0 state STOPPING->IDLE$/);
  assert.deepEqual(linesOf(third, /^c0 state/), ['c0 state IDLE->STARTING', 'c0 state STARTING->STOPPING', 'c0 state STOPPING->IDLE']);
  // The server's log comes on its own pipe, which may trail the client's lines.
  await until(() => /already has its maximum of 2 clients/.test(server.stderr.join('')), () => `the server to log the refusal: ${server.stderr.join('')}`);
  assert.equal((await waitCount(server, /^connect /, 2)).length, 2);
});
