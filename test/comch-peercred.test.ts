/**
 * The comch handshake trusts the kernel, not the frames, about who is at the other end: a HELLO or a
 * WELCOME that names another live process (its real pid and start time, so every other check passes)
 * is refused with NOT_PERMITTED, because SO_PEERCRED on the socket names the process that really
 * connected or listens.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ComchClient } from '../src/comch/client.js';
import { SERVER_KIND, serverKey } from '../src/comch/server.js';
import { encodeHello, encodeWelcome, FrameReader, FrameType } from '../src/comch/wire.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError, DocaErrorCode } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { currentFabric, useFabric } from '../src/fabric/fabric.js';
import { type ProcessIdentity, processIdentity } from '../src/fabric/liveness.js';
import { listenService } from '../src/fabric/rendezvous.js';
import { startServer } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

/** A live process of this user to impersonate (its pid and start time are real), killed when the test ends. */
async function bystander(t: TestContext): Promise<ProcessIdentity> {
  const child: ChildProcess = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => void child.kill('SIGKILL'));
  let id: ProcessIdentity | undefined;
  await until(() => (id = processIdentity(child.pid!)) !== undefined, () => `sleep (pid ${child.pid}) to be in /proc`, 10_000);
  return id!;
}

test('a HELLO that names another live process is refused with NOT_PERMITTED (SO_PEERCRED)', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const other = await bystander(t);
  const server = startServer(t, dir, { name: 'peercred' });
  await server.waitFor(/^started DOCA_SUCCESS$/);
  const path = join(dir, readdirSync(dir).find((n) => n.startsWith('comch-srv.'))!);
  const hello = encodeHello({ pid: other.pid, start: other.start, clientPci: '0000:b1:00.0', armPci: '0000:03:00.0', maxMsgSize: 4080, recvQueueSize: 16, name: new TextEncoder().encode('peercred') });
  const answer = await new Promise<number | 'closed'>((resolve) => {
    const socket = connect(path);
    const reader = new FrameReader();
    socket.on('connect', () => socket.write(hello));
    socket.on('data', (chunk) => {
      const [frame] = reader.push(chunk);
      if (frame?.type === FrameType.REJECT) resolve(frame.reject.code);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve('closed'));
  });
  assert.equal(answer, DocaErrorCode.DOCA_ERROR_NOT_PERMITTED);
  await until(() => server.stderr.join('').includes(`its socket belongs to pid ${process.pid}, not to the pid ${other.pid} it claims`), () => `the server's log names both pids: ${server.stderr.join('')}`, 10_000);
});

test('a WELCOME that names another live process is refused with NOT_PERMITTED, and the client does not retry', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const other = await bystander(t);
  const name = 'peercred';
  let knocks = 0;
  // A fake server in this process claims to be the bystander, granting what the HELLO asked for; the
  // segment it names is never opened.
  const fake = listenService(currentFabric(), SERVER_KIND, serverKey('0000:03:00.0', '0000:b1:00.0', new TextEncoder().encode(name)), 'test', (socket) => {
    const reader = new FrameReader();
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      const [frame] = reader.push(chunk);
      if (frame?.type !== FrameType.HELLO) return;
      knocks++;
      const { maxMsgSize, recvQueueSize } = frame.hello;
      const segment = { pid: other.pid, fd: 3, start: other.start, size: 1 << 20, token: new Uint8Array(16) };
      socket.write(encodeWelcome({ pid: other.pid, start: other.start, segment, msgSize: maxMsgSize, c2sSlots: 16, s2cSlots: recvQueueSize, connectionId: 0 }));
    });
  });
  t.after(() => fake.close());
  const pe = ProgressEngine.create();
  const client = ComchClient.create(openDeviceByPci('b1:00.0'), name);
  pe.connectCtx(client);
  client.taskSendSetConf(() => {}, () => {}, 4);
  client.start();
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  const error = await client.connected({ timeoutMs: 10_000 }).then(() => undefined, (err: unknown) => err);
  ac.abort();
  await driving;
  assert.ok(DocaError.is(error, 'NOT_PERMITTED'), String(error));
  assert.match((error as Error).message, new RegExp(`WELCOME does not say who it is: its socket belongs to pid ${process.pid}, not to the pid ${other.pid} it claims`));
  assert.equal(client.state, 'IDLE', 'the start failed for good');
  assert.equal(knocks, 1, 'a lie is the same on every retry: the client knocked once');
  client.destroy();
  pe.destroy();
});
