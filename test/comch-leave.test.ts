/**
 * A side that leaves finishes when its peer closes its socket, or after the linger (2 s) at the most,
 * whichever side it is: a client that stops while its server is frozen (SIGSTOP: alive, but never
 * answering) reaches IDLE, and the server, once it runs again, sees the client gone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ComchClient } from '../src/comch/client.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { startServer } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

test('a client that stops while its server is frozen reaches IDLE after the linger; the server then sees it gone', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { name: 'frozen' });
  await server.waitFor(/^started/);
  useFabric({ dir });
  const pe = ProgressEngine.create();
  const client = ComchClient.create(openDeviceByPci('b1:00.0'), 'frozen');
  pe.connectCtx(client);
  client.taskSendSetConf(() => {}, () => {}, 4);
  client.start();
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  const thaw = () => {
    try {
      process.kill(server.pid, 'SIGCONT');
    } catch {
      // it is gone already
    }
  };
  t.after(async () => {
    ac.abort();
    await driving;
    thaw();
  });
  await client.connected({ timeoutMs: 20_000 });
  await server.waitFor(/^connect /, 20_000);
  process.kill(server.pid, 'SIGSTOP');
  // Without the linger the stop waited for the frozen server for ever (TIME_OUT here).
  await client.stopAndWait({ timeoutMs: 30_000 });
  assert.equal(client.state, 'IDLE');
  client.destroy();
  thaw();
  await server.waitFor(/^disconnect /, 20_000);
});
