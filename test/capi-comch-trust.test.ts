/**
 * softdpu's C library trusts nothing a peer writes and loses nothing when a peer dies, under
 * AddressSanitizer and UBSan (the library and the C peer, test/fixtures/capi/comch-peer, built with them):
 * DOCA's contract for devices, engines, contexts and tasks, call by call (test/fixtures/capi/lifecycle.c);
 * a C pair runs clean, leaks included; bad handshake frames to a C server and bad answers to a C client
 * are refused with DOCA's errors; corrupt ring indices, lengths, types and control records (positions near
 * 2^32) end that one connection with CONNECTION_ABORTED while another is served on; and a peer killed with
 * SIGKILL at connect, at send and at stop leaves a survivor that fails its held tasks with DOCA's errors,
 * hangs nowhere, and keeps no descriptor, mapping or fabric entry of it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { SERVER_KIND, serverKey } from '../src/comch/server.js';
import { encodeHello, encodeReady, encodeReject, encodeWelcome, WIRE_MAGIC, WIRE_VERSION } from '../src/comch/wire.js';
import { DocaErrorCode } from '../src/core/error.js';
import { processIdentity, self } from '../src/fabric/liveness.js';
import { Segment } from '../src/fabric/segment.js';
import { assertExit, type Child, runCli, spawnChild } from './helpers/child.js';
import { assertRan, buildPeer, capiFixtures, ccBuild, logged, runProgram, startProgram, writeSdk } from './helpers/capi.js';
import { knock, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

const SANITIZE = '-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all -g';
const ASAN = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };
const NEAR_WRAP = { SOFTDPU_START_POSITION: String(2 ** 32 - 2) };

function assertClean(child: Child, what: string): void {
  assert.doesNotMatch(child.stderr.join(''), /Sanitizer|runtime error/, `${what}: ${child.stderr.join('').slice(-4000)}`);
}

/** What a live C process holds: descriptors, connection segments mapped, and peers' doorbells mapped. */
function holdings(pid: number): { fds: number; conns: number; bells: number } {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n');
  return {
    fds: readdirSync(`/proc/${pid}/fd`).length,
    conns: maps.filter((l) => l.includes('memfd:softdpu.conn')).length,
    bells: maps.filter((l) => l.includes('memfd:softdpu.bell') && !l.includes(`softdpu.bell.${pid} `)).length,
  };
}

/** Waits until `pid` holds what it held at `baseline` again (its connections finished and let go). */
async function backTo(pid: number, baseline: ReturnType<typeof holdings>): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const now = holdings(pid);
    if (now.fds === baseline.fds && now.conns === 0 && now.bells === 0) return;
    if (Date.now() > deadline) assert.deepEqual(now, { ...baseline, conns: 0, bells: 0 }, `pid ${pid} let go of everything`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `softdpu fabric clean`, then: no entry of `dead` is left. */
async function sweptOf(t: TestContext, dir: string, dead: number[]): Promise<void> {
  const r = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(r.exit.code, 0, r.stderr);
  const left = readdirSync(dir).filter((n) => dead.some((pid) => n.includes(`.${pid}-`)));
  assert.deepEqual(left, [], 'nothing of the killed processes is left after a sweep');
}

test('the C library under AddressSanitizer: hostile peers and killed peers', { timeout: 170_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: SANITIZE });
  const peer = await buildPeer(t, tree, 'comch-peer-asan', SANITIZE.split(' '));
  const start = (t: TestContext, args: string[], dir: string, env: Record<string, string> = {}) => startProgram(t, peer, args, dir, { ...ASAN, ...env });

  await t.test('DOCA\'s contract call by call: sides, names, mandatory configuration, start codes, IN_USE, pools, stop flushes', async (t) => {
    const lifecycle = await ccBuild(t, tree, 'host', join(capiFixtures, 'lifecycle.c'), 'lifecycle', SANITIZE.split(' '));
    const dir = tempFabricDir(t);
    const r = assertRan(await runProgram(t, lifecycle, [], dir, { ...ASAN, SOFTDPU_FABRIC: dir }), 'lifecycle');
    assert.deepEqual(r.stdout.split('\n').filter((l) => l.startsWith('FAIL')), []);
    assert.match(r.stdout, /^lifecycle: 0 failure\(s\)$/m);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, r.stderr);
  });

  await t.test('a C server and a C client run clean, leaks included', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, ['server', 'name=clean', 'echo', 'quiet', 'tasks=128'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, ['client', 'name=clean', 'mode=notify', 'recvq=10', 'quiet', 'tasks=128'], dir);
    await client.waitFor(/^state STARTING->RUNNING$/);
    client.send('burst 0 100 m');
    await waitCount(client, /^sent \d+$/, 100);
    client.send('stop');
    await client.waitFor(/^state STOPPING->IDLE$/);
    await server.waitFor(/^disconnect 1 1$/);
    client.send('exit');
    server.send('exit');
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assertClean(client, 'client');
    assertClean(server, 'server');
    // Nothing left but the two processes' epitaphs (docs/protocol.md#epitaphs).
    assert.deepEqual(readdirSync(dir).map((n) => n.replace(/^stats\.\d+-\d+\.\d+\.exited$/, 'epitaph')), ['epitaph', 'epitaph']);
  });

  await t.test('bad handshakes to a C server are refused or dropped, logged; a real client is still served', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, ['server', 'name=guarded', 'echo'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const path = join(dir, readdirSync(dir).find((n) => n.startsWith('comch-srv.'))!);
    const hello = (over: Partial<Parameters<typeof encodeHello>[0]> = {}) =>
      encodeHello({ pid: self.pid, start: self.start, clientPci: '0000:b1:00.0', armPci: '0000:03:00.0', maxMsgSize: 4080, recvQueueSize: 16, name: new TextEncoder().encode('guarded'), ...over });
    const patched = (at: number, value: number, bytes = 2) => {
      const frame = hello();
      if (bytes === 2) frame.writeUInt16LE(value, at);
      else frame.writeUInt32LE(value, at);
      return frame;
    };
    const parent = processIdentity(process.ppid)!;
    const huge = Buffer.alloc(8);
    huge.writeUInt32LE(1 << 30, 0);
    const cases: [string, Buffer, number | 'closed', boolean?][] = [
      ['another version', patched(8, 9), DocaErrorCode.DOCA_ERROR_UNSUPPORTED_VERSION],
      ['a foreign function', hello({ clientPci: '0000:b1:00.2' }), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED],
      ['the short form of the function', hello({ clientPci: 'b1:00.0', maxMsgSize: 1 << 30 }), DocaErrorCode.DOCA_ERROR_INVALID_VALUE],
      ['another Arm device', hello({ armPci: '0000:04:00.0' }), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED],
      ['another name', hello({ name: new TextEncoder().encode('guarded2') }), DocaErrorCode.DOCA_ERROR_NOT_FOUND],
      ['a process that does not run', hello({ pid: 0x7ffffff0 }), DocaErrorCode.DOCA_ERROR_INVALID_VALUE],
      ['another live process (SO_PEERCRED)', hello({ pid: parent.pid, start: parent.start }), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED],
      ['a start time that is not an integer', hello({ start: 0.5 }), DocaErrorCode.DOCA_ERROR_INVALID_VALUE],
      ['sizes beyond the caps', hello({ recvQueueSize: 1 << 20 }), DocaErrorCode.DOCA_ERROR_INVALID_VALUE],
      ['a zero message size', hello({ maxMsgSize: 0 }), DocaErrorCode.DOCA_ERROR_INVALID_VALUE],
      ['bad magic', patched(4, WIRE_MAGIC ^ 1, 4), 'closed'],
      ['not a frame at all', Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), 'closed'],
      ['a truncated frame, then end-of-file', hello().subarray(0, 30), 'closed', true],
      ['a length beyond 8192', huge, 'closed'],
      ['an unknown type', patched(10, 77), 'closed'],
      ['a name length that lies', patched(12 + 56, 200), 'closed'],
      ['READY first', encodeReady(), 'closed'],
      ['a REJECT from a client', encodeReject({ code: 1, reason: 'no' }), 'closed'],
    ];
    for (const [what, bytes, expected, end] of cases) assert.equal(await knock(path, bytes, end), expected, what);
    for (const re of [new RegExp(`handshake version 9 is not ${WIRE_VERSION}`), /claiming function "0000:b1:00\.2" knocked/, /looked for Arm device "0000:04:00\.0"/, /asked for another server name/, /named a process \(pid \d+\) that does not run/, /does not say who it is: its socket belongs to pid \d+/, /max_msg_size 1073741824/, /bad magic/, /truncated/, /exceeds the 8192-byte limit/, /unknown handshake frame type 77/, /HELLO frame has \d+ bytes for a 200-byte name/, /unexpected handshake frame type 3/, /unexpected handshake frame type 4/]) {
      await logged(server, re);
    }
    assert.deepEqual(server.lines.filter((l) => l.startsWith('connect')), [], 'no refused peer became a connection');
    const client = start(t, ['client', 'name=guarded', 'hello=still here'], dir);
    await client.waitFor(/^recv 0 15 echo:still here$/);
    client.send('exit');
    server.send('exit');
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assertClean(server, 'server');
  });

  await t.test('bad answers to a C client fail its start with DOCA\'s errors, once', async (t) => {
    const dir = tempFabricDir(t);
    const name = new TextEncoder().encode('fake');
    const path = join(dir, `${SERVER_KIND}.${self.pid}-${self.start}.${serverKey('0000:03:00.0', '0000:b1:00.0', name)}.sock`);
    let answer: (socket: Socket) => void = () => {};
    const fake = createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => answer(socket));
    });
    await new Promise<void>((resolve) => fake.listen(path, resolve));
    t.after(() => new Promise<void>((resolve) => fake.close(() => resolve())));
    const mem = Segment.create('mem', 4096);
    const liar = Segment.create('conn', 4096);
    t.after(() => (mem.close(), liar.close()));
    const parent = processIdentity(process.ppid)!;
    const welcome = (over: Partial<Parameters<typeof encodeWelcome>[0]> = {}) =>
      encodeWelcome({ pid: self.pid, start: self.start, segment: liar.descriptor, msgSize: 4080, c2sSlots: 64, s2cSlots: 64, connectionId: 0, ...over });
    const garbage = Buffer.alloc(20);
    garbage.writeUInt32LE(16, 0);
    const otherVersion = encodeReject({ code: 2, reason: 'x' });
    otherVersion.writeUInt16LE(WIRE_VERSION - 1, 8);
    const impossible = welcome();
    impossible.writeUInt32LE(0, 12 + 16);
    const cases: [string, Buffer, RegExp][] = [
      ['garbage', garbage, /bad handshake from the server "fake": not a comch handshake frame \(bad magic\)/],
      ['another version', otherVersion, new RegExp(`speaks another comch handshake version: handshake version ${WIRE_VERSION - 1} is not ${WIRE_VERSION}`)],
      ['a REJECT', encodeReject({ code: DocaErrorCode.DOCA_ERROR_NOT_PERMITTED, reason: 'go away' }), /refused the connection \(DOCA_ERROR_NOT_PERMITTED\): go away/],
      ['a REJECT with a code DOCA does not have', encodeReject({ code: 999, reason: 'odd' }), /refused the connection \(DOCA_ERROR_CONNECTION_ABORTED\): odd/],
      ['a WELCOME naming another process', welcome({ pid: parent.pid, start: parent.start }), /does not say who it is/],
      ['a WELCOME with an impossible segment', impossible, /impossible values/],
      ['a WELCOME with sizes not asked for', welcome({ s2cSlots: 3 }), /a connection this client did not ask for/],
      ['a segment of another kind', welcome({ segment: mem.descriptor }), /does not open \(DOCA_ERROR_INVALID_VALUE\)/],
      ['a segment that is not a connection', welcome(), /does not have the announced layout/],
    ];
    for (const [what, frame, re] of cases) {
      answer = (socket) => socket.end(frame);
      const client = start(t, ['client', 'name=fake'], dir);
      await client.waitFor(/^state STOPPING->IDLE$/);
      await logged(client, re);
      assert.equal(client.lines.filter((l) => l.includes('RUNNING')).length, 0, what);
      client.send('exit');
      await assertExit(client, 0);
      assertClean(client, what);
    }
  });

  await t.test('corrupt rings end that connection with CONNECTION_ABORTED; another is served on', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, ['server', 'name=victim', 'echo', 'recvq=4'], dir, NEAR_WRAP);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const honest = startClient(t, dir, { name: 'victim' });
    await server.waitFor(/^connect 1 1$/);
    const attacks = ['tail', 'behind', 'length', 'type', 'control', 'head'];
    for (const [i, attack] of attacks.entries()) {
      const hostile = spawnChild(t, 'capi/hostile', ['client', 'victim', attack], { env: { SOFTDPU_FABRIC: dir } });
      await hostile.waitFor(new RegExp(`^attacked ${attack}$`));
      await server.waitFor(new RegExp(`^disconnect ${i + 2} 1$`));
      hostile.kill();
    }
    await logged(server, /corrupted its message queue/);
    await logged(server, /corrupted a record \(unknown type 9\)/);
    await logged(server, /corrupted its control queue/);
    await logged(server, /corrupted its receive queue index/);
    const ignored = spawnChild(t, 'capi/hostile', ['client', 'victim', 'index'], { env: { SOFTDPU_FABRIC: dir } });
    await ignored.waitFor(/^attacked index$/);
    await logged(server, /announced consumer entry 9999, which is not one of its consumers; ignoring it/);
    honest.send('send 0 still here');
    await honest.waitFor(/^c0 recv \d+ echo:still here$/);
    assert.equal(server.lines.filter((l) => l === `disconnect ${attacks.length + 2} 1`).length, 0, 'an ignored record ends nothing');
    server.send('exit');
    await assertExit(server, 0);
    assertClean(server, 'server');

    for (const attack of ['tail', 'length', 'head']) {
      const dir2 = tempFabricDir(t);
      const hostile = spawnChild(t, 'capi/hostile', ['server', 'victim', attack], { env: { SOFTDPU_FABRIC: dir2, ...NEAR_WRAP } });
      await hostile.waitFor(/^started/);
      const client = start(t, ['client', 'name=victim', 'quiet'], dir2);
      await client.waitFor(/^state STARTING->RUNNING$/);
      if (attack === 'head') client.send('burst 0 8 x');
      await client.waitFor(/^state STOPPING->IDLE$/);
      await logged(client, /corrupted/);
      // The sends the corruption caught held back fail with the connection's end.
      if (attack === 'head') assert.ok(client.lines.some((l) => /^send-error \d+ DOCA_ERROR_CONNECTION_ABORTED$/.test(l)), client.lines.join('\n'));
      client.send('exit');
      await assertExit(client, 0);
      assertClean(client, `client, ${attack}`);
    }
  });

  await t.test('a C client killed at connect: the C server serves on and keeps nothing of it', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, ['server', 'name=kill', 'echo'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const baseline = holdings(server.pid);
    const dead: number[] = [];
    for (const when of [/^started/, /^state STARTING->RUNNING$/, /^started/, /^state STARTING->RUNNING$/]) {
      const client = start(t, ['client', 'name=kill'], dir);
      await client.waitFor(when);
      dead.push(client.pid);
      client.kill('SIGKILL');
      await client.exited;
    }
    const later = start(t, ['client', 'name=kill', 'hello=after'], dir);
    await later.waitFor(/^recv 0 10 echo:after$/);
    later.send('exit');
    await assertExit(later, 0);
    await backTo(server.pid, baseline);
    await sweptOf(t, dir, dead);
    server.send('exit');
    await assertExit(server, 0);
    assertClean(server, 'server');
  });

  await t.test('killed at send: held tasks fail with CONNECTION_RESET on the survivor, C or TypeScript', async (t) => {
    // A C server holds echoes for a TypeScript client that reads none, and the client dies.
    const dir = tempFabricDir(t);
    const server = start(t, ['server', 'name=held', 'echo'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const baseline = holdings(server.pid);
    const mute = startClient(t, dir, { name: 'held', recv: false, recvQueueSize: 4 });
    await mute.waitFor(/^c0 state STARTING->RUNNING$/);
    mute.send('burst 0 12 x');
    await waitCount(server, /^recv 1 /, 12);
    await waitCount(server, /^sent \d+$/, 4);
    mute.kill('SIGKILL');
    const failed = await waitCount(server, /^send-error \d+ /, 8);
    assert.ok(failed.every((l) => l.endsWith(' DOCA_ERROR_CONNECTION_RESET')), failed.join('\n'));
    await server.waitFor(/^disconnect 1 1$/);
    await backTo(server.pid, baseline);
    // A TypeScript server holds messages for a C client that stopped progressing, and the client dies.
    const dir2 = tempFabricDir(t);
    const tsServer = startServer(t, dir2, { name: 'held' });
    await tsServer.waitFor(/^started DOCA_SUCCESS$/);
    const paused = start(t, ['client', 'name=held', 'recvq=4'], dir2);
    await paused.waitFor(/^state STARTING->RUNNING$/);
    await tsServer.waitFor(/^connect /);
    paused.send('pause');
    await paused.waitFor(/^paused$/);
    tsServer.send('burst * 10 y');
    await waitCount(tsServer, /^sent /, 4);
    paused.kill('SIGKILL');
    const tsFailed = await waitCount(tsServer, /^send-error /, 6);
    assert.ok(tsFailed.every((l) => l.startsWith('send-error DOCA_ERROR_CONNECTION_RESET')), tsFailed.join('\n'));
    await tsServer.waitFor(/^disconnect /);
    await sweptOf(t, dir2, [paused.pid]);
    server.send('exit');
    await assertExit(server, 0);
    assertClean(server, 'server');
  });

  await t.test('killed at stop: a stopping survivor reaches IDLE, and a peer that dies while stopping is seen', async (t) => {
    // The C server stops while its C client does not progress; the client is killed: IDLE, no linger left.
    const dir = tempFabricDir(t);
    const server = start(t, ['server', 'name=stop'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const baseline = holdings(server.pid);
    const client = start(t, ['client', 'name=stop'], dir);
    await server.waitFor(/^connect 1 1$/);
    client.send('pause');
    await client.waitFor(/^paused$/);
    server.send('stop');
    assert.equal((await server.waitFor(/^stop-result (.*)$/))[1], 'DOCA_ERROR_IN_PROGRESS');
    client.kill('SIGKILL');
    await server.waitFor(/^state STOPPING->IDLE$/);
    await server.waitFor(/^disconnect 1 1$/);
    await backTo(server.pid, { ...baseline, fds: baseline.fds - 2 }); // its listening and lock sockets went with the stop
    await sweptOf(t, dir, [client.pid]);
    // A C client killed while it stops: the TypeScript server sees the connection end.
    const dir2 = tempFabricDir(t);
    const tsServer = startServer(t, dir2, { name: 'stop', paused: false });
    await tsServer.waitFor(/^started DOCA_SUCCESS$/);
    const leaver = start(t, ['client', 'name=stop'], dir2);
    await leaver.waitFor(/^state STARTING->RUNNING$/);
    tsServer.send('pause');
    await tsServer.waitFor(/^paused$/);
    leaver.send('stop');
    await leaver.waitFor(/^stop-result DOCA_ERROR_IN_PROGRESS$/);
    leaver.kill('SIGKILL');
    tsServer.send('resume');
    await tsServer.waitFor(/^disconnect /);
    await sweptOf(t, dir2, [leaver.pid]);
    server.send('exit');
    await assertExit(server, 0);
    assertClean(server, 'server');
  });
});
