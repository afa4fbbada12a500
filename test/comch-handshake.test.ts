/** Forged and malformed handshakes are refused or dropped with an SDK log line; the server serves on. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ComchClient } from '../src/comch/client.js';
import { SERVER_KIND, serverKey } from '../src/comch/server.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { ProgressEngine } from '../src/core/pe.js';
import { currentFabric, useFabric } from '../src/fabric/fabric.js';
import { listenService } from '../src/fabric/rendezvous.js';
import { DocaError, DocaErrorCode } from '../src/core/error.js';
import { self } from '../src/fabric/liveness.js';
import { encodeHello, encodeReject, encodeWelcome, FrameReader, WIRE_MAGIC, WIRE_VERSION, WireError } from '../src/comch/wire.js';
import { knock, startClient, startServer } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

const hello = (over: Partial<Parameters<typeof encodeHello>[0]> = {}) =>
  encodeHello({ pid: self.pid, start: self.start, clientPci: '0000:b1:00.0', armPci: '0000:03:00.0', maxMsgSize: 4080, recvQueueSize: 16, name: new TextEncoder().encode('guarded'), ...over });

test('bad handshakes are refused or dropped, logged, and other clients are still served', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const server = startServer(t, dir, { name: 'guarded', echo: true });
  await server.waitFor(/^started DOCA_SUCCESS$/);
  const sock = readdirSync(dir).find((n) => n.startsWith('comch-srv.'))!;
  const path = join(dir, sock);

  const wrongVersion = hello();
  wrongVersion.writeUInt16LE(9, 8);
  const badMagic = hello();
  badMagic.writeUInt32LE(WIRE_MAGIC ^ 1, 4);
  const truncated = hello().subarray(0, 30);
  const huge = Buffer.alloc(8);
  huge.writeUInt32LE(1 << 30, 0);
  const unknownType = hello();
  unknownType.writeUInt16LE(77, 10);
  const lyingLength = hello();
  lyingLength.writeUInt16LE(200, 12 + 56); // name length longer than the frame

  assert.equal(await knock(path, wrongVersion), DocaErrorCode.DOCA_ERROR_UNSUPPORTED_VERSION);
  assert.equal(await knock(path, hello({ clientPci: '0000:b1:00.2' })), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED);
  assert.equal(await knock(path, hello({ armPci: '0000:04:00.0' })), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED);
  assert.equal(await knock(path, hello({ name: new TextEncoder().encode('guarded2') })), DocaErrorCode.DOCA_ERROR_NOT_FOUND);
  assert.equal(await knock(path, hello({ pid: 0x7ffffff0 })), DocaErrorCode.DOCA_ERROR_INVALID_VALUE);
  assert.equal(await knock(path, hello({ maxMsgSize: 1 << 30 })), DocaErrorCode.DOCA_ERROR_INVALID_VALUE);
  assert.equal(await knock(path, badMagic), 'closed');
  assert.equal(await knock(path, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), 'closed');
  assert.equal(await knock(path, truncated, true), 'closed');
  assert.equal(await knock(path, huge), 'closed');
  assert.equal(await knock(path, unknownType), 'closed');
  assert.equal(await knock(path, lyingLength), 'closed');

  const client = startClient(t, dir, { name: 'guarded', sendOnRunning: 'still here' });
  await client.waitFor(/^c0 recv \d+ echo:still here$/);
  // The server's own lines come on its own pipe, in its order: a connection event of a knock would be
  // before the message of the real client.
  await server.waitFor(/^recv \d+ \d+ still here$/);
  assert.equal(server.lines.filter((l) => l.startsWith('connect')).length, 1, 'only the real client produced a connection event');
  const log = server.stderr.join('');
  for (const expected of [
    new RegExp(`handshake version 9 is not ${WIRE_VERSION}`),
    /claiming function "0000:b1:00\.2" knocked; this server serves 0000:b1:00\.0 only/,
    /looked for Arm device "0000:04:00\.0"/,
    /asked for another server name/,
    /named a process \(pid \d+\) that does not run/,
    /max_msg_size 1073741824/,
    /not a comch handshake frame \(bad magic\)/,
    /truncated/,
    /exceeds the 8192-byte limit/,
    /unknown handshake frame type 77/,
    /HELLO frame has \d+ bytes for a 200-byte name/,
  ]) {
    assert.match(log, expected);
  }
  assert.ok(log.split('\n').every((line) => line === '' || /\[DOCA\]\[WARN\]\[comch_server\]/.test(line) || /\[DOCA\]/.test(line)), 'every line is an SDK log line');
});

test('a WELCOME naming an impossible segment is a WireError like any bad frame, not a DocaError from inside the reader', () => {
  const welcome = encodeWelcome({ pid: 1, start: 0, segment: { pid: 1, fd: 3, start: 0, size: 4096, token: new Uint8Array(16) }, msgSize: 64, c2sSlots: 4, s2cSlots: 4, connectionId: 0 });
  welcome.writeDoubleLE(64, 12 + 16 + 16); // the descriptor's size: no segment is only its header
  assert.throws(() => new FrameReader().push(welcome), (err: unknown) => err instanceof WireError && /WELCOME frame: .*impossible values \(pid 1, size 64\)/.test(err.message));
});

/**
 * A fake server at the real server's socket answers every HELLO with `answer`: a client must fail its
 * start with DOCA's error, once, instead of retrying forever (the frame would be the same every time).
 */
async function clientAgainst(t: TestContext, answer: Buffer): Promise<{ error: unknown; knocks: number }> {
  const dir = tempFabricDir(t);
  useFabric({ dir });
  const name = 'impostor';
  let knocks = 0;
  const fake = listenService(currentFabric(), SERVER_KIND, serverKey('0000:03:00.0', '0000:b1:00.0', new TextEncoder().encode(name)), 'test', (socket) => {
    socket.on('error', () => {});
    socket.once('data', () => {
      knocks++;
      socket.end(answer);
    });
  });
  t.after(() => fake.close());
  const pe = ProgressEngine.create();
  const client = ComchClient.create(openDeviceByPci('b1:00.0'), name);
  pe.connectCtx(client);
  client.taskSendSetConf(() => {}, () => {}, 4);
  client.eventMsgRecvRegister(() => {});
  client.start();
  const ac = new AbortController();
  const driving = pe.run({ signal: ac.signal, until: () => false });
  const error = await client.connected({ timeoutMs: 5000 }).then(
    () => undefined,
    (err: unknown) => err,
  );
  // Stays: that no knock follows is seen only by waiting. A client that retried (every 100 ms) would knock
  // again within this; on a slow machine it might be missed, never wrongly reported.
  await new Promise((r) => setTimeout(r, 300));
  ac.abort();
  await driving;
  assert.equal(client.state, 'IDLE');
  client.destroy();
  pe.destroy();
  return { error, knocks };
}

test('a server of another handshake version: the client fails with NOT_SUPPORTED naming the versions, once', { timeout: 60_000 }, async (t) => {
  const reject = encodeReject({ code: DocaErrorCode.DOCA_ERROR_UNSUPPORTED_VERSION, reason: `handshake version ${WIRE_VERSION} is not ${WIRE_VERSION - 1}` });
  reject.writeUInt16LE(WIRE_VERSION - 1, 8); // what a server of the previous version sends
  const { error, knocks } = await clientAgainst(t, reject);
  assert.ok(DocaError.is(error, 'NOT_SUPPORTED'), String(error));
  assert.match((error as Error).message, new RegExp(`handshake version ${WIRE_VERSION - 1} is not ${WIRE_VERSION}`));
  assert.equal(knocks, 1);
});

test('a server that answers garbage: the client fails with CONNECTION_ABORTED, once', { timeout: 60_000 }, async (t) => {
  const { error, knocks } = await clientAgainst(t, Buffer.from('\x10\x00\x00\x00HTTP/1.1 400 Bad'));
  assert.ok(DocaError.is(error, 'CONNECTION_ABORTED'), String(error));
  assert.match((error as Error).message, /bad handshake from the server "impostor": not a comch handshake frame \(bad magic\)/);
  assert.equal(knocks, 1);
});
