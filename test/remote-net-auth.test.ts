/**
 * Remote net proves both ends: an impostor listening on the blob's address (here, on the port of an
 * exporter that has gone) cannot prove the event's secret, so the client refuses it with
 * AUTHENTICATION before any request, and no value of the impostor's is ever returned. A blob of another
 * wire version is refused when the handle is made.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { openDeviceByPci } from '../src/core/dev.js';
import { DocaError } from '../src/core/error.js';
import { useFabric } from '../src/fabric/fabric.js';
import { SyncEventRemoteNet } from '../src/sync-event/remote-net.js';
import { frame, NetFrame, NetReader, NONCE_SIZE } from '../src/sync-event/remote-net-wire.js';
import { SyncEvent } from '../src/sync-event/sync-event.js';
import { tempFabricDir } from './helpers/fabric.js';

async function exported(): Promise<{ event: SyncEvent; blob: Uint8Array; port: number }> {
  const event = SyncEvent.create();
  event.addPublisherLocationRemoteNet();
  event.addSubscriberLocationCpu(openDeviceByPci('b1:00.0'));
  event.start();
  const blob = await event.exportToRemoteNet();
  return { event, blob, port: new DataView(blob.buffer, blob.byteOffset).getUint16(24 + 64, true) };
}

test('an impostor on the exporter\'s address is refused with AUTHENTICATION; none of its values is returned', { timeout: 20_000 }, async (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const { event, blob, port } = await exported();
  const honest = SyncEventRemoteNet.createFromExport(blob);
  await honest.updateSet(7n);
  assert.equal(await honest.get(), 7n, 'the real exporter is admitted');
  honest.destroy();
  event.stop();
  event.destroy(); // its listener closes: the port is free for someone else

  // The impostor answers as the exporter would, but can only guess the server's proof.
  const seen: string[] = [];
  const impostor = createServer((socket: Socket) => {
    const reader = new NetReader();
    socket.on('error', () => {});
    socket.write(frame(NetFrame.CHALLENGE, (v) => new Uint8Array(v.buffer, v.byteOffset, NONCE_SIZE).fill(1), NONCE_SIZE));
    socket.on('data', (chunk: Buffer) => {
      for (const body of reader.push(chunk) ?? []) {
        seen.push(body[0] === NetFrame.AUTH ? 'auth' : body[0] === NetFrame.REQUEST ? 'request' : `type ${body[0]}`);
        if (body[0] !== NetFrame.AUTH) continue;
        socket.write(frame(NetFrame.ADMITTED, (v) => new Uint8Array(v.buffer, v.byteOffset, 32).fill(9), 32));
        socket.write(frame(NetFrame.REPLY, (v) => (v.setUint32(0, 1, true), v.setBigUint64(6, 666n, true)), 14));
      }
    });
  });
  impostor.listen({ host: '127.0.0.1', port, exclusive: true });
  await once(impostor, 'listening');
  t.after(() => impostor.close());
  const fooled = SyncEventRemoteNet.createFromExport(blob, undefined, { timeoutMs: 5000 });
  t.after(() => fooled.destroy());
  await assert.rejects(fooled.get(), (err: unknown) => DocaError.is(err, 'AUTHENTICATION') && /could not prove it holds the event's secret/.test((err as Error).message));
  await assert.rejects(fooled.updateSet(1n), (err: unknown) => DocaError.is(err, 'AUTHENTICATION'), 'and again on the next try');
  assert.deepEqual([...new Set(seen)], ['auth'], 'no request ever reached the impostor');
});

test('a net blob of another wire version is refused (UNSUPPORTED_VERSION) when the handle is made', { timeout: 20_000 }, async (t) => {
  useFabric({ dir: tempFabricDir(t) });
  const { event, blob } = await exported();
  t.after(() => (event.stop(), event.destroy()));
  const other = new Uint8Array(blob);
  new DataView(other.buffer).setUint16(24 + 98, 1, true);
  new DataView(other.buffer).setUint32(12, crc32(other.subarray(16)), true);
  assert.throws(() => SyncEventRemoteNet.createFromExport(other), (err: unknown) => DocaError.is(err, 'UNSUPPORTED_VERSION') && /wire version 1, this side 2/.test((err as Error).message));
});
