/**
 * The comch control path of softdpu's C library against the TypeScript side and against itself, with
 * the scriptable C peer (test/fixtures/capi/comch-peer) on private fabrics: a topology file read as the
 * TypeScript side reads it, max clients and the fabric location checks, server_disconnect's AGAIN, a
 * client on a foreign function, one server name as one lock across both implementations, a TypeScript
 * consumer registered by the C side, 64 C clients on
 * one TypeScript server, ring positions across 2^32 with a slot count that is not a power of two, busy
 * progress that makes no syscall when there is nothing to do, a client that progresses once a second, and
 * several threads of one process, each with its own engine.
 * The library and every C program are built with AddressSanitizer and UBSan: any report a program
 * printed fails the test.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { encodeHello } from '../src/comch/wire.js';
import { DocaErrorCode } from '../src/core/error.js';
import { self } from '../src/fabric/liveness.js';
import { assertExit, type Child, type Ran, runCli, spawnChild } from './helpers/child.js';
import { assertRan, buildPeer, capiFixtures, ccBuild, logged, runProgram, startProgram, writeSdk } from './helpers/capi.js';
import { knock, linesOf, startClient, startServer, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

const DEBUG = { SOFTDPU_SDK_LOG_LEVEL: '60' };
const SANITIZE = '-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all -g';
const ASAN = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };
const REPORT = /Sanitizer|runtime error/;

/** Two DPUs, a VF, an SF, an emulated function, a second Arm device and capability overrides (docs/topology.md). */
const TOPOLOGY = {
  caps: { comch: { maxMsgSize: 256 } },
  dpus: [
    { name: 'left', arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0' }, { pci: 'b1:00.2', type: 'VF' }, { pci: 'b1:00.5', type: 'SF', sfnum: 7 }] },
    {
      name: 'right',
      arm: [{ pci: '04:00.0' }, { pci: '0000:04:00.1', mac: 'AA:bb:cc:dd:ee:ff' }],
      host: [{ pci: 'c1:00.0', iface: 'custom0' }, { pci: 'c1:00.1', arm: '04:00.1', emulated: true }],
      caps: { comch: { maxClients: 1 } },
    },
  ],
};

test('the comch control path between C and TypeScript, with the scriptable C peer', { timeout: 300_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: SANITIZE });
  const peer = await buildPeer(t, tree, 'comch-peer-asan', SANITIZE.split(' '));
  // Every C program's stderr, checked for sanitizer reports once the subtests are over.
  const started: Child[] = [];
  const ran: Ran[] = [];
  const start = (t: TestContext, path: string, args: string[], dir: string, env: Record<string, string> = {}): Child => {
    const child = startProgram(t, path, args, dir, { ...ASAN, ...env });
    started.push(child);
    return child;
  };
  const run = async (t: TestContext, path: string, args: string[], dir: string, env: Record<string, string> = {}, timeoutMs?: number): Promise<Ran> => {
    const r = await runProgram(t, path, args, dir, { ...ASAN, ...env }, timeoutMs);
    ran.push(r);
    return r;
  };

  await t.test('devices, representors and caps of a topology file are the TypeScript side\'s; a bad one and bad fabric locations are refused', async (t) => {
    const dir = tempFabricDir(t);
    const topology = join(dir, 'topology.json');
    writeFileSync(topology, JSON.stringify(TOPOLOGY));
    const devices = await ccBuild(t, tree, 'host', join(capiFixtures, 'devices.c'), 'devices', SANITIZE.split(' '));
    const c = JSON.parse(assertRan(await run(t, devices, [], dir, { SOFTDPU_FABRIC: join(dir, 'f'), SOFTDPU_TOPOLOGY: topology }), 'devices').stdout) as { devices: Record<string, unknown>[] };
    const ts = await runCli(t, ['devices', '--json', '--fabric', join(dir, 'f'), '--topology', topology]);
    assert.equal(ts.exit.code, 0, ts.stderr);
    const pick = (d: Record<string, unknown>) => {
      const caps = (d.caps as { comch?: Record<string, unknown> } | undefined)?.comch ?? (d.comch as Record<string, unknown>);
      const reps = (d.representors as Record<string, unknown>[]).map(({ pci, funcType, iface, vuid, emulated }) => ({ pci, funcType, iface, vuid, emulated }));
      const { maxNameLen, maxMsgSize, maxRecvQueueSize, maxClients, maxSendTasks } = caps;
      return { pci: d.pci, side: d.side, ibdev: d.ibdev, iface: d.iface, mac: d.mac, vhcaId: d.vhcaId, reps, comch: { maxNameLen, maxMsgSize, maxRecvQueueSize, maxClients, maxSendTasks } };
    };
    assert.deepEqual(c.devices.map(pick), (JSON.parse(ts.stdout) as { devices: Record<string, unknown>[] }).devices.map(pick));
    // The right DPU takes one client: a second is refused, and says why.
    const server = start(t, peer, ['server', 'name=one', 'dev=04:00.0', 'rep=c1:00.0'], dir, { SOFTDPU_TOPOLOGY: topology });
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const first = start(t, peer, ['client', 'name=one', 'dev=c1:00.0'], dir, { SOFTDPU_TOPOLOGY: topology });
    await server.waitFor(/^connect 1 1$/);
    const second = start(t, peer, ['client', 'name=one', 'dev=c1:00.0'], dir, { SOFTDPU_TOPOLOGY: topology });
    await second.waitFor(/^state STOPPING->IDLE$/);
    await logged(second, /refused the connection \(DOCA_ERROR_CONNECTION_ABORTED\): the server already has its maximum of 1 clients/);
    await first.waitFor(/^state STARTING->RUNNING$/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ dpus: [{ arm: [{ pci: '03:00' }] }] }));
    const refused = assertRan(await run(t, peer, ['server'], dir, { SOFTDPU_FABRIC: join(dir, 'g'), SOFTDPU_TOPOLOGY: bad }), 'bad topology', 1);
    assert.equal(refused.stdout.trim(), 'error setup DOCA_ERROR_BAD_CONFIG');
    assert.match(refused.stderr, /\$\.dpus\[0\]\.arm\[0\]\.pci: "03:00" is not a PCI address/);
    // Found by test/fuzz/topology.c: an sfnum beyond 2^64 was cast to an integer (undefined behaviour).
    writeFileSync(bad, `{"dpus": [{"arm": [{"pci": "03:00.0"}], "host": [{"pci": "b1:00.5", "type": "SF", "sfnum": 4${'4'.repeat(80)}7}]}]}`);
    const huge = assertRan(await run(t, peer, ['server'], dir, { SOFTDPU_FABRIC: join(dir, 'h'), SOFTDPU_TOPOLOGY: bad }), 'huge sfnum', 1);
    assert.equal(huge.stdout.trim(), 'error setup DOCA_ERROR_BAD_CONFIG');
    assert.match(huge.stderr, /\$\.dpus\[0\]\.host\[0\]\.sfnum: is only for SF functions and must be an integer in \[0, 2\^53 - 1\]/);
    const proc = assertRan(await run(t, peer, ['server'], dir, { SOFTDPU_FABRIC: '/proc/self/sdpu' }), 'procfs', 1);
    assert.equal(proc.stdout.trim(), 'error setup DOCA_ERROR_NOT_SUPPORTED');
    mkdirSync(join(dir, 'open'), { mode: 0o755 });
    chmodSync(join(dir, 'open'), 0o755);
    const open = assertRan(await run(t, peer, ['server'], dir, { SOFTDPU_FABRIC: join(dir, 'open') }), 'mode 0755', 1);
    assert.equal(open.stdout.trim(), 'error setup DOCA_ERROR_NOT_PERMITTED');
    assert.match(open.stderr, /has mode 0755; it must be private \(0700\)/);
  });

  await t.test('doca_comch_server_disconnect answers AGAIN while the client\'s queue is full; the client then ends NOT_CONNECTED', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, peer, ['server', 'name=bye'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, peer, ['client', 'name=bye', 'recvq=4', 'quiet'], dir, DEBUG);
    await server.waitFor(/^connect 1 1$/);
    client.send('pause');
    await client.waitFor(/^paused$/);
    server.send('burst 1 4 z');
    await waitCount(server, /^sent \d+$/, 4);
    server.send('disconnect 1');
    assert.equal((await server.waitFor(/^disconnect-result (.*)$/))[1], 'DOCA_ERROR_AGAIN');
    client.send('resume');
    await client.waitFor(/^resumed$/);
    const deadline = Date.now() + 20_000;
    while (!server.lines.includes('disconnect-result DOCA_SUCCESS')) {
      assert.ok(Date.now() < deadline, 'the disconnect was queued once the client read');
      server.send('disconnect 1');
      await new Promise((r) => setTimeout(r, 50));
    }
    await client.waitFor(/^state STOPPING->IDLE$/);
    await logged(client, /a connection to pid \d+ ended \(DOCA_ERROR_NOT_CONNECTED\)/);
    await server.waitFor(/^disconnect 1 1$/);
  });

  await t.test('a client on a foreign function never reaches the server; a HELLO claiming that function is refused', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, peer, ['server', 'name=shared'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const vf = start(t, peer, ['client', 'name=shared', 'dev=b1:00.2'], dir, DEBUG);
    await vf.waitFor(/^started DOCA_ERROR_IN_PROGRESS$/);
    const retried = () =>
      vf.waitForStderr((text) => text.split('\n').filter((l) => /no such server on 0000:03:00\.0 for 0000:b1:00\.2 yet; retrying/.test(l)).length >= 3, 'three retries');
    await retried();
    assert.deepEqual(linesOf(vf, /RUNNING/), [], 'the VF client must not connect');
    const socket = join(dir, readdirSync(dir).find((n) => n.startsWith('comch-srv.'))!);
    const hello = encodeHello({ pid: self.pid, start: self.start, clientPci: '0000:b1:00.2', armPci: '0000:03:00.0', maxMsgSize: 4080, recvQueueSize: 16, name: new TextEncoder().encode('shared') });
    assert.equal(await knock(socket, hello), DocaErrorCode.DOCA_ERROR_NOT_PERMITTED);
    assert.deepEqual(linesOf(server, /^connect/), [], 'the server saw no connection');
    const pf = start(t, peer, ['client', 'name=shared', 'hello=from the PF'], dir);
    await server.waitFor(/^recv 1 11 from the PF$/);
    await pf.waitFor(/^sent 1$/);
  });

  await t.test('a server name is one lock across both implementations (fabric id, abstract socket): the second is ALREADY_EXIST', async (t) => {
    const dir = tempFabricDir(t);
    const ts = startServer(t, dir, { name: 'dup' });
    await ts.waitFor(/^started DOCA_SUCCESS$/);
    const c = start(t, peer, ['server', 'name=dup'], dir);
    await c.waitFor(/^started DOCA_ERROR_ALREADY_EXIST$/);
    await logged(c, /a comch server named "dup" already runs on 0000:03:00\.0 for 0000:b1:00\.0/);
    const dir2 = tempFabricDir(t);
    const first = start(t, peer, ['server', 'name=dup'], dir2);
    await first.waitFor(/^started DOCA_SUCCESS$/);
    const second = startServer(t, dir2, { name: 'dup' });
    await second.waitFor(/^start-error DOCA_ERROR_ALREADY_EXIST /);
  });

  await t.test('a TypeScript consumer on a C server\'s connection starts (the C side registers it), with its events on the C side', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, peer, ['server', 'name=fp'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const options = { side: 'client', name: 'fp', consumers: 1, producers: 0, peerConsumers: 0, peerProducers: 0, messages: 0, size: 64, postBufs: 1, mode: 'busy', workers: false };
    const node = spawnChild(t, 'fastpath-node', [JSON.stringify(options)], { env: { SOFTDPU_FABRIC: dir } });
    await node.waitFor(/^consumer-ready 1$/);
    await server.waitFor(/^consumer 1$/);
    await node.waitFor(/^done$/);
    await server.waitFor(/^consumer-expired 1$/);
    node.send('exit');
    await node.waitFor(/^stopped IDLE$/);
    await server.waitFor(/^disconnect 1 1$/);
  });

  await t.test('64 C clients on one TypeScript server: every one connects and gets its echo', async (t) => {
    // The clients sleep on their notification handle as 64 real programs would: 64 busy pollers on 2 CPUs
    // leave the server little CPU (in one CI run a busy client was still STARTING after 60 s). A client
    // that does not connect says why on stderr (DEBUG: each attempt and its failure).
    const dir = tempFabricDir(t);
    const server = startServer(t, dir, { name: 'many', echo: true });
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const clients = Array.from({ length: 64 }, (_, i) => start(t, peer, ['client', 'name=many', `hello=c${i}`, 'mode=notify'], dir, DEBUG));
    await Promise.all(clients.map((c, i) => c.waitFor(new RegExp(`^recv 0 ${`echo:c${i}`.length} echo:c${i}$`), 60_000)));
    await waitCount(server, /^connect /, 64);
    for (const c of clients) c.send('exit');
    await Promise.all(clients.map((c) => assertExit(c, 0, [server])));
    await waitCount(server, /^disconnect /, 64, 30_000);
  });

  await t.test('ring positions across 2^32 with 10 slots: every message arrives in order, both ways', async (t) => {
    const near = { SOFTDPU_START_POSITION: String(2 ** 32 - 6) };
    const expected = Array.from({ length: 120 }, (_, i) => `echo:p${i}`);
    // A C server made the rings; a TypeScript client sends through them and gets its echoes back.
    const dir = tempFabricDir(t);
    const cServer = start(t, peer, ['server', 'name=wrap', 'echo', 'recvq=10', 'quiet', 'tasks=256'], dir, near);
    await cServer.waitFor(/^started DOCA_SUCCESS$/);
    const tsClient = startClient(t, dir, { name: 'wrap', recvQueueSize: 10 });
    await tsClient.waitFor(/^c0 state STARTING->RUNNING$/);
    tsClient.send('burst 0 120 p');
    const got = await waitCount(tsClient, /^c0 recv \d+ echo:p/, 120, 30_000);
    assert.deepEqual(got.map((l) => l.split(' ')[3]), expected);
    // A TypeScript server made them; a C client sends.
    const dir2 = tempFabricDir(t);
    const tsServer = startServer(t, dir2, { name: 'wrap', echo: true, recvQueueSize: 10 }, near);
    await tsServer.waitFor(/^started DOCA_SUCCESS$/);
    const cClient = start(t, peer, ['client', 'name=wrap', 'recvq=10', 'tasks=256'], dir2);
    await cClient.waitFor(/^state STARTING->RUNNING$/);
    cClient.send('burst 0 120 p');
    const echoes = await waitCount(cClient, /^recv 0 \d+ echo:p/, 120, 30_000);
    assert.deepEqual(echoes.map((l) => l.split(' ')[3]), expected);
  });

  await t.test('packed records of mixed sizes in a small ring go back to its start by the same rule in C and TypeScript, both ways', async (t) => {
    // max msg 64, 10 slots: an area of ceil(11 x 72 / 64) x 64 = 832 bytes. Messages of 51 to 53 bytes
    // (64-byte records) and echoes of 56 to 58 (64 or 72) wrap it every dozen records, the gap left at
    // its end changing with the mix; a reader whose offset strayed would read garbage or corruption.
    const prefix = 'w'.repeat(50);
    const expected = Array.from({ length: 250 }, (_, i) => `echo:${prefix}${i}`); // the C peer sends a burst with one task each: fewer than its 256
    const dir = tempFabricDir(t);
    const cServer = start(t, peer, ['server', 'name=pack', 'echo', 'recvq=10', 'maxmsg=64', 'quiet', 'tasks=256'], dir);
    await cServer.waitFor(/^started DOCA_SUCCESS$/);
    const tsClient = startClient(t, dir, { name: 'pack', recvQueueSize: 10, maxMsgSize: 64 });
    await tsClient.waitFor(/^c0 state STARTING->RUNNING$/);
    tsClient.send(`burst 0 250 ${prefix}`);
    const got = await waitCount(tsClient, /^c0 recv \d+ echo:w/, 250, 30_000);
    assert.deepEqual(got.map((l) => l.split(' ')[3]), expected);
    const dir2 = tempFabricDir(t);
    const tsServer = startServer(t, dir2, { name: 'pack', echo: true, recvQueueSize: 10, maxMsgSize: 64 });
    await tsServer.waitFor(/^started DOCA_SUCCESS$/);
    const cClient = start(t, peer, ['client', 'name=pack', 'recvq=10', 'maxmsg=64', 'tasks=256'], dir2);
    await cClient.waitFor(/^state STARTING->RUNNING$/);
    cClient.send(`burst 0 250 ${prefix}`);
    const echoes = await waitCount(cClient, /^recv 0 \d+ echo:w/, 250, 30_000);
    assert.deepEqual(echoes.map((l) => l.split(' ')[3]), expected);
  });

  await t.test('one message at a time past 64 KiB of ring: each implementation reads the other\'s early WRAP', async (t) => {
    // 1 KiB messages, 64 slots of 4080: each ring's area is 266 KiB. One at a time, each ring is empty
    // when the next is written, so past 64 KiB (after some 64 messages) both writers go back early. What
    // fails here is a reader that does not follow (checked: the C reader ignoring WRAP); that a writer
    // goes back at all is ring.test.ts's (TypeScript) and the C benchmark's page faults (C).
    const big = 'v'.repeat(1000);
    const dir = tempFabricDir(t);
    const cServer = start(t, peer, ['server', 'name=early', 'echo', 'recvq=64', 'quiet', 'tasks=16'], dir);
    await cServer.waitFor(/^started DOCA_SUCCESS$/);
    const tsClient = startClient(t, dir, { name: 'early', recvQueueSize: 64 });
    await tsClient.waitFor(/^c0 state STARTING->RUNNING$/);
    const dir2 = tempFabricDir(t);
    const tsServer = startServer(t, dir2, { name: 'early', echo: true, recvQueueSize: 64 });
    await tsServer.waitFor(/^started DOCA_SUCCESS$/);
    const cClient = start(t, peer, ['client', 'name=early', 'recvq=64', 'tasks=16'], dir2);
    await cClient.waitFor(/^state STARTING->RUNNING$/);
    for (let i = 0; i < 160; i++) {
      tsClient.send(`send 0 ${big}${i}`);
      cClient.send(`send 0 ${big}${i}`);
      await tsClient.waitFor(new RegExp(`^c0 recv \\d+ echo:v+${i}$`));
      await cClient.waitFor(new RegExp(`^recv 0 \\d+ echo:v+${i}$`));
    }
  });

  await t.test('doca_pe_progress makes no syscall when there is nothing to do (polling, and after a sleep)', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, peer, ['server', 'name=quiet', 'syscheck=1000000'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const tsClient = startClient(t, dir, { name: 'quiet' });
    await tsClient.waitFor(/^c0 state STARTING->RUNNING$/);
    assert.equal((await server.waitFor(/^syscalls (.*)$/, 60_000))[1], '0', 'a polling server, one connection');
    const dir2 = tempFabricDir(t);
    const tsServer = startServer(t, dir2, { name: 'quiet' });
    await tsServer.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, peer, ['client', 'name=quiet', 'mode=notify', 'syscheck=1000000'], dir2);
    assert.equal((await client.waitFor(/^syscalls (.*)$/, 60_000))[1], '0', 'a client that slept on its notification fd');
  });

  await t.test('several threads, each with its own engine and client, against a TypeScript and a C echo server; one sync event they all add to', async (t) => {
    const threads = await ccBuild(t, tree, 'host', join(capiFixtures, 'threads.c'), 'threads-asan', ['-pthread', ...SANITIZE.split(' ')]);
    for (const impl of ['TypeScript', 'C']) {
      const dir = tempFabricDir(t);
      const server = impl === 'C' ? start(t, peer, ['server', 'name=threads', 'echo', 'quiet=1', 'mode=notify'], dir) : startServer(t, dir, { name: 'threads', echo: true });
      await server.waitFor(/^started DOCA_SUCCESS$/);
      const ran = await run(t, threads, ['8', '200'], dir, { SOFTDPU_FABRIC: dir }, 120_000);
      assertRan(ran, `threads against the ${impl} server`);
      const lines = ran.stdout.trim().split('\n');
      for (let i = 0; i < 8; i++) assert.ok(lines.includes(`thread ${i} ok 200`), `${impl}: thread ${i}\n${ran.stdout}`);
      assert.ok(lines.includes('event 1600') && lines.includes('done 0'), `${impl}:\n${ran.stdout}`);
      await waitCount(server, /^disconnect /, 8, 30_000);
    }
  });

  await t.test('a client that progresses once a second connects within a few calls', async (t) => {
    const dir = tempFabricDir(t);
    const server = start(t, peer, ['server', 'name=sparse', 'echo'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = start(t, peer, ['client', 'name=sparse', 'mode=sparse', 'hello=slow'], dir);
    const calls = Number((await client.waitFor(/^progress-calls (\d+)$/, 30_000))[1]);
    assert.ok(calls <= 5, `RUNNING after ${calls} progress calls`);
    await client.waitFor(/^recv 0 9 echo:slow$/, 30_000);
  });

  // The subtests' programs are gone (killed at each one's end, their output drained).
  await Promise.all(started.map((child) => child.exited));
  for (const child of started) assert.doesNotMatch(child.stderr.join(''), REPORT, `pid ${child.pid}: ${child.stderr.join('').slice(-4000)}`);
  for (const r of ran) assert.doesNotMatch(r.stderr, REPORT, r.stderr.slice(-4000));
});
