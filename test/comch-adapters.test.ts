/** Promise and async-iterator adapters over the comch callback core. */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { logBackendCreateWithBuf } from '../src/core/log.js';
import { comchPair, until } from './helpers/comch-pair.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** The pair of every test here: receive queues of 4; `withRecvCb` registers the server's receive callback. */
async function pair(t: TestContext, name: string, withRecvCb = false) {
  const p = await comchPair(t, name, { recvQueueSize: 4, beforeStart: (server) => void (withRecvCb && server.eventMsgRecvRegister(() => {})) });
  return { ...p, conn: p.clientConn };
}

test('connected() and send() are promises; server.messages() iterates and break releases without loss', { timeout: 60_000 }, async (t) => {
  const { server, conn } = await pair(t, 'adapters');
  assert.equal(conn.getClientCtx()!.serverName, 'adapters');
  for (const text of ['one', 'two', 'three']) await conn.send(enc(text));
  const seen: string[] = [];
  for await (const { connection, data } of server.messages()) {
    assert.equal(connection.getServerCtx(), server);
    seen.push(dec(data));
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen, ['one', 'two']);
  await conn.send(enc('four'));
  const rest: string[] = [];
  for await (const { data } of server.messages()) {
    rest.push(dec(data));
    if (rest.length === 2) break;
  }
  assert.deepEqual(rest, ['three', 'four'], 'the message left when the first iterator broke off was not lost');
});

test('a connection iterator answers; an AbortSignal ends a waiting iterator; send rejects with the DOCA error', { timeout: 60_000 }, async (t) => {
  const { server, conn } = await pair(t, 'adapters2');
  const echo = (async () => {
    for await (const { connection, data } of server.messages()) {
      await connection.send(enc(`echo:${dec(data)}`));
      if (dec(data) === 'last') break;
    }
  })();
  const replies = conn.messages();
  await conn.send(enc('hi'));
  assert.equal(dec((await replies.next()).value!), 'echo:hi');
  await conn.send(enc('last'));
  assert.equal(dec((await replies.next()).value!), 'echo:last');
  await echo;
  await replies.return!();
  const ac = new AbortController();
  const waiting = conn.messages({ signal: ac.signal }).next();
  ac.abort(new Error('no more waiting'));
  await assert.rejects(waiting, /no more waiting/);
  await assert.rejects(conn.send(enc('x'.repeat(5000))), (err: unknown) => DocaError.is(err, 'INVALID_VALUE'));
  // One iterator at a time: the first is granted, a second while it lives is BAD_STATE.
  const it = conn.messages();
  assert.throws(() => conn.messages(), (err: unknown) => DocaError.is(err, 'BAD_STATE'));
  await it.return!();
});

test('iterators are refused when a receive callback is registered (callback or iterator, never both)', { timeout: 60_000 }, async (t) => {
  const { server } = await pair(t, 'adapters3', true);
  assert.throws(() => server.messages(), (err: unknown) => DocaError.is(err, 'BAD_STATE') && /receive callback is registered/.test((err as Error).message));
});

test('await using stops, waits for IDLE and destroys', { timeout: 60_000 }, async (t) => {
  const { server, client, stopDriving } = await pair(t, 'adapters4');
  await stopDriving();
  {
    await using c = client;
    assert.equal(c.state, 'RUNNING');
  }
  assert.equal(client.isDestroyed, true);
  await server.stopAndWait();
  assert.equal(server.state, 'IDLE');
});

test('messages sent before the peer left are yielded before the end, both ways; a side that stops drops its unread ones and still stops', { timeout: 60_000 }, async (t) => {
  const { server, client, conn } = await pair(t, 'adapters4');
  await until(() => server.connections.length === 1, 'the server to see the client');
  // The client sends and leaves; the server's iterator, not waiting meanwhile, still gets everything.
  const serverConn = server.connections[0]!;
  const it = serverConn.messages({ timeoutMs: 5000 });
  for (const text of ['one', 'two', 'three']) await conn.send(enc(text));
  await client.stopAndWait({ timeoutMs: 5000 });
  const seen: string[] = [];
  for await (const data of it) seen.push(dec(data));
  assert.deepEqual(seen, ['one', 'two', 'three']);
  await until(() => server.connections.length === 0, 'the connection to go once read');
  // The server sends and disconnects; the client stays RUNNING until its iterator took the messages.
  client.start();
  const conn2 = await client.connected({ timeoutMs: 10_000 });
  await until(() => server.connections.length === 1, 'the server to see the client');
  for (const text of ['four', 'five']) await server.connections[0]!.send(enc(text));
  server.disconnect(server.connections[0]!);
  // The server cuts the client off once its linger ran out: the client then knows the connection ended.
  await until(() => !conn2.isConnected, 'the client to see the server end the connection');
  assert.equal(client.state, 'RUNNING', 'unread messages keep the connection');
  const got: string[] = [];
  for await (const data of conn2.messages({ timeoutMs: 5000 })) got.push(dec(data));
  assert.deepEqual(got, ['four', 'five']);
  await client.waitForState('IDLE', { timeoutMs: 5000 });
  // Unread when this side stops: dropped (with a warning), and the stop completes.
  client.start();
  await client.connected({ timeoutMs: 10_000 });
  await until(() => server.connections.length === 1, 'the server to see the client');
  await server.connections[0]!.send(enc('never read'));
  const warnings = logLines(t);
  await client.stopAndWait({ timeoutMs: 5000 });
  assert.match(warnings.join(''), /\[WARN\]\[comch\] connection \d+: 1 message\(s\) from the peer \(pid \d+\) were not read before this side stopped; dropping them/);
});

test('a server that never reads what a departed client sent still stops (the unread messages are dropped)', { timeout: 60_000 }, async (t) => {
  const { server, client, conn } = await pair(t, 'adapters5');
  await until(() => server.connections.length === 1, 'the server to see the client');
  for (const text of ['one', 'two']) await conn.send(enc(text));
  const serverConn = server.connections[0]!;
  await client.stopAndWait({ timeoutMs: 5000 });
  await until(() => !serverConn.isConnected, 'the server to see the client leave');
  assert.equal(server.connections.length, 1, 'kept while its messages are unread');
  const warnings = logLines(t);
  await server.stopAndWait({ timeoutMs: 5000 });
  assert.match(warnings.join(''), /connection \d+: 2 message\(s\) from the peer \(pid \d+\) were not read before this side stopped/);
});

/** The SDK's log lines from now until the test ends. */
function logLines(t: TestContext): string[] {
  const lines: string[] = [];
  const backend = logBackendCreateWithBuf((line) => lines.push(line), { sdk: true });
  t.after(() => backend.destroy());
  return lines;
}

test('server.messages() also yields what a departed client sent, with the connection it came on', { timeout: 60_000 }, async (t) => {
  const { server, client, conn } = await pair(t, 'adapters6');
  await until(() => server.connections.length === 1, 'the server to see the client');
  const serverConn = server.connections[0]!;
  for (const text of ['one', 'two']) await conn.send(enc(text));
  await client.stopAndWait({ timeoutMs: 5000 });
  const seen: string[] = [];
  for await (const { connection, data } of server.messages({ timeoutMs: 5000 })) {
    assert.equal(connection, serverConn);
    seen.push(dec(data));
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen, ['one', 'two']);
  await until(() => server.connections.length === 0, 'the connection to go once read');
});
